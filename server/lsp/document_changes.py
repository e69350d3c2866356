"""A `didChange`'s changes applied to an open document within one budget of work.

pygls applies each change of a notification to the whole text: it splits the document
into lines, converts the range's positions with a Python loop over the line's
characters, and writes every line out again. One notification may carry thousands of
changes, so its cost was the changes times the document: 10,000 changes on a 1 MB
document held the server for 20-35 s, on 10 MB for minutes (outside round 41).

Here the document is split once, each change replaces only the lines its range
touches (with a line on either side, where a `\\r` and a `\\n` may join), and positions
on ASCII lines are converted by arithmetic. The result is the text pygls makes, change
for change (tests/lsp/test_document_changes.py compares them). What is left costs per
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
        lines = document.source.splitlines(True)
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
    found = _applied(document.source.splitlines(True), document, changes)
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
            lines = change.text.splitlines(True)
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
        lines[:] = change.text.splitlines(True)
        return len(change.text), len(change.text)
    (start_line, start_col), work = _position(lines, change.range.start, codec)
    (end_line, end_col), end_work = _position(lines, change.range.end, codec)
    work += end_work
    if end_line < start_line:  # pygls writes every line as it was
        return work, 0
    piece = lines[start_line][:start_col] + change.text + lines[end_line][end_col:]
    # Resplit with the lines on either side: a `\r` ending the one before may join a
    # `\n` the piece starts with, and a piece without a line end joins the one after.
    first = start_line - 1 if start_line > 0 else start_line
    last = end_line + 1 if end_line + 1 < len(lines) else end_line
    region = "".join([*lines[first:start_line], piece, *lines[end_line + 1 : last + 1]])
    was = sum(map(len, lines[first : last + 1]))
    lines[first : last + 1] = region.splitlines(True)
    return work + len(region) + (last - first + 1), len(region) - was


def _position(
    lines: list[str], position: types.Position, codec: Any
) -> tuple[tuple[int, int], int]:
    """The position as (line, code point), as pygls' codec converts it, and the work."""
    if position.line < len(lines):
        line = lines[position.line]
        if line.isascii():  # one code unit a character, in every encoding
            # pygls counts a `\r\n` line one character short, and a column past that
            # length is taken as one before it.
            length = len(line) - 1 if line.endswith("\r\n") else len(line)
            column = position.character
            if length == 0:
                column = 0
            elif column > length:
                column = length - 1
            return (position.line, column), len(line)
        scanned = len(line)
    else:
        scanned = len(lines[-1])
    converted = codec.position_from_client_units(
        lines, types.Position(position.line, position.character)
    )
    return (converted.line, converted.character), scanned * PYTHON_CHAR
