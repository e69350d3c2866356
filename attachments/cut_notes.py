"""What the note at the end of a cut attachment says: what the agent got, counted in the
file's own terms (its lines, not the attachment's), and the call that returns the rest.

The calls are named as every front end has them: the read tool (`readkeeper/read` over
LSP, `read` over MCP, `readkeeper_read` in VS Code) and the attachments tool, with
parameters all three take (`file_path`, `offset`, `symbol`, `force`; `types`,
`mentions`, `diagnostics_offset`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from readkeeper import quoting, words

# What a note is made from: the attachment's lines kept, and all of its lines.
CutNote = Callable[[Sequence[str], Sequence[str]], str]

# An outline line ("12-40 class Reader", indented when nested) or a numbered line
# ("    12\tcode"): the file line each reaches.
_OUTLINE_LINE = re.compile(r"^\s*(\d+)-(\d+) \S")
_NUMBERED_LINE = re.compile(r"^\s*(\d+)\t")
# The first lines an outline comes with are at most this many (readers/outline_read.py).
_HEAD_LINES = 40
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def read_call(**params: Any) -> str:
    """The read tool with `params`, as a note names it."""
    return f"the read tool with {quoting.json_text(params)}"


def attachments_call(**params: Any) -> str:
    """The attachments tool with `params`, as a note names it."""
    return f"the attachments tool with {quoting.json_text(params)}"


def file_lines(path: str, first_line: int, total_lines: int | None) -> CutNote:
    """The note of a cut file's numbered lines, from `first_line` (of `total_lines`)."""

    def note(kept: Sequence[str], _all: Sequence[str]) -> str:
        of = f" of the file's {total_lines:,}" if total_lines else ""
        if not kept:
            return f"none of its lines fit. Read it with {read_call(file_path=path)}"
        last = first_line + len(kept) - 1
        rest = read_call(file_path=path, offset=last + 1)
        return f"showing lines {first_line}-{last}{of}. Read the rest with {rest}"

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
