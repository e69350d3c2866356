"""`readkeeper/grep`: a regular-expression search through the workspace, budgeted like a
read, whose shown lines count as seen.

ripgrep (rg.py) finds the matches; this module bounds what comes back. A run collects
at most `COLLECT_CAP` output lines within its deadline, then the matches are put in
path and line order (ripgrep's threads finish in any order), `offset` of them skipped
and at most `max_matches` shown, within `max_tokens`. Whatever was left out is named by
`next`: the params of the call that shows the rest. A run stopped by its deadline or
its cap answers with what it found, marked `partial`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import Any

from .. import quoting
from ..errors import ReadkeeperError, shown_name
from ..files.fileio import is_directory
from ..hints import again, call
from ..progress import step
from ..protocol import ReadParams
from ..protocol.search import GrepParams
from ..read import room
from ..read.readers import sniff
from ..read.services import ReadServices
from ..read.tokens import TokenCounter
from ..words import count
from . import blocks, overlong, refused, rg, stalls
from .above import Above
from .globs import Glob
from .grep_pages import DEFAULT_MAX_MATCHES, LINE_TOKENS, MAX_MATCHES, NameCost
from .grep_pages import counts as _counts
from .grep_pages import cut_by as _cut_by
from .grep_pages import files as _files
from .grep_pages import next_params as _next
from .grep_pages import page as _page
from .paging import refuse_past_end
from .priced import TOKEN_CAP, refuse_long_params, reserve, shown_size
from .seen import record_shown
from .where import searched

MAX_CONTEXT = 20
COLLECT_CAP = 50_000  # ripgrep output lines held per call
MAX_LINE_CHARS = 500  # a longer line is shown cut, with a note
CUT_NOTE_TOKENS = 80  # a match's cut note besides the two names it holds
# False: every search reads ripgrep's `--json` (the bench's baseline, and the tests' check
# that both readings agree).
PLAIN_OUTPUT = True


def grep(
    services: ReadServices,
    params: GrepParams,
    suspects: Callable[[str], list[bytes] | None] | None = None,
) -> dict[str, Any]:
    """Serve `readkeeper/grep` by the rules above; `suspects`: the watcher's entries
    beneath a folder that ripgrep could wait on (search/stalls.py), when it knows them."""
    _check(params)
    # Every page repeats the pattern and glob twice (priced.COPIES): at most a quarter.
    repeated = {"pattern": params.pattern, "glob": params.glob, "path": params.path}
    refuse_long_params(services, "grep", params.session, **repeated)
    root, cwd, arg = searched(services, params.path, params.session)
    avoided = stalls.avoid(root, cwd, suspects(cwd) if suspects is not None else None)
    # Plain lines where they are exact (blocks.py), else ripgrep's JSON messages.
    plain = PLAIN_OUTPUT and params.output == "matches" and not params.multiline
    flags = list(blocks.PLAIN_FLAGS) if plain else ["--json"]
    if params.output == "files":
        # Each file's name as a count of one, not `--files-with-matches --null`: ripgrep
        # flushes a count line by line, but block-buffers NUL-ended names, so a run
        # killed at its deadline lost every name it had found (`_named`).
        flags = ["--count", "--max-count=1", "--with-filename", "--null"]
    elif params.output == "counts":
        # ripgrep's own count of every match, a line per file: never a message per
        # match (`--json`, which ripgrep buffers per file: 5 M matches went past its
        # 1 GiB data cap), and the same number as its JSON's `stats.matches`.
        flags = ["--count-matches", "--with-filename", "--null"]
    if not params.case_sensitive:
        flags.append("--ignore-case")
    else:
        flags.append("--case-sensitive")
    if params.multiline:
        flags += ["--multiline", "--multiline-dotall"]
    if params.context and params.output == "matches":
        flags.append(f"--context={params.context}")
    matcher = Glob(params.glob, field="glob") if params.glob is not None else None
    if matcher is not None:
        flags += matcher.rg_filter()
    # A file named by path is searched whatever the rules say, as read reads it.
    above = Above.of(root, cwd, avoided.judged) if arg == "." else None
    flags += [*avoided.flags(), *(above.flags() if above else []), "--regexp", params.pattern]
    flags += ["--", arg]
    sep = b"\0" if params.output in ("files", "counts") else b"\n"
    step(f"searching {shown_name(arg)} for {shown_name(params.pattern)}")
    started = time.monotonic()
    refusal = partial(_refused, params)
    ran = rg.run(cwd, flags, max_lines=COLLECT_CAP, sep=sep, readable=root, refused=refusal)
    found = None
    if plain:
        found = blocks.plain_blocks(
            root, cwd, ran.lines, matcher, above, context=params.context > 0
        )
        if found is None:  # not exact: once more as JSON, within what is left of the time
            flags = ["--json", *flags[len(blocks.PLAIN_FLAGS) :]]
            left = max(rg.DEADLINE_S - (time.monotonic() - started), 0.0)
            ran = rg.run(
                cwd, flags, max_lines=COLLECT_CAP, deadline_s=left, readable=root, refused=refusal
            )
    step(f"{len(ran.lines):,} lines of output; fitting them to the budget")
    incomplete = ran.timed_out or ran.cut
    cap = _page(params)
    if params.output == "files":
        named = _within(root, cwd, _named(ran.lines), matcher, above)
        result = _files(services, sorted(named), params, cap, incomplete)
    elif params.output == "counts":
        counted = _within(root, cwd, _counted(ran.lines), matcher, above)
        result = _counts(services, dict(sorted(counted.items())), params, cap, incomplete)
    else:
        if found is None:
            found = blocks.blocks(root, cwd, ran.lines, matcher, above)
        result = _matches(services, found, params, cap, incomplete)
    if incomplete:  # lines, names and counts alike, after what each says of itself
        result["note"] = " ".join([*_notes(result), _stopped(ran.timed_out)])
    judged = above.note() if above is not None else None
    if judged is not None:
        result["note"] = " ".join([*_notes(result), judged])
    return overlong.said(rg.said_failed(stalls.with_note(result, avoided), ran), ran, root, cwd)


def _refused(params: GrepParams, stderr: str) -> ReadkeeperError:
    """`bad_params` on the field ripgrep refused (its words `stderr`, naming no path)."""
    if params.glob is not None and refused.is_about_glob(stderr):
        return refused.glob_error(params.glob, "glob", stderr)
    return refused.pattern_error(params.pattern, stderr)


def _stopped(timed_out: bool) -> str:
    why = "ran out of time" if timed_out else "found more than it can hold"
    return (
        f"The search {why}, so it did not look everywhere; narrow it with path or glob, "
        "or a more specific pattern."
    )


def _notes(result: dict[str, Any]) -> list[str]:
    return [result["note"]] if result.get("note") else []


# A pattern's length at most, in characters (a UTF-8 character is up to 4 bytes).
MAX_PATTERN_CHARS = 16_384


def _check(params: GrepParams) -> None:
    if not params.pattern:
        raise ReadkeeperError(
            "bad_params",
            "pattern is empty; give the text or regular expression to find.",
            field="pattern",
        )
    if params.context < 0 or params.context > MAX_CONTEXT:
        raise ReadkeeperError(
            "bad_params", f"context must be 0 to {MAX_CONTEXT} lines.", field="context"
        )
    if params.offset < 0:
        raise ReadkeeperError(
            "bad_params",
            f"offset must be 0 or more, got {params.offset} (0 shows the first).",
            field="offset",
        )
    if params.max_matches is not None and params.max_matches < 1:
        raise ReadkeeperError(
            "bad_params",
            f"max_matches must be 1 or more, got {params.max_matches}; leave it out for "
            "the default page.",
            field="max_matches",
        )
    for field, value in (("pattern", params.pattern), ("glob", params.glob or "")):
        if "\x00" in value:
            raise ReadkeeperError("bad_params", f"{field} may not hold NUL.", field=field)
    if len(params.pattern) > MAX_PATTERN_CHARS:
        # ripgrep takes it as one argument, which the kernel caps (128 KiB).
        raise ReadkeeperError(
            "bad_params",
            f"pattern is {len(params.pattern):,} characters; at most {MAX_PATTERN_CHARS:,}. "
            "Search for a shorter one (a distinctive part of the text).",
            field="pattern",
        )


def _matches(
    services: ReadServices,
    found: list[blocks.Block],
    params: GrepParams,
    cap: int,
    incomplete: bool,
) -> dict[str, Any]:
    total = sum(block.matches for block in found)
    refuse_past_end(params.offset, total, "match", so_far=incomplete)
    # The page's own note and `next` call (which repeats the pattern, path and glob) set
    # aside first, as for a page of names (priced.reserve).
    budget = services.settings.max_tokens - reserve(
        services, params.pattern, params.path, params.glob, session=params.session
    )
    counter = services.tokens
    name_cost = NameCost(counter)  # a line's name as shown, counted once a file
    sized: dict[str, int] = {}

    def name_chars(path: str) -> int:  # its characters as shown, once a file
        if path not in sized:
            sized[path] = shown_size(path)
        return sized[path]

    shown: list[dict[str, Any]] = []
    seen: dict[str, dict[int, str]] = {}
    used = matches = chars = 0
    by_chars = False  # the page stopped at LINES_MAX_CHARS, not the token cap
    cut_lines: list[blocks.Line] = []
    cut_match: str | None = None
    last_event = -1
    ahead = blocks.lines(found, params.offset)
    for line in ahead:
        new_match = line.match and line.event != last_event
        if new_match and matches == cap:
            break
        text = line.text
        if len(text) > MAX_LINE_CHARS:
            text = text[:MAX_LINE_CHARS]
            cut_lines.append(line)
        item = {"file_path": line.path, "line": line.number, "text": text}
        if not line.match:
            item["context"] = True
        cost = counter.count(text) + name_cost(line.path) + LINE_TOKENS
        # Room kept for the note of a match cut after this line, which names its file
        # twice (`_cut_note`): a long escaped name costs the note hundreds of tokens.
        kept = 2 * name_cost(line.path) + CUT_NOTE_TOKENS
        # And the characters grep's tool declares it sends at most (room.py): a line of
        # 500 spaces is 5 tokens.
        # The name as the text shows it (quoted, escaped: more than its JSON as data).
        size = quoting.sent_chars(text) + name_chars(line.path) + _LINE_CHARS
        by_chars = chars + size > room.LINES_MAX_CHARS
        if (used + cost + kept > budget or by_chars) and shown:
            if not new_match:
                # The match (or its context) shown so far is cut here, and nothing after
                # the cut is shown: a later line that fits would pass for the next one.
                fits = _Fits(counter, min(budget, _read_cap(services, line.path, params.session)))
                cut_match = _cut_note(line, ahead, params.offset + matches, fits)
            break
        used += cost
        chars += size
        if new_match:
            matches += 1
            last_event = line.event
        shown.append(item)
        seen.setdefault(line.path, {})[line.number] = text
    next_offset = params.offset + matches
    more = next_offset < total
    # Proved after the answer, before the session's state is looked at again.
    services.read_states.later.defer(
        params.session, partial(record_shown, services, params.session, seen)
    )
    services.stats.add(params.session, tokens_returned=used)
    result: dict[str, Any] = {
        "matches": shown,
        "num_matches": matches,
        "partial": more or incomplete or cut_match is not None or bool(cut_lines),
    }
    notes = [cut_match] if cut_match else []
    if more:
        result["next"] = _next(params, next_offset)
        # Which cap cut the page, as every listing says it (listing.cut_note).
        which = _cut_by(params, "match") if matches >= cap else TOKEN_CAP
        if by_chars and matches < cap:
            which = f"the {room.LINES_MAX_CHARS:,} characters a page sends at most"
        notes.append(
            f"Showing matches {params.offset + 1}-{next_offset} of {total}"
            f"{' found so far' if incomplete else ''}, cut by {which}; the rest: the same "
            f"search with {again(offset=next_offset)}, or narrow it with path or glob."
        )
    if cut_lines:
        notes.append(_long_lines_note(cut_lines, services.settings.max_line_chars))
    if not shown and not incomplete:
        notes.append("No matches.")
    if notes:
        result["note"] = " ".join(notes)
    return result


def _long_lines_note(cut_lines: list[blocks.Line], most: int) -> str:
    """The note of the lines shown cut at `MAX_LINE_CHARS`: a read shows each whole when
    it is at most `most` characters (max_line_chars), and no read a longer one (round 35:
    the note said the read of such a line showed it whole; round 36: it judged only the
    first line, and promised the same for the others)."""
    said = f"{count(len(cut_lines), 'line')} longer than {MAX_LINE_CHARS} characters shown cut"
    cells = [line for line in cut_lines if not _read_as_lines(line.path)]
    cut_lines = [line for line in cut_lines if _read_as_lines(line.path)]
    whole = [line for line in cut_lines if len(line.text) <= most]
    longer = [line for line in cut_lines if len(line.text) > most]
    parts = []
    if cells:  # a notebook's JSON lines: its read shows cells, each source line whole
        read = call("read", file_path=cells[0].path)
        parts.append(f"those of a notebook are whole in its cells ({read} shows them)")
    if whole:
        first = whole[0]
        read = call("read", file_path=first.path, offset=first.number, limit=1)
        others = " (the same for the others of at most max_line_chars, at their line)"
        parts.append(f"{read} shows the first whole{others if len(whole) > 1 else ''}")
    if longer:
        first = longer[0]
        read = call("read", file_path=first.path, offset=first.number, limit=1)
        which = "one is" if len(longer) == 1 else f"{len(longer)} are"
        parts.append(
            f"{which} over max_line_chars ({most:,} characters), which every read cuts them "
            f"at ({read} shows the first of them cut): search with a pattern that matches "
            "the part you need"
        )
    return f"{said}; " + "; ".join(parts) + "."


def _read_as_lines(path: str) -> bool:
    """Whether a read of `path` shows the lines grep numbers, by its name (a notebook's
    read shows its cells: round 37, a note's `offset=14` of a notebook's JSON lines was
    refused as past its last of 5 cells)."""
    return sniff(b"", path) is None


# A grep line's framing beside its text and file name, in characters (its number, the
# separators, the line break; the JSON keys of the LSP's and the CLI's `--json`).
_LINE_CHARS = 48


def _read_cap(services: ReadServices, path: str, session: str) -> int:
    """The tokens the lines of a range read of `path` may take (read/room.py): the read a
    cut match's note names must not be refused for the room of its own header."""
    kept = room.of_read(ReadParams(file_path=path, session=session), path)
    return room.lines_cap(services.settings.max_tokens, kept.whole)


