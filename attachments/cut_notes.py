"""What the note at the end of a cut attachment says: what the agent got, counted in the
file's own terms (its lines, not the attachment's), and the call that returns the rest.

The calls are named as every front end has them: the read tool (`readkeeper/read` over
LSP, `read` over MCP, `readkeeper_read` in VS Code) and the attachments tool, with
parameters all three take (`file_path`, `offset`, `pages`, `symbol`, `force`; `types`,
`mentions`, `diagnostics_offset`). A PDF is counted in pages and a notebook in cells
(as offset counts them), each section whole or begun; a cut inside a fenced page or
cell closes that fence first (`unclosed_fence`).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any, Protocol

from readkeeper import hints, quoting, words
from readkeeper.errors import fault_reason, is_diff

# What a note is made from: the attachment's lines kept, and all of its lines.
CutNote = Callable[[Sequence[str], Sequence[str]], str]

# An outline line ("12-40 class Reader", indented when nested) or a numbered line
# ("    12\tcode"): the file line each reaches.
_OUTLINE_LINE = re.compile(r"^\s*(\d+)-(\d+) \S")
_NUMBERED_LINE = re.compile(r"^\s*(\d+)\t")
# The first lines an outline comes with are at most this many (readers/outline_read.py).
_HEAD_LINES = 40
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


# The session the calls a note names are made in, when the front end's tools take one:
# an MCP server's, set around its call (`in_session`); empty, the calls name none (an
# editor's agent tools pass their chat's session themselves, and take no such param).
# Followed without it, a mention's "read the rest" read into the default session.
_SESSION: ContextVar[str] = ContextVar("readkeeper_notes_session", default="")


@contextlib.contextmanager
def in_session(session: object) -> Iterator[None]:
    """Name `session` (when a non-empty string) in every call the notes of this call
    name: the attachment sources' threads run in its context (core._CallPool)."""
    token = _SESSION.set(session if isinstance(session, str) else "")
    try:
        yield
    finally:
        _SESSION.reset(token)


def _in_session(params: dict[str, Any]) -> dict[str, Any]:
    session = _SESSION.get()
    return {**params, "session": session} if session and "session" not in params else params


def read_call(**params: Any) -> str:
    """The read tool with `params`, as a note names it."""
    return f"the read tool with {quoting.json_text(_in_session(params))}"


def diff_shown(text: str) -> str:
    """A change's diff as an attachment shows it: a diff as its lines (quoting.lines),
    or readkeeper's sentence in its place (a change too costly to diff, errors.is_diff)
    with each next call it names as a note names it: `the read tool with {...}`."""
    if is_diff(text):
        return quoting.lines(text)
    return hints.rewrite(text, lambda method, params: tool_call(method, **(params or {})))


def reads_of(path: str) -> Callable[[str, Any], str]:
    """A read's notes as an attachment of `path` says them: a way on `again` wrote (the
    read just answered, options changed) as the read tool with the file and those
    options, since the agent made no call to change (`pages="21-40"` alone was said);
    every other call as a note names it."""

    def say(text: str, keep: Any = ()) -> str:
        return hints.rewrite(
            text,
            lambda method, params: tool_call(method, **(params or {})),
            keep,
            options=lambda run: read_call(file_path=path, **run),
        )

    return say


def tool_call(method: str, **params: Any) -> str:
    """The tool `method` with `params`, as a note names it."""
    params = _in_session(params)
    return f"the {method} tool with {quoting.json_text(params)}" if params else f"the {method} tool"


def attachments_call(**params: Any) -> str:
    """The attachments tool with `params`, as a note names it."""
    return f"the attachments tool with {quoting.json_text(_in_session(params))}"


# The source of the memory files above the mentioned files (collect.py): asked for again
# with the same mentions.
ABOVE_MENTIONS = "memory files above mentions"

# What each type's source is, as a reason names it.
_SOURCES = {
    "memory": "reading the memory files",
    "diagnostics": "listing the editor's diagnostics",
    "changes": "listing the change notices",
    "selection": "reading the editor's selection",
    "git_status": "git status",
    "environment": "listing the environment's facts",
}


class Source(Protocol):
    """What a reason needs of an attachment source (collect.Source)."""

    @property
    def type(self) -> str:
        """Its type, as `dropped` names it."""
        ...

    @property
    def name(self) -> str:
        """Its name: a mentioned file's path, a root, what it is."""
        ...


