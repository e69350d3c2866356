"""A notebook that is no notebook (a merge conflict, a cut-off save), read as the text it
is, with a note saying so.

Its lines are then seen as a text file's are, so an edit of them (old_string and
new_string, under the same read and stale checks as any text file) can repair it. A
`corrupt` refusal that named the read would send the agent round in a loop: edits and
writes need a read first, and the read was refused (attack round 25, A6). Bytes that
are not text keep the refusal, which then names no read.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from .. import quoting
from ..errors import ReadkeeperError
from ..protocol import ReadResult, TextResult
from .readers import text as text_reader


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
    try:
        text_reader.decode_text(data, path)
    except ReadkeeperError:
        raise refused from None
    result = read_text()
    if not isinstance(result, TextResult):
        return result  # an estimate or an unchanged stub: no lines shown
    why = str(refused.data.get("detail") or "not a notebook")
    if "line" in refused.data:  # JSON's own fault: where it is
        why += f" at line {refused.data['line']}, column {refused.data.get('column')}"
    said = (
        f"{quoting.name(path)} is not a valid notebook ({why}), so it is shown as its "
        "text, numbered by line. Edit those lines to repair it (e.g. remove a merge "
        "conflict's markers and the side not kept), then read it again for its cells."
    )
    earlier = result.file.note
    return TextResult(attrs.evolve(result.file, note=f"{said} {earlier}" if earlier else said))
