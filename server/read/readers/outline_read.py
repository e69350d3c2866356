"""Outline reads and symbol reads of source files (issue 14), for the core's read path.

- A whole read (no offset, limit or symbol; no `force`) of a file in a language with a
  grammar (grammars.py), whose numbered lines come to more than `outline_over_tokens`,
  answers an `outline`: its symbols with line ranges and nesting, one line each, its
  first lines, and the read that gets any part.
- A read with `symbol` ("Reader.read") is a ranged read of that symbol's lines: `plan`
  turns it into one, so the read-state, stubs and edits treat it like any ranged read.

The tree-sitter work is outline.py; nothing here imports a grammar.
"""

from __future__ import annotations

from dataclasses import dataclass

import attrs

from ... import quoting, words
from ...errors import ReadkeeperError
from ...files.encodings import TextEncoding, line_ending
from ...files.user_cache import shared
from ...hints import again, call
from ...protocol import OutlineFile, ReadParams, TextFile
from ...settings import Settings
from .. import joined
from ..loop_guard import costly_step
from ..room import NO_ROOM, Room, lines_cap
from ..tokens import TokenCounter, estimate_tokens
from . import outline, outline_cache, outline_find
from . import text as text_reader
from .grammars import Grammar


@dataclass(frozen=True)
class Outline:
    """A whole read that answers with an outline: the grammar, what the file's numbered
    lines would cost, and its symbols."""

    grammar: Grammar
    whole_tokens: int
    symbols: list[outline.Symbol]


@dataclass(frozen=True)
class SymbolRead:
    """A symbol read as the ranged read of its lines, and what its answer's note adds
    (the other symbols of its name: outline_find.others_note)."""

    params: ReadParams
    note: str | None = None


def noted(file: TextFile, planned: object) -> TextFile:
    """`file` with a symbol read's note (`planned`, what `plan` gave) after its own."""
    if not isinstance(planned, SymbolRead) or planned.note is None:
        return file
    return attrs.evolve(file, note=f"{file.note} {planned.note}" if file.note else planned.note)


# The read-state's view name of an outline (a re-read of the same outline stubs).
VIEW = "outline"
# The first lines shown with an outline: those before its first symbol (the module's
# docstring, imports), at least HEAD_MIN_LINES and at most HEAD_MAX_LINES lines, within
# about HEAD_MAX_TOKENS tokens.
HEAD_MIN_LINES = 10
HEAD_MAX_LINES = 40
HEAD_MAX_TOKENS = 600
# The outline's own text: about 3,000 tokens (its lines run about 3 characters a token).
OUTLINE_MAX_CHARS = 9_000
# The calls an outline's note names, each said whole by a front end (a symbol's read, a
# range's, the next top-level symbol's, the read from the top): room.py's room for each.
_NOTE_CALLS = 4
# Under a small max_tokens, the outline is drawn smaller until it fits beside what is
# sent with it, in at most this many tries, never under _LEAST_CHARS.
_FITS = 6
_LEAST_CHARS = 400


def plan(
    params: ReadParams,
    path: str,
    text: str,
    content_digest: str,
    settings: Settings,
    counter: TokenCounter,
) -> SymbolRead | Outline | None:
    """What a text read becomes: for `symbol`, the ranged read of its lines; for a whole
    read of a source file over `outline_over_tokens`, an Outline; else None (the read
    goes on as usual)."""
    if params.symbol is not None:
        return _symbol_read(params, path, text, content_digest)
    if params.force or params.offset is not None or params.limit is not None:
        return None
    grammar = outline.grammar_for(path, text[:4096].encode("utf-8", "surrogatepass"))
    if grammar is None:
        return None
    whole = whole_tokens(text, settings, counter)
    if whole is None:
        return None
    costly_step()  # a parse and a walk: never on the event loop
    try:
        found = outline_cache.symbols(text, grammar, content_digest)
    except outline.TooCostly:
        return None  # the lines, as before
    # Without a symbol (a data table, generated constants) an outline tells nothing.
    return Outline(grammar, whole, found) if found else None


