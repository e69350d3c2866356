"""What a `file_unchanged` stub says the agent holds (DESIGN.md, "Read-state: the rules").

A stub stands for content the agent already has, so it must name that content exactly:
which lines (as numbered now), of how many, how the agent got them (a read, an outline,
a symbol read, or its own write or edit, and when), and what changed around them. The
words are made here, once, into the stub's `note`, so every front end (LSP, MCP, CLI,
the editors' renderers) says the same thing.

The rule for a re-read after the session's own write or edit: when the agent holds all
of the new content (it wrote the file, or edited a file it held whole), the re-read is
a stub that says the content is what that write or edit left, and when; it never says
"unchanged since your read", which would point the agent at the text before the change.
Otherwise the re-read sends the file.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

import attrs

from ..hints import again
from ..protocol import UnchangedFile
from ..state.readstate import ReadRecord
from ..words import count as counted
from . import held_document
from .readers.outline_read import VIEW as OUTLINE_VIEW

Obtained = Literal["read", "outline", "symbol", "write", "edit"]


@dataclass(frozen=True)
class Around:
    """Where the held lines are now, when the file changed outside them."""

    start_line: int  # the held lines' first line, as numbered now
    total_lines: int  # the file's lines now
    changed: str  # "before", "after", "before and after", or "outside"


def obtained_by(view: ReadRecord) -> Obtained:
    """How the agent got the content of `view`."""
    if view.origin != "read":
        return view.origin
    if view.view == OUTLINE_VIEW:
        return "outline"
    return "symbol" if view.symbol is not None else "read"


def iso_time(ns: int) -> str:
    """`ns` (since the epoch) as ISO 8601 UTC, to the second."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ns // 1_000_000_000))


def unchanged_file(
    path: str, view: ReadRecord, around: Around | None = None, version: int | None = None
) -> UnchangedFile:
    """The stub of a re-read answered by `view`: its fields, and the same in words."""
    how = obtained_by(view)
    if view.document is not None:  # an image, PDF or notebook: its pages, cells, size
        document = view.document
        return UnchangedFile(
            file_path=path,
            obtained_by=how,
            note=held_document.words(document),
            buffer_version=version if view.source == "buffer" else None,
            **held_document.fields(document),
        )
    count = view.shown_lines
    start = around.start_line if around else view.offset
    total = around.total_lines if around else view.total_lines
    next_offset = None
    # A symbol read whole holds all it asked for: no rest to read on to.
    cut = view.symbol is None or view.partial
    if cut and count is not None and total is not None and start + count - 1 < total:
        next_offset = start + count
    moved = around is not None and around.start_line != view.offset
    file = UnchangedFile(
        file_path=path,
        start_line=start if count is not None else None,
        num_lines=count,
        total_lines=total,
        obtained_by=how,
        # When matters for the session's own change (which of its changes it was).
        obtained_at=iso_time(view.obtained_ns) if how in ("write", "edit") else None,
        changed_outside=around.changed if around else None,
        previous_start_line=view.offset if moved else None,
        symbol=view.symbol,
        next_offset=next_offset,
        buffer_version=version if view.source == "buffer" else None,
    )
    return attrs.evolve(file, note=words(file, view.held))


def words(file: UnchangedFile, held: str | None = None) -> str:
    """What the agent holds, in one or two sentences (the stub's `note`). `held`: what a
    view that is not numbered lines (an outline, part of a document) said it holds."""
    count, start, total = file.num_lines, file.start_line, file.total_lines
    if count is None or start is None:
        return held or "Unchanged since your read; the content you hold is current."
    end = start + count - 1
    # Once the file changed around them, "now N lines" says the total.
    of = f" of {total:,}" if total is not None and not file.changed_outside else ""
    if count == 0:
        lines = "the file is empty, and"
    elif start == 1 and total == count:
        lines = f"all {counted(count, 'line', grouped=True)}"
    else:
        lines = f"lines {start}-{end}{of}"
    if file.symbol is not None:
        lines = f"{file.symbol} ({lines})"
    at = f"at {file.obtained_at[11:19]} UTC" if file.obtained_at else ""
    said = {
        "write": f"{lines}: exactly what you wrote {at}",
        "edit": f"{lines}: what your edit {at} left (what you held, with your edits applied)",
    }.get(file.obtained_by, f"{lines} unchanged since your read")
    rest = f"; the rest starts at {again(offset=file.next_offset)}" if file.next_offset else ""
    total_now = (
        f"now {counted(total, 'line', True)}" if total is not None else "now longer or shorter"
    )
    where = "elsewhere" if file.changed_outside == "outside" else f"{file.changed_outside} them"
    if file.changed_outside and file.previous_start_line is not None:
        first = file.previous_start_line
        named = f"{file.symbol}: the" if file.symbol else "the"
        said = (
            f"{named} lines you read as {first}-{first + count - 1} are unchanged, now lines "
            f"{start}-{end}: the file changed {where} ({total_now})"
        )
        rest = ""  # a range asked for: where it is now is enough
    elif file.changed_outside == "after":
        more = f"; read on at {again(offset=file.next_offset)}" if file.next_offset else ""
        said += f"; the file changed after line {end} ({total_now}{more})"
        rest = ""
    elif file.changed_outside:
        said += f"; the file changed {where} ({total_now})"
    if said[0].islower() and not said.startswith(file.symbol or "\0"):
        said = said[0].upper() + said[1:]  # never a symbol's own name
    return f"{said}{rest}. Your copy is current; {again(force=True)} resends."
