"""The contract's types for the file layer beyond reads and edits: `readkeeper/move`,
`readkeeper/mkdir`, `readkeeper/stat` and `readkeeper/patch` (several replacements in
one file, all or none, or only previewed). Their results are sent as built."""

from __future__ import annotations

import attrs

from .contract import Contract


@attrs.frozen(repr=False, eq=False)
class MoveParams(Contract):
    """`readkeeper/move`: rename a file or folder; the destination must not exist."""

    source: str
    destination: str
    session: str = ""


@attrs.frozen(repr=False, eq=False)
class MkdirParams(Contract):
    """`readkeeper/mkdir`: create a folder and the missing ones above it (an existing
    folder is no error)."""

    path: str
    session: str = ""


@attrs.frozen(repr=False, eq=False)
class StatParams(Contract):
    """`readkeeper/stat`: a file's or folder's kind, size, times and permissions."""

    path: str
    session: str = ""


@attrs.frozen(repr=False, eq=False)
class Replacement(Contract):
    """One replacement of a patch: `old_string` must occur exactly once in the text as
    the replacements before it left it."""

    old_string: str
    new_string: str


@attrs.frozen(repr=False, eq=False)
class PatchParams(Contract):
    """`readkeeper/patch`: replacements applied in order to one file, committed as one
    edit (all or none); `dry_run` shows the diff and writes nothing."""

    file_path: str
    edits: list[Replacement]
    dry_run: bool = False
    session: str = ""


@attrs.frozen(repr=False, eq=False)
class UndoParams(Contract):
    """`readkeeper/undo`: take back the session's last edit or write (every file it
    changed), refused with `stale` when any of them changed since."""

    session: str = ""