def likely_outlined(
    params: ReadParams, path: str, size: int, head: bytes, settings: Settings
) -> bool:
    """Whether a read of a text file of `size` bytes, not yet loaded, is a whole read of
    a source file that `whole_tokens` may find over `outline_over_tokens`: its estimate
    is over the threshold at a character a byte (over twice it, no count is made; near
    it, the deciding count mostly passes it). A parse would follow, so the event loop
    hands the read to a worker thread before it loads the file, rather than after
    loading, decoding, hashing and counting it there, all of which the worker did
    again (loop_guard.py; issue 34: half of the first reads of real modules of 30-250
    KB are near the threshold). One the count finds under it is served there all the
    same, its answer the same. A read it misses reaches `plan`'s own step."""
    if params.force or params.estimate or params.symbol is not None:
        return False
    if params.offset is not None or params.limit is not None:
        return False
    if size * 5 // 16 <= settings.outline_over_tokens:
        return False
    return outline.grammar_for(path, head) is not None


def whole_tokens(text: str, settings: Settings, counter: TokenCounter) -> int | None:
    """About what the file's numbered lines cost, when over `outline_over_tokens`
    (None when not). Counted exactly only near the threshold, and only as far as it
    takes to pass it (`NumberedLines.tokens_within`): past it, the rest is scaled from
    the lines counted (`about`). The estimate is within a factor of two of the count
    for code."""
    threshold = settings.outline_over_tokens
    # Characters / 4, and a quarter more for the numbers: no pass over the text (this
    # runs on every whole read of a source file, stubs included).
    estimate = len(text) * 5 // 16
    if estimate < threshold // 2:
        return None
    if estimate > threshold * 2:
        return estimate
    # A restarted server's first read of a file an earlier one counted takes the count
    # from the user's cache (a few milliseconds less on a 40 KB module).
    user_cache = shared()
    key = outline_cache.whole_key(text, threshold, settings.number_width, counter.encoding_name)
    most = len(text) + 4 * (text.count("\n") + 1)  # a token a character, and the numbers
    kept = outline_cache.recall_whole(key, threshold, most, user_cache)
    if kept is not False:
        return kept
    lines = text_reader.split_lines(text)
    counts = counter.numbered(lines, 1, settings.number_width)
    whole = None if counts.tokens_within(threshold) is not None else counts.about()
    outline_cache.keep_whole(key, whole, user_cache)
    return whole


