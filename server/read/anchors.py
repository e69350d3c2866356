"""Anchored reads: each line shown as its number and a short hash of its content.

`line_format` (a read's parameter, else the setting) chooses how text lines are shown:
`cat-n` as numbering.py says, or `anchors`, `12ab<tab>text`: line 12, whose content
hashes to "ab". The form was chosen by measuring tokens on real files
(bench/bench_edits.py): the number and two letters with no separator cost 7% fewer
tokens than `cat -n`'s padded number, `12#ab<tab>` about as many, `12#ab|` 5% more (the
letters are never digits, so where the number ends is never in doubt). An edit names
lines by these anchors (edit/anchors.py) instead of repeating them.

Every read of numbered lines, in either format, adds what it showed to the session's
shown lines (state/shown_lines.py), what an anchor is checked against: as a view of the
snapshot of that content, hashed only when an edit asks, or line by line when no
snapshot keeps it (a range of a file too large to hold), hashed when an edit asks or
the session's next such read comes. A line shown cut or with
escaped line breaks does not count, and in the anchors format it is shown as `12--`,
with no anchor: the agent never saw it as it is.

The stub rule holds with one more condition: a re-read in the anchors format is a stub
only when the session got anchors for those lines of that content; a stub of lines it
only saw as `cat -n` (or a diff of a changed file, whose lines it holds under their
old numbers) is answered with the lines instead.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import zlib
from collections.abc import Callable, Iterable
from itertools import accumulate
from typing import Protocol

import attrs

from ..hints import again
from ..protocol import ChangedResult, ReadParams, ReadResult, TextFile, TextResult, UnchangedResult
from ..state.shown_lines import ShownLines
from ..state.snapshots import Snapshots
from . import room
from .services import ReadServices
from .tokens import TokenCounter

LINE_FORMATS = ("cat-n", "anchors")
# Two letters of this alphabet (no i, l or o, which read as digits): 529 hashes.
_ALPHABET = "abcdefghjkmnpqrstuvwxyz"
NO_ANCHOR = "--"  # a line shown cut or escaped: it has no anchor
_CUT_MARK = re.compile(r" … \[line cut: \d+ more characters\]$")


AnchorServices = ReadServices  # the read's services hold the shown lines


def line_hash(line: str) -> int:
    """What a line's content is checked by: 64 bits of BLAKE2b under a key drawn when
    the process starts, so no file can be written to collide with another line (str's
    own hash would do, unless PYTHONHASHSEED fixes its key)."""
    digest = hashlib.blake2b(
        line.encode("utf-8", "surrogatepass"), digest_size=8, key=_LINE_KEY
    ).digest()
    return int.from_bytes(digest, "big")


_LINE_KEY = os.urandom(16)


def short_hash(line: str) -> str:
    """The two letters an anchor shows of a line's content (the same in every process:
    the agent may hold them across a restart; they only catch a slip, see line_hash)."""
    found = _SHORT.get(line)
    if found is None:
        value = zlib.crc32(line.encode("utf-8", "surrogatepass"))
        first, second = divmod(value % (len(_ALPHABET) ** 2), len(_ALPHABET))
        found = _ALPHABET[first] + _ALPHABET[second]
        if len(_SHORT) >= _SHORT_KEPT:
            _SHORT.clear()
        if len(line) <= _SHORT_LINE_CHARS:
            _SHORT[line] = found
    return found


# The hashes of lines shown lately: a re-read of a file shows the same lines again.
_SHORT: dict[str, str] = {}
_SHORT_KEPT = 100_000
_SHORT_LINE_CHARS = 200


def anchor(number: int, line: str) -> str:
    """The anchor of line `number` whose content is `line` (without its line ending)."""
    return f"{number}{short_hash(line)}"


def row(number: int, line: str, exact: bool = True) -> str:
    """Line `number` as an anchored read shows it."""
    return f"{anchor(number, line) if exact else f'{number}{NO_ANCHOR}'}\t{line}"


def read(services: AnchorServices, params: ReadParams) -> ReadResult:
    """`readkeeper/read` in the line format asked for (read/pipeline.py does the read)."""
    from . import pipeline

    anchored = (params.line_format or services.settings.line_format) == "anchors"
    result = pipeline.read(services, params)
    if params.estimate:
        return result
    if anchored and not params.force and _lacks_anchors(services, params.session, result):
        result = pipeline.read(services, attrs.evolve(params, force=True))
    if isinstance(result, TextResult):
        file = result.file
        if anchored:
            file = _anchored(services, params, file)
            result = TextResult(file)
        if not _saw_view(services, params.session, file):
            _saw_lines(services, params.session, file)
    return result


def _saw_lines(services: AnchorServices, session: str, file: TextFile) -> None:
    """Record the lines `file` shows one by one (no snapshot keeps its text), hashed
    only when an edit asks or another such read comes (`ShownLines.saw_later`): a read
    of a log's tail, forced again and again, hashes its lines once at most."""
    key = (file.start_line, file.num_lines, bool(file.truncated_lines or file.escaped_lines))
    shown = services.shown_lines
    shown.saw_later(
        session, file.file_path, (*key, file.content), lambda: _exact(_rows(file), file)
    )