class _Fits:
    """True while the lines given so far, each costed as a shown line, fit `budget`."""

    def __init__(self, counter: TokenCounter, budget: int) -> None:
        self.counter, self.left = counter, budget

    def __call__(self, text: str) -> bool:
        # Past the budget nothing more is counted (a bounded step); a budget spent to
        # exactly 0 is not past it: `> 0` here let every later line pass for fitting.
        if self.left >= 0:
            self.left -= self.counter.count(text[:MAX_LINE_CHARS]) + 8
        return self.left >= 0


def _cut_note(
    cut: blocks.Line, ahead: Iterator[blocks.Line], index: int, fits: Callable[[str], bool]
) -> str:
    """The note of match `index` (1-based) cut by the budget at line `cut`: which of its
    lines were left out, and the read that shows them (as many as `fits` the budget of a
    read; it names the rest). `ahead` yields the lines after `cut`: those of the same
    match (and its context) are counted, the next match ends it."""
    last_match = cut.number if cut.match else 0
    last = cut.number
    fitting = cut.number if fits(cut.text) else cut.number - 1
    for line in ahead:
        if line.path != cut.path or (line.match and line.event != cut.event):
            break
        last = line.number
        if line.match:
            last_match = line.number
        if fitting == line.number - 1 and fits(line.text):
            fitting = line.number
    first = cut.number
    what = (
        f"lines {first}-{last_match} of match {index} (and its context to line {last}) are"
        if last_match and last > last_match
        else f"lines {first}-{last} of match {index} are"
        if last_match
        else f"its context from line {first} to {last} is"
    )
    limit = max(fitting - first + 1, 1)
    on = "" if first + limit > last else f", then on from line {first + limit} the same way"
    shows = call("read", file_path=cut.path, offset=first, limit=limit)
    if not _read_as_lines(cut.path):  # a notebook's JSON lines: its read shows cells
        shows, on = f"the notebook's cells ({call('read', file_path=cut.path)})", ""
    return (
        f"The token budget cut match {index} in {quoting.name(cut.path)} after line "
        f"{first - 1}: {what} left out; {shows} shows them{on}."
    )