def view(
    text: str,
    path: str,
    encoding: TextEncoding,
    planned: Outline,
    content_digest: str,
    settings: Settings,
    counter: TokenCounter,
    room: Room = NO_ROOM,
) -> OutlineFile:
    """The outline of a source file: its symbols, first lines and how to read on, within
    `max_tokens` beside what is sent with it (`room`, read/room.py: its header, and its
    note's calls said whole)."""
    found = planned.symbols
    cap = lines_cap(settings.max_tokens, room.whole + _NOTE_CALLS * room.call)
    total = text_reader.line_count(text)
    first_start = found[0].start_line if found else total + 1
    leading = text_reader.leading_lines(text, HEAD_MAX_LINES)
    head = _head(leading, first_start, min(HEAD_MAX_TOKENS, cap // 4))
    window = text_reader.Window(offset=1, limit=head, ranged=True)
    # The first lines as a ranged read of them shows them: the same view, so the text
    # reader's cache may answer either one for the other.
    shown = text_reader.view(text, path, encoding, window, content_digest, settings, counter)
    whole = planned.whole_tokens
    chars = OUTLINE_MAX_CHARS
    for _ in range(_FITS):  # drawn smaller under a small cap (3,717 tokens sent at 2,000)
        drawn = outline.render(found, chars)
        note = _note(found, drawn, total, whole, head, settings)
        # Counted in parts, the outline's kept for the MCP front end's count of its own
        # rendering (joined.py): the same count as the joined text's.
        tokens = joined.count_joined(counter, (drawn.text, shown.file.content, note), "\n")
        if tokens <= cap or chars <= _LEAST_CHARS:
            break
        chars = max(_LEAST_CHARS, chars * cap // tokens * 9 // 10)
    return OutlineFile(
        file_path=path,
        language=planned.grammar.name,
        outline=drawn.text,
        symbols=drawn.total,
        shown_symbols=drawn.shown,
        content=shown.file.content,
        num_lines=shown.file.num_lines,
        total_lines=total,
        tokens=tokens,
        file_tokens=whole,
        encoding=encoding.label,
        line_ending=line_ending(text),
        note=note,
    )


def held(file: OutlineFile) -> str:
    """What a `file_unchanged` stub of an outline read says the agent holds."""
    return (
        f"The outline of this file ({words.count(file.shown_symbols, 'symbol')} and lines "
        f"1-{file.num_lines} of {file.total_lines:,}) is unchanged since your read. Read a "
        f"symbol by its name or a range of lines, or {again(force=True)} for the file from the top."
    )


def _head(lines: list[str], first_start: int, most: int = HEAD_MAX_TOKENS) -> int:
    """How many first lines go with the outline, within about `most` tokens."""
    wanted = min(HEAD_MAX_LINES, max(HEAD_MIN_LINES, first_start - 1), len(lines))
    used = 0
    for count, line in enumerate(lines[:wanted]):
        used += estimate_tokens(line) + 3  # the number, the tab, the newline
        if used > most:
            return max(1, count)
    return max(1, wanted)


def _note(
    found: list[outline.Symbol],
    drawn: outline.Drawn,
    total_lines: int,
    whole: int,
    head: int,
    settings: Settings,
) -> str:
    parts = [
        f"This file has {words.count(total_lines, 'line', grouped=True)}, about "
        f"{words.count(whole, 'token', grouped=True)} read whole (over the "
        f"{settings.outline_over_tokens:,}-token outline_over_tokens), so here are its "
        f"symbols (line ranges, nesting by indent) and lines 1-{head}."
    ]
    example = _example(found)
    name = None if example is None else outline_find.name_of(found, example)
    if example is not None and name is not None:
        size = example.end_line - example.start_line + 1
        parts.append(
            f"Read a symbol with {again(symbol=name)} (lines {example.lines}), "
            f"or any lines with {again(offset=example.start_line, limit=size)}."
        )
    else:
        parts.append(f"Read any range of lines, e.g. {again(offset=head + 1, limit=200)}.")
    if drawn.next_line is not None:
        parts.append(
            f"Only the first {drawn.shown} of the top-level symbols fit; the next one starts "
            f"at line {drawn.next_line} ({again(offset=drawn.next_line)})."
        )
    elif drawn.shown < drawn.total:
        parts.append(
            f"{words.count(drawn.total - drawn.shown, 'symbol')} nested deeper are left out "
            '(see "+N inside"): read their parent by symbol to see them.'
        )
    cut = outline_find.cut_after([symbol for _, symbol in outline.walk(found)])
    if cut:
        parts.append(outline_find.cut_words(cut))
    parts.append(
        f"{again(force=True)} reads the lines from the top instead (at most "
        f"{settings.max_tokens:,} tokens)."
    )
    return " ".join(parts)


def _example(found: list[outline.Symbol]) -> outline.Symbol | None:
    """A symbol to name in the note: the first method, else the first nested symbol,
    else the first one."""
    members = [child for symbol in found for child in symbol.children]  # depth 1, in order
    for symbol in members:
        if symbol.kind == "method":
            return symbol
    return members[0] if members else (found[0] if found else None)


# --- symbol reads --------------------------------------------------------------------------


def _symbol_read(params: ReadParams, path: str, text: str, content_digest: str) -> SymbolRead:
    wanted = (params.symbol or "").strip()
    if not wanted:
        raise ReadkeeperError(
            "bad_params",
            'symbol is empty: give a name such as "Reader.read" or "main", or leave it out '
            "to read the file.",
            field="symbol",
        )
    if params.offset is not None or params.limit is not None:
        # The same read, one or the other (hints.changed drops the other when said whole).
        lines = again(offset=params.offset, limit=params.limit)
        raise ReadkeeperError(
            "bad_params",
            f"symbol {_value(wanted)} reads that symbol's own lines, so it takes no range of "
            f"lines: read the symbol alone ({again(symbol=wanted)}) or the lines alone "
            f"({lines}).",
            field="symbol",
        )
    grammar = outline.grammar_for(path, text[:4096].encode("utf-8", "surrogatepass"))
    if grammar is None:
        raise no_grammar(path, wanted)
    try:
        symbols = outline.symbols(text, grammar, content_digest)
        found = outline_find.find(symbols, wanted)
    except outline.TooCostly as exc:
        raise ReadkeeperError(
            "too_large",
            f"{quoting.name(path)} is too costly to parse for symbols ({exc}). Read a range of its "
            f"lines instead (search it first to find them: {_search(path, wanted)}).",
            file_path=path,
            field="symbol",
        ) from None
    if found.start_line == 0:
        raise _not_found(path, wanted, found)
    limit = found.end_line - found.start_line + 1
    ranged = attrs.evolve(params, offset=found.start_line, limit=limit, symbol=None)
    return SymbolRead(ranged, outline_find.others_note(found))


def no_grammar(path: str, wanted: str) -> ReadkeeperError:
    """The error for a symbol read of a file whose language has no grammar here."""
    return ReadkeeperError(
        "unsupported",
        f"Symbol reads need a parser for the file's language, and {quoting.name(path)} is not "
        f"one of {outline.supported_languages()}. Read a range of its lines instead "
        f"(search it first to find them: {_search(path, wanted)}).",
        file_path=path,
        field="symbol",
    )


def _not_found(path: str, wanted: str, found: outline_find.Found) -> ReadkeeperError:
    names = found.names or {}
    candidates = [
        {
            "qualified_name": s.qualified_name,
            "symbol": names.get(id(s)),
            "kind": s.kind,
            "start_line": s.start_line,
            "end_line": s.end_line,
        }
        for s in found.candidates
    ]
    first = found.candidates[0] if found.candidates else None
    cut = found.cut_after
    if first is None and cut:
        message = (
            f"No symbol {_value(wanted)} among the first {outline.MAX_SYMBOLS:,} symbols of "
            f"{quoting.name(path)}, and none with a similar name. "
            f"{outline_find.cut_words(cut, way_on=False)} Search the file for the name "
            f"({_search(path, wanted)}) or read on from that line "
            f"({call('read', file_path=path, offset=cut, limit=500)})."
        )
    elif first is None:
        message = (
            f"No symbol {_value(wanted)} in {quoting.name(path)}, and none with a similar name. "
            f"Read the whole file for its outline (or its lines): {call('read', file_path=path)}, "
            f"or search it ({_search(path, wanted)})."
        )
    elif not found.ambiguous:
        listed = ", ".join(
            f"{quoting.name(s.qualified_name)} ({s.kind}, lines {s.lines})"
            for s in found.candidates
        )
        message = (
            f"No symbol {_value(wanted)} in {quoting.name(path)}. Closest: {listed}. Read one with "
            f"{outline_find.listed(first, names)}, or the whole file for its outline: "
            f"{call('read', file_path=path)}."
        )
    else:
        shown = [outline_find.listed(s, names, kind=True) for s in found.candidates]
        if found.matched > len(found.candidates):  # the first few, and the last
            left = found.matched - len(found.candidates) + 1
            shown[-1] = f"and {left:,} more, to {shown[-1]}"
        first_of, at_least = ("first ", "at least ") if cut else ("", "")
        if found.beyond:
            said = (
                f"symbol {_value(wanted)} is none of the {first_of}{found.matched:,} symbols named "
                f"{_value(first.qualified_name)} in {quoting.name(path)} (numbered 1 to "
                f"{found.matched:,} in file order)"
            )
        else:
            said = (
                f"symbol {_value(wanted)} names {at_least}{found.matched:,} symbols in "
                f"{quoting.name(path)}"
            )
        message = f"{said}: {', '.join(shown)}. Read one as it is named here."
    if first is not None and cut:
        message += (
            f" {outline_find.cut_words(cut)} Search the file for the name "
            f"({_search(path, wanted)})."
        )
    return ReadkeeperError(
        "not_found", message, file_path=path, symbol=wanted, candidates=candidates
    )


def _search(path: str, wanted: str) -> str:
    """The search that finds the lines of symbol `wanted` the outline cannot (a real
    call, with the name asked for: the CLI shows it as a command to run)."""
    return call("grep", pattern=outline_find.pattern_for(wanted), path=path)


def _value(text: str) -> str:
    """A symbol's name as a parameter's value in readkeeper's hint: the JSON string the
    call takes (a name from the file may hold quotes, line breaks or controls)."""
    return quoting.json_text(text)