def _exact(rows: list[tuple[int, str, bool]], file: TextFile) -> dict[int, int]:
    """The lines of `rows` shown whole, as far as `file` shows them."""
    last = file.start_line + file.num_lines - 1
    return {n: line_hash(text) for n, text, exact in rows if exact and n <= last}


def _saw_view(services: AnchorServices, session: str, file: TextFile) -> bool:
    """Record the lines `file` shows as a view of the content the snapshots keep; False
    when they keep none of it (the lines are then recorded one by one)."""
    record = services.read_states.get(session, file.file_path)
    if record is None or record.scope != "file" or not file.num_lines:
        return False
    if services.snapshots.get(file.file_path, record.digest) is None:
        return False
    last = file.start_line + file.num_lines - 1
    max_chars = services.settings.max_line_chars
    services.shown_lines.saw_view(
        session, file.file_path, record.digest, file.start_line, last, max_chars
    )
    return True


class SeenServices(Protocol):
    """What `seen_lines` needs of the core."""

    @property
    def snapshots(self) -> Snapshots:
        """The texts reads showed, by digest."""
        ...

    @property
    def shown_lines(self) -> ShownLines:
        """Which lines each session was shown."""
        ...


def seen_lines(services: SeenServices, session: str, path: str) -> dict[int, int]:
    """The lines `session` was shown of `path` (number -> line_hash), for an edit."""

    def expand(digest: str, first: int, last: int, max_chars: int) -> dict[int, int]:
        text = services.snapshots.get(path, digest)
        if text is None:
            return {}  # evicted: those lines must be shown again
        lines = text.split("\n")[first - 1 : last]
        found = {}
        for number, line in enumerate(lines, first):
            line = line.removesuffix("\r")
            if len(line) <= max_chars and not _has_break(line):
                found[number] = line_hash(line)
        return found

    return services.shown_lines.lines(session, path, expand)


def _lacks_anchors(services: AnchorServices, session: str, result: ReadResult) -> bool:
    """Whether a stub or diff stands for lines the session holds no anchors of."""
    if isinstance(result, ChangedResult):
        return True
    if not isinstance(result, UnchangedResult):
        return False
    held = result.file
    if held.start_line is None or not held.num_lines:
        return False  # not lines (a document), or none: nothing anchors would show
    record = services.read_states.get(session, held.file_path)
    last = held.start_line + max(held.num_lines, 1) - 1
    return record is None or not services.shown_lines.holds_anchors(
        session, held.file_path, record.digest, held.start_line, last
    )


def _rows(file: TextFile) -> list[tuple[int, str, bool]]:
    """Each line a text result shows: its number, its text as shown, and whether that
    text is the line as it is (not cut, no line break shown escaped)."""
    if not file.content:
        return []
    marked = bool(file.truncated_lines or file.escaped_lines)
    shown = []
    for number, numbered in enumerate(file.content.split("\n"), file.start_line):
        text = numbered.split("\t", 1)[1]
        exact = not marked or (not _CUT_MARK.search(text) and "\\" not in text)
        shown.append((number, text, exact))
    return shown


def _anchored(services: AnchorServices, params: ReadParams, file: TextFile) -> TextFile:
    """`file` with its lines shown anchored, cut to the token cap if anchors made it
    longer, and recorded as held with anchors. The cap is the lines' (read/room.py):
    what the read sends beside them kept, its way on's too when it names one (or may,
    once anchors cut it)."""
    settings, counter = services.settings, services.tokens
    session = params.session
    kept = room.of_read(params, file.file_path)
    named = file.partial or file.next_offset is not None or file.total_lines is None
    fits = room.lines_cap(settings.max_tokens, kept.cut if named else kept.whole)
    cut = room.lines_cap(settings.max_tokens, kept.cut)
    key = (
        file.content,
        file.start_line,
        bool(file.truncated_lines or file.escaped_lines),
        fits,
        cut,
        counter.encoding_name,
    )
    with _VIEWS_LOCK:
        made = _VIEWS.get(key)
    if made is None:
        made = _anchored_view(file, fits, cut, settings.max_tokens, counter)
        with _VIEWS_LOCK:
            _VIEWS[key] = made
            while len(_VIEWS) > _VIEWS_KEPT:
                del _VIEWS[next(iter(_VIEWS))]
    content, tokens, changes = made
    record = services.read_states.get(session, file.file_path)
    shown = changes.get("num_lines", file.num_lines)
    if record is not None and isinstance(shown, int) and shown:
        last = file.start_line + shown - 1
        services.shown_lines.saw_anchored(
            session, file.file_path, record.digest, file.start_line, last
        )
    return attrs.evolve(
        file,
        content=content,
        tokens=tokens,
        **changes,  # type: ignore[arg-type]
    )


