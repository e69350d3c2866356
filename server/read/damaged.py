"""A notebook that is no notebook (a merge conflict, a cut-off save), read as the text it
is, with a note saying so.

Its lines are then seen as a text file's are, so an edit of them (old_string and
new_string, under the same read and stale checks as any text file) can repair it. A
`corrupt` refusal that named the read would send the agent round in a loop: edits and
writes need a read first, and the read was refused (attack round 25, A6). Bytes that
are neither a notebook nor text (a NUL byte in it) are refused `corrupt` naming no read
and no edit, for neither can take them: the user repairs or replaces the file (attack
round 27).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from .. import quoting
from ..errors import ReadkeeperError
from ..protocol import ReadResult, TextResult
from .readers import text as text_reader
from .readers.notebook_parse import NOT_UTF8


def as_text(
    kind: str,
    path: str,
    data: bytes,
    refused: ReadkeeperError,
    read_text: Callable[[], ReadResult],
) -> ReadResult:
    """`read_text()`, the read of `data` as text, noted as a damaged notebook's, when
    `refused` is the notebook reader's `corrupt`; else (`data` not text, another reader,
    another refusal) `refused` raised as it is."""
    if kind != "notebook" or refused.kind != "corrupt":
        raise refused
    # Its frames hold the parse's text (and the tree, if any): not beside the view's.
    refused.__traceback__ = None
    try:
        text_reader.decode_text(data, path)
    except ReadkeeperError as not_text:
        raise _neither(path, refused, not_text) from None
    result = read_text()
    if not isinstance(result, TextResult):
        return result  # an estimate or an unchanged stub: no lines shown
    why = _why(refused)
    said = f"{quoting.name(path)} is not a valid notebook ({why}), so it is shown as its text. "
    if str(refused.data.get("detail") or "").startswith(NOT_UTF8):
        # An edit or a write keeps a file's encoding: no edit makes it UTF-8.
        said += (
            "An edit or a write keeps the file's encoding, so none makes it UTF-8: ask the "
            "user to convert it to UTF-8 (or to re-save it from Jupyter), then read it "
            "again for its cells."
        )
    else:
        said += (
            "Edit those lines to repair it (e.g. remove a merge conflict's markers and the "
            "side not kept), then read it again for its cells."
        )
    earlier = result.file.note
    return TextResult(attrs.evolve(result.file, note=f"{said} {earlier}" if earlier else said))


def _why(refused: ReadkeeperError) -> str:
    why = str(refused.data.get("detail") or "not a notebook")
    if "line" in refused.data:  # JSON's own fault: where it is
        why += f" at line {refused.data['line']}, column {refused.data.get('column')}"
    return why


def _neither(path: str, refused: ReadkeeperError, not_text: ReadkeeperError) -> ReadkeeperError:
    """The refusal of a notebook whose bytes are not text either: no read shows it and
    no edit or write takes it, so it names neither; its lines around the fault, if any,
    as the notebook reader shows them (control characters escaped: notebook_parse)."""
    excerpt = refused.data.get("excerpt")
    lines = f" Lines around it:\n{excerpt}" if isinstance(excerpt, str) and excerpt else ""
    data = {k: v for k, v in refused.data.items() if k in ("line", "column", "excerpt")}
    return ReadkeeperError(
        "corrupt",
        f"{quoting.name(path)} is not a valid notebook ({_why(refused)}) and not text either "
        f"({not_text.data.get('detail') or 'not text'}), so readkeeper can neither "
        "show it nor edit it. Ask the user to repair it (re-save it from Jupyter) or to "
        f"replace it (restore it from version control).{lines}",
        file_path=path,
        detail=_why(refused),
        **data,
    )