def _counted(pieces: list[bytes]) -> dict[bytes, int]:
    """The names and counts of `--count --null` output split at its NULs: the first
    piece is a name, each next one the previous name's count, a line break, then a name
    (the count's digits never hold one, so a name holding line breaks is kept whole).
    A last count cut off by the deadline or the cap is left out with its name."""
    counted: dict[bytes, int] = {}
    name = pieces[0] if pieces else b""
    for piece in pieces[1:]:
        number, newline, following = piece.partition(b"\n")
        if number.isdigit() and newline:
            if name:
                counted[name] = int(number)
            name = following
        else:  # a NUL inside a name cannot be: ripgrep printed this name whole
            name = b""
    return counted


def _named(pieces: list[bytes]) -> list[bytes]:
    """The names of `--count --null` output (`_counted`); a name whose count was cut
    off is still a file that matches."""
    names = pieces[:1]
    for piece in pieces[1:]:
        number, _, name = piece.partition(b"\n")
        if number.isdigit():
            names.append(name)
    return [name for name in names if name]


def _within(
    root: str,
    cwd: str,
    printed: Iterable[bytes] | dict[bytes, int],
    matcher: Glob | None,
    above: Above | None,
) -> dict[str, int]:
    """The names ripgrep printed as workspace paths (with what it printed for each),
    leaving out those beneath no root, outside the glob, or hidden from above."""
    found: dict[str, int] = {}
    inside = rg.Beneath(root, cwd)
    values = printed if isinstance(printed, dict) else dict.fromkeys(printed, 1)
    for name, value in values.items():
        shown = os.fsdecode(name).removeprefix("./")
        if not shown or (above is not None and above.hides(shown)):
            continue
        if matcher is None or matcher.matches(shown):
            path = inside(shown)
            if path is not None:
                found[path] = value
    return found


__all__ = ["DEFAULT_MAX_MATCHES", "MAX_MATCHES", "grep", "is_directory"]
