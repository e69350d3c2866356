"""A `didChange`'s changes applied to an open document within one budget of work.

pygls applies each change of a notification to the whole text: it splits the document
into lines, converts the range's positions with a Python loop over the line's
characters, and writes every line out again. One notification may carry thousands of
changes, so its cost was the changes times the document: 10,000 changes on a 1 MB
document held the server for 20-35 s, on 10 MB for minutes (outside round 41).

Here the document is split once, each change replaces only the lines its range
touches (with a line on either side, where a `\\r` and a `\\n` may join), and positions
on ASCII lines are converted by arithmetic. The result is the text the editor holds,
as LSP defines it, which is not always pygls' (tests/lsp/test_document_changes.py
compares them with an editor's rules): lines end at LF, CRLF and CR only (pygls' split
also ends one at a form feed, NEL, U+2028..., and every later change landed a line
early, round 44); a character past a line's end is its end, before its line break
(pygls put a CRLF line's between the CR and the LF, and a last line's one before its
end); a line past the last is the end of the text. What is left costs per
change what it touches, and that is counted: past `WORK_BUDGET` characters of lines
copied (a character a Python loop steps over counts `PYTHON_CHAR` times), the changes
are not applied and the caller is told so: the document is then lost, its text unknown,
and every call naming it is refused until the editor saves or closes it (documents.py;
reading or writing the disk beneath the unsaved work lost it, round 42). A whole-text
change costs only what its message carried, which the message cap bounds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lsprotocol import types
from pygls.workspace import TextDocument

from ..edit.buffers import encoding_name, lsp_lines

# Characters of lines copied or scanned for one notification's changes: far more than
# any editor's (a thousand cursors typing in long lines) in tens of milliseconds.
WORK_BUDGET = 64_000_000
PYTHON_CHAR = 32


class FollowedDocument(TextDocument):
    """pygls' document of an open file, its text kept as lines from one change to the
    next and joined only when read (`source`): typing in a document of a million lines
    splits and joins it not once a keystroke (0.36 s each on 60 MB, round 42) but once
    a read. `chars` is its length meanwhile (the caps on open text count it)."""

    held_lines: list[str] | None = None  # not pygls' `lines`, a tuple made from `source`
    chars = 0

    @property
    def source(self) -> str:
        if self.held_lines is not None:
            self._source, self.held_lines = "".join(self.held_lines), None
        return super().source


def follow(document: TextDocument) -> FollowedDocument:
    """`document` (pygls' own) as a FollowedDocument: the same object, its class
    changed, so pygls' workspace keeps it (it makes each document itself)."""
    if not isinstance(document, FollowedDocument):
        document.__class__ = FollowedDocument
        assert isinstance(document, FollowedDocument)
    return document


def length(document: TextDocument) -> int:
    """The characters of `document`'s text, without joining its lines."""
    if isinstance(document, FollowedDocument) and document.held_lines is not None:
        return document.chars
    return len(document.source)


def apply(
    document: FollowedDocument, changes: Sequence[types.TextDocumentContentChangeEvent]
) -> bool:
    """Apply `changes` to `document`'s lines; False past the budget of work (its lines
    are then half changed, and the document is lost: endpoint.py, documents.py)."""
    lines = document.held_lines
    if lines is None:
        lines = lsp_lines(document.source)
    found = _applied(lines, document, changes)
    if found is None:
        document.held_lines = None
        return False
    document.held_lines, document.chars = found
    return True


def applied(
    document: TextDocument, changes: Sequence[types.TextDocumentContentChangeEvent]
) -> str | None:
    """The document's text after `changes`, or None past the budget of work."""
    found = _applied(lsp_lines(document.source), document, changes)
    return None if found is None else "".join(found[0])


def _applied(
    lines: list[str],
    document: TextDocument,
    changes: Sequence[types.TextDocumentContentChangeEvent],
) -> tuple[list[str], int] | None:
    """`lines` after `changes` (changed in place, unless a change replaces the whole
    text) and their characters; None past the budget of work."""
    work = 0
    chars = sum(map(len, lines)) if not isinstance(document, FollowedDocument) else length(document)
    for change in changes:
        if isinstance(change, types.TextDocumentContentChangePartial) and (
            document._is_sync_kind_incremental
        ):
            took, grown = _apply(lines, change, document.position_codec)
            work, chars = work + took, chars + grown
        elif document._is_sync_kind_none:
            continue
        else:  # the whole text: its cost is the message's own size (the message cap)
            lines = lsp_lines(change.text)
            chars = len(change.text)
        if work > WORK_BUDGET:
            return None
    return lines, chars


def _apply(
    lines: list[str], change: types.TextDocumentContentChangePartial, codec: Any
) -> tuple[int, int]:
    """Apply one ranged change to `lines` in place, as pygls would to their text; the
    work it took, and the characters it added (fewer than none when it removed)."""
    if not lines:  # pygls: an empty document takes the text as it is
        lines[:] = lsp_lines(change.text)
        return len(change.text), len(change.text)
    units = encoding_name(getattr(codec, "encoding", None))
    start, work = _position(lines, change.range.start, units)
    end, end_work = _position(lines, change.range.end, units)
    work += end_work
    (start_line, start_col), (end_line, end_col) = sorted((start, end))  # as an editor's Range
    piece = lines[start_line][:start_col] + change.text + lines[end_line][end_col:]
    # Resplit with the lines on either side: a `\r` ending the one before may join a
    # `\n` the piece starts with, and a piece without a line end joins the one after.
    first = start_line - 1 if start_line > 0 else start_line
    last = end_line + 1 if end_line + 1 < len(lines) else end_line
    region = "".join([*lines[first:start_line], piece, *lines[end_line + 1 : last + 1]])
    was = sum(map(len, lines[first : last + 1]))
    lines[first : last + 1] = lsp_lines(region)
    return work + len(region) + (last - first + 1), len(region) - was


def _position(
    lines: list[str], position: types.Position, units: str
) -> tuple[tuple[int, int], int]:
    """The position as (line, code point) in `lines`, and the work: a character past
    its line's end is that end (before the line break), a line past the last the end
    of the text."""
    if position.line >= len(lines):
        return (len(lines) - 1, len(lines[-1])), 1
    line = lines[position.line]
    end = len(line) - (2 if line.endswith("\r\n") else 1 if line.endswith(("\r", "\n")) else 0)
    wanted = position.character
    if units == "utf-32" or line.isascii():  # one code unit a character
        return (position.line, min(wanted, end)), len(line)
    column, counted = 0, 0
    while column < end and counted < wanted:
        char = line[column]
        if units == "utf-8":
            counted += len(char.encode("utf-8", "surrogatepass"))
        else:
            counted += 2 if ord(char) > 0xFFFF else 1
        column += 1
    return (position.line, column), len(line) * PYTHON_CHAR
