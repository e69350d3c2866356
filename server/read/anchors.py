"""Anchored reads: each line shown as its number and a short hash of its content.

`line_format` (a read's parameter, else the setting) chooses how text lines are shown:
`cat-n` as numbering.py says, or `anchors`, `12ab<tab>text`: line 12, whose content
hashes to "ab". The form was chosen by measuring tokens on real files
(bench/bench_edits.py): the number and two letters with no separator tokenize as cheaply
as `cat -n`'s padded number, cheaper than `12#ab|` (the letters are never digits, so
where the number ends is never in doubt). An edit names lines by these anchors
(edit/anchors.py) instead of repeating them.

Every read of numbered lines, in either format, adds the lines it showed whole to the
session's shown lines (state/shown_lines.py): what an anchor is checked against. A
line shown cut or with escaped line breaks is not added, and in the anchors format it
is shown as `12--`, with no anchor: the agent never saw it as it is.

The stub rule holds with one more condition: a re-read in the anchors format is a stub
only when the session got anchors for those lines of that content; a stub of lines it
only saw as `cat -n` (or a diff of a changed file, whose lines it holds under their
old numbers) is answered with the lines instead.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence

import attrs

from ..protocol import ChangedResult, ReadParams, ReadResult, TextFile, TextResult, UnchangedResult
from .services import ReadServices

LINE_FORMATS = ("cat-n", "anchors")
# Two letters of this alphabet (no i, l or o, which read as digits): 529 hashes.
_ALPHABET = "abcdefghjkmnpqrstuvwxyz"
NO_ANCHOR = "--"  # a line shown cut or escaped: it has no anchor
_CUT_MARK = re.compile(r" … \[line cut: \d+ more characters\]$")


AnchorServices = ReadServices  # the read's services hold the shown lines


def line_hash(line: str) -> int:
    """What a line's content is checked by: 64 bits, keyed per process (SipHash), so
    no file can be written to collide with another line."""
    return hash(line)


def short_hash(line: str) -> str:
    """The two letters an anchor shows of a line's content (stable across processes)."""
    value = int.from_bytes(
        hashlib.blake2b(line.encode("utf-8", "surrogatepass"), digest_size=4).digest(), "big"
    )
    first, second = divmod(value % (len(_ALPHABET) ** 2), len(_ALPHABET))
    return _ALPHABET[first] + _ALPHABET[second]


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
        rows = _rows(file)
        services.shown_lines.saw(
            params.session,
            file.file_path,
            {n: line_hash(text) for n, text, exact in rows if exact},
        )
        if anchored:
            return TextResult(_anchored(services, params.session, file, rows))
    return result


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


def _anchored(
    services: AnchorServices, session: str, file: TextFile, rows: list[tuple[int, str, bool]]
) -> TextFile:
    """`file` with its lines shown anchored, cut to the token cap if anchors made it
    longer, and recorded as held with anchors."""
    settings, counter = services.settings, services.tokens
    lines = [row(n, text, exact) for n, text, exact in rows]
    content = "\n".join(lines)
    tokens = counter.upper_bound(content, settings.max_tokens)
    bound = tokens is not None
    if tokens is None:
        tokens = counter.count(content)
    changes: dict[str, object] = {}
    if tokens > settings.max_tokens:
        kept = _fitting(counter.count, lines, settings.max_tokens - 64)
        lines, content = lines[:kept], "\n".join(lines[:kept])
        tokens, bound = counter.count(content), False
        next_offset = file.start_line + kept
        changes = {
            "num_lines": kept,
            "partial": True,
            "next_offset": next_offset,
            "note": f"Showing lines {file.start_line}-{next_offset - 1} (anchors made the "
            f"lines over the {settings.max_tokens:,}-token cap). Continue with "
            f"offset={next_offset}, line_format=anchors.",
        }
    record = services.read_states.get(session, file.file_path)
    if record is not None and lines:
        last = file.start_line + len(lines) - 1
        services.shown_lines.saw_anchored(
            session, file.file_path, record.digest, file.start_line, last
        )
    return attrs.evolve(
        file,
        content=content,
        tokens=tokens,
        tokens_upper_bound=True if bound else None,
        **changes,  # type: ignore[arg-type]
    )


def _fitting(count: Callable[[str], int], lines: Sequence[str], cap: int) -> int:
    """How many of `lines` (from the first) fit in `cap` tokens, joined."""
    low, high = 0, len(lines)
    while low < high:
        middle = (low + high + 1) // 2
        if count("\n".join(lines[:middle])) <= cap:
            low = middle
        else:
            high = middle - 1
    return max(low, 1)


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