def timed_out(source: Source, timeout: float, alone: bool = False) -> str:
    """The reason a `source` that ran past `attachments_timeout_ms` is dropped: `too_large`
    (as a PDF past its worker's time limit is: over a bound readkeeper sets, which a
    smaller request or a higher setting passes), and the next steps that work in every
    front end: the file read on its own (a read has no such bound), the type asked for
    alone (unless it was: a refusal never names the call that just failed), or the
    setting raised."""
    kind = source.type
    if kind == "file":
        what = f"reading {quoting.name(source.name)}"
        again = f"Read it on its own with {read_call(file_path=source.name)}"
    elif alone:
        what = _SOURCES.get(kind, kind)
        return (
            f"too_large: {what} took longer than the {timeout:g} s each attachment source "
            "is given (the attachments_timeout_ms setting). Ask the user to raise "
            "attachments_timeout_ms (READKEEPER_ATTACHMENTS_TIMEOUT_MS)."
        )
    else:
        what = _SOURCES.get(kind, kind)
        again = f"Ask for it alone with {attachments_call(types=[kind])}"
        again += " and the same mentions" if source.name == ABOVE_MENTIONS else ""
    return (
        f"too_large: {what} took longer than the {timeout:g} s each attachment source is "
        f"given (the attachments_timeout_ms setting). {again}, or ask the user to raise "
        "attachments_timeout_ms (READKEEPER_ATTACHMENTS_TIMEOUT_MS)."
    )


def worker_stopped(source: Source) -> str:
    """The reason a git status is dropped whose worker was found stopped from outside
    as it ran (SIGSTOP, a debugger): neither the repository's time nor the setting's
    (round 33: "took longer than the 3 s" after a call of 2 s, to raise the setting)."""
    what = _SOURCES.get(source.type, source.type)
    return (
        f"internal: {what} was cut: the process running it was stopped from outside "
        "(SIGSTOP or a debugger) and readkeeper replaced it. Nothing is wrong with the "
        f"repository: ask again ({attachments_call(types=[source.type])})."
    )


def fault(error: BaseException) -> str:
    """The reason a source that failed with an `error` not readkeeper's own refusal (a
    fault) is dropped: `internal`, and to ask again."""
    return f"internal: {fault_reason(error)} (a fault of readkeeper's). Ask again."


def file_lines(path: str, first_line: int, total_lines: int | None) -> CutNote:
    """The note of a cut file's numbered lines, from `first_line` (of `total_lines`)."""

    def note(kept: Sequence[str], _all: Sequence[str]) -> str:
        of = f" of the file's {total_lines:,}" if total_lines else ""
        # The file line the kept part reaches, by its number: a line of readkeeper's own
        # (the read's note) is no line of the file. Looked for from the end: a fit asks
        # for this note for every line kept (budget.truncate's widest note first).
        numbered = (m for line in reversed(kept) if (m := _NUMBERED_LINE.match(line)))
        found = next(numbered, None)
        if found is None:
            return f"none of its lines fit. Read it with {read_call(file_path=path)}"
        last = int(found.group(1))
        rest = read_call(file_path=path, offset=last + 1)
        return f"showing lines {first_line}-{last}{of}. Read the rest with {rest}"

    return note


def memory_lines(path: str, held: MemoryHeld) -> CutNote:
    """The note of a cut memory file: the lines kept of the file's own (counted from the
    file, not the attachment), and the memory-file cap's cut when it came first."""

    def note(kept: Sequence[str], every: Sequence[str]) -> str:
        return held.says(path, len(kept), budget_cut=len(kept) < len(every))

    return note


class MemoryHeld:
    """What a memory file's attachment holds of the file: `lines` lines (the last only
    in part when `partial`), of the file's `total_lines` (None: too big to count) and
    `size` bytes, and the cap that cut it (`cap`, None when it was not cut)."""

    def __init__(
        self, lines: int, partial: bool, total_lines: int | None, size: int, cap: str | None
    ) -> None:
        self.lines, self.partial, self.cap = lines, partial, cap
        self.total_lines, self.size = total_lines, size

    def says(self, path: str, kept: int, budget_cut: bool) -> str:
        """The note's words for `kept` of the held lines; `budget_cut`: the token cap or
        budget cut it further (its own words come first)."""
        file = (
            f"the file's {words.count(self.total_lines, 'line', True)} ({self.size:,} bytes)"
            if self.total_lines is not None
            else f"the file's {self.size:,} bytes (too large to count its lines)"
        )
        partial = self.partial and kept == self.lines
        rest = read_call(file_path=path, offset=kept if partial else kept + 1)
        if not kept:
            shown = f"none of {file}"
        elif partial:
            whole = f"{kept - 1} whole of {file} and " if kept > 1 else ""
            shown = f"{whole}the start of line {kept}" + ("" if whole else f" of {file}")
        elif self.total_lines is None:
            shown = f"{words.count(kept, 'line')} of {file}"
        else:
            shown = f"{kept} of {file}"
        capped = ""
        if self.cap is not None and (budget_cut or not kept):
            at = f"inside line {self.lines}" if self.partial else f"after line {self.lines}"
            capped = f"; the memory-file cap ({self.cap}) had cut it {at}"
        elif self.cap is not None:
            capped = f", cut by the memory-file cap ({self.cap})"
        return f"showing {shown}{capped}. Read the rest with {rest}"