# The last few anchored views, by the cat -n view they were made from (a forced re-read
# of an unchanged file is answered without hashing and counting its lines again).
_VIEWS: dict[tuple[object, ...], tuple[str, int, dict[str, object]]] = {}
_VIEWS_LOCK = threading.Lock()
_VIEWS_KEPT = 8


def _anchored_view(
    file: TextFile, cap: int, cut: int, max_tokens: int, counter: TokenCounter
) -> tuple[str, int, dict[str, object]]:
    """The anchored content of `file`, its tokens, and what else changes when anchors
    put it over the cap `cap` (its lines cut to `cut`, the cap beside a way on)."""
    rows = _rows(file)
    hashes = [short_hash(text) if exact else NO_ANCHOR for _, text, exact in rows]
    lines = [f"{n}{h}\t{text}" for (n, text, _), h in zip(rows, hashes, strict=True)]
    content = "\n".join(lines)
    tokens = counter.early_count(content, cap)  # the table not loaded yet: its index
    if tokens is not None:
        return content, tokens, {}
    # An anchored row is a compact numbered row with the two letters between the number
    # and the tab: the pre-tokenizer makes them a piece of their own (the number ends
    # one, the tab starts the next; numbering.py), so the count is the numbered lines'
    # count plus the letters'.
    numbered = counter.numbered([text for _, text, _ in rows], file.start_line, 0)
    letters = list(accumulate((_letter_tokens(counter, h) for h in hashes), initial=0))

    def cost(kept: int) -> int:
        return numbered.tokens(kept) + letters[kept]

    tokens = cost(len(lines))
    if tokens <= cap:
        return content, tokens, {}
    kept = _fitting(cost, len(lines), cut)
    next_offset = file.start_line + kept
    changes: dict[str, object] = {
        "num_lines": kept,
        "partial": True,
        "next_offset": next_offset,
        "note": f"Showing lines {file.start_line}-{next_offset - 1} (anchors made the lines "
        f"over the {max_tokens:,}-token cap). Continue with "
        f"{again(offset=next_offset, line_format='anchors')}.",
    }
    return "\n".join(lines[:kept]), cost(kept), changes


def _fitting(cost: Callable[[int], int], count: int, cap: int) -> int:
    """How many of `count` lines (from the first) fit in `cap` tokens."""
    low, high = 0, count
    while low < high:
        middle = (low + high + 1) // 2
        if cost(middle) <= cap:
            low = middle
        else:
            high = middle - 1
    return max(low, 1)


# Tokens of each anchor's letters (or of NO_ANCHOR), by token table.
_LETTERS: dict[tuple[str, str], int] = {}


def _letter_tokens(counter: TokenCounter, letters: str) -> int:
    key = (counter.encoding_name, letters)
    found = _LETTERS.get(key)
    if found is None:
        found = _LETTERS[key] = counter.count(letters)
    return found


def shown_rows(
    lines: Iterable[tuple[int, str]], max_chars: int
) -> tuple[list[str], dict[int, int]]:
    """Lines (number, text without its ending) shown anchored outside a read (a
    refusal's fresh lines, an edit's snippet): the rows, and those shown whole, to add
    to the session's shown lines. A line over `max_chars` is cut, without an anchor."""
    rows: list[str] = []
    whole: dict[int, int] = {}
    for number, text in lines:
        if len(text) > max_chars or _has_break(text):
            shown = text[:max_chars] + (" …" if len(text) > max_chars else "")
            rows.append(row(number, _escaped(shown), exact=False))
            continue
        rows.append(row(number, text))
        whole[number] = line_hash(text)
    return rows, whole


def _has_break(text: str) -> bool:
    from .. import quoting

    return quoting.has_break(text)


def _escaped(text: str) -> str:
    from .. import quoting

    return quoting.line(text)