def selection(path: str, first_line: int, last_line: int, total_lines: int) -> CutNote:
    """The note of a cut selection (a header, then lines `first_line`-`last_line` of the
    file, numbered): the selected lines kept, and the read of the rest of them."""

    def note(kept: Sequence[str], _all: Sequence[str]) -> str:
        numbers = [int(m.group(1)) for line in kept if (m := _NUMBERED_LINE.match(line))]
        reached = numbers[-1] if numbers else first_line - 1
        rest = read_call(file_path=path, offset=reached + 1, limit=last_line - reached)
        selected = f"the {first_line}-{last_line} selected (the file has {total_lines:,})"
        if not numbers:
            return f"none of {selected} fit. Read them with {rest}"
        return f"showing lines {first_line}-{reached} of {selected}. Read the rest with {rest}"

    return note


def outline(path: str, total_lines: int) -> CutNote:
    """The note of a cut outline (its symbols' lines, then the file's first lines,
    numbered): the file lines the kept part reaches."""

    def note(kept: Sequence[str], every: Sequence[str]) -> str:
        symbols_to, head_to = 0, 0
        for line in kept:
            found = _OUTLINE_LINE.match(line)
            if found:
                symbols_to = max(symbols_to, int(found.group(2)))
            elif numbered := _NUMBERED_LINE.match(line):
                head_to = int(numbered.group(1))
        symbols = sum(1 for line in every if _OUTLINE_LINE.match(line))
        symbol = read_call(file_path=path, symbol="<name>")
        if symbols == sum(1 for line in kept if _OUTLINE_LINE.match(line)):
            # The whole outline, and the first lines up to head_to.
            rest = read_call(file_path=path, offset=head_to + 1)
            head = f"its lines 1-{head_to}" if head_to else "none of its first lines"
            return (
                f"the whole outline of the file's {words.count(total_lines, 'line', True)}, and "
                f"{head}. "
                f"Read on with {rest}, or one symbol with {symbol}"
            )
        if not symbols_to:
            whole = read_call(file_path=path)
            lines = words.count(total_lines, "line", grouped=True)
            return f"none of its outline fit ({lines}). Read it with {whole}"
        shows = f"its outline shows symbols to line {symbols_to:,} of the file's {total_lines:,}"
        if symbols_to >= total_lines:  # what is left: nested symbols and the first lines
            first = read_call(file_path=path, offset=1, limit=_HEAD_LINES)
            return f"{shows}. Read its first lines with {first}, or one symbol with {symbol}"
        rest = read_call(file_path=path, offset=symbols_to + 1)
        return f"{shows}. Read on with {rest}, or one symbol with {symbol}"

    return note


def diff(path: str, total_lines: int) -> CutNote:
    """The note of a cut diff: the file line its last kept hunk reaches."""

    def note(kept: Sequence[str], _all: Sequence[str]) -> str:
        reached = 0
        for line in kept:
            found = _HUNK.match(line)
            if found:
                reached = int(found.group(1))
        whole = read_call(file_path=path, force=True)
        where = f"up to line {reached:,}" if reached else "none of its changes"
        return (
            f"showing the diff {where} of the file's {words.count(total_lines, 'line', True)}. "
            f"Read the file as it is now with {whole}"
        )

    return note


# A section header readkeeper writes outside every fence (render.py): a PDF page's, a
# notebook cell's. The file's own text is fenced, so none of it can pose as one.
_PAGE_HEAD = re.compile(r"^--- page (\d+) ---$")
_CELL_HEAD = re.compile(r"^--- cell .* ---$")
_FENCE_OPEN = re.compile(r"^(`{3,})")


def unclosed_fence(lines: Sequence[str]) -> list[str]:
    """The fence line that closes the fence `lines` end inside (none when they end
    outside every fence): a cut inside a page's or a cell's fenced text is closed before
    the note, so the note never reads as part of the file's text."""
    closing: str | None = None
    for line in lines:
        if closing is not None:
            closing = None if line == closing else closing
        elif found := _FENCE_OPEN.match(line):
            closing = found.group(1)
    return [closing] if closing is not None else []


def _sections(lines: Sequence[str], head: re.Pattern[str], body_end: int) -> list[tuple[int, int]]:
    """(first line, end) of each section headed by `head` outside the fences, up to
    `body_end` (where the note after the last section starts)."""
    starts: list[int] = []
    closing: str | None = None
    for index, line in enumerate(lines[:body_end]):
        if closing is not None:
            closing = None if line == closing else closing
        elif head.match(line):
            starts.append(index)
        elif found := _FENCE_OPEN.match(line):
            closing = found.group(1)
    ends = [*starts[1:], body_end]
    # A section ends at its last line that is not blank.
    return [
        (s, e - 1 if e - 1 > s and not lines[e - 1].strip() else e)
        for s, e in zip(starts, ends, strict=True)
    ]


def _held(
    kept: Sequence[str], every: Sequence[str], head: re.Pattern[str], has_note: bool
) -> tuple[int, bool]:
    """How many sections `kept` holds whole, and whether it holds the start of the next.
    A section cut just before its closing fence is whole: the cut closes the fence
    (`unclosed_fence`), so the agent is shown every line of it."""
    sections = _sections(every, head, len(every) - 1 if has_note else len(every))
    held = len(kept)
    if held < len(every) and unclosed_fence(kept) == [every[held]]:
        held += 1
    whole = sum(1 for _, end in sections if end <= held)
    started = whole < len(sections) and sections[whole][0] < len(kept)
    return whole, started


def pdf_pages(path: str, file: dict[str, Any]) -> CutNote:
    """The note of a cut PDF's text (render.py's "--- page N ---" blocks): the pages kept
    whole, of the PDF's, and the pages to read next."""
    count = int(file["page_count"])
    has_note = bool(file.get("note"))

    def note(kept: Sequence[str], every: Sequence[str]) -> str:
        numbers = [int(m.group(1)) for line in every if (m := _PAGE_HEAD.match(line))]
        whole, started = _held(kept, every, _PAGE_HEAD, has_note)
        first_left = numbers[whole] if whole < len(numbers) else numbers[-1] + 1
        rest = read_call(file_path=path, pages=_from(first_left, count))
        if not whole:
            return f"none of its {count:,} pages fit whole. Read it with {rest}"
        shown = f"pages {numbers[0]}-{numbers[whole - 1]}" if whole > 1 else f"page {numbers[0]}"
        part = f" and the start of page {first_left}" if started else ""
        return f"showing {shown}{part} of the PDF's {count:,}. Read the rest with {rest}"

    return note


def notebook_cells(path: str, file: dict[str, Any]) -> CutNote:
    """The note of a cut notebook (render.py's "--- cell ---" blocks): the cells kept
    whole, counted from 1 as offset counts them, of the notebook's, and where to go on."""
    cells = file.get("cells") or []
    first = int(cells[0]["index"]) + 1 if cells else 1
    total = int(file["total_cells"])
    has_note = bool(file.get("note"))

    def note(kept: Sequence[str], every: Sequence[str]) -> str:
        whole, started = _held(kept, every, _CELL_HEAD, has_note)
        rest = read_call(file_path=path, offset=first + whole)
        if not whole:
            return f"none of its {total:,} cells fit whole. Read it with {rest}"
        last = first + whole - 1
        shown = f"cells {first}-{last}" if last > first else f"cell {first}"
        part = f" and the start of cell {last + 1}" if started else ""
        return f"showing {shown}{part} of the notebook's {total:,}. Read the rest with {rest}"

    return note


def _from(first: int, last: int) -> str:
    return str(first) if first >= last else f"{first}-{last}"


def first_pages(file: dict[str, Any]) -> dict[str, Any]:
    """The file of a read of the first pages of a PDF too big to attach whole, with a
    note that names the rest."""
    shown, count = str(file.get("shown_pages", "")), int(file.get("page_count", 0))
    last = int(shown.rsplit("-", 1)[-1]) if shown.replace("-", "").isdigit() else count
    if file.get("note") or last >= count:
        return file  # the reader's own note says where to go on
    rest = read_call(file_path=file["file_path"], pages=f"{last + 1}-{count}")
    note = f"Pages {shown} of {count:,} (too many to attach whole). Read the rest with {rest}."
    return {**file, "note": note}
