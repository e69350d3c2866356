"""The contract's types for changing files and hearing of changes: `readkeeper/edit`
(text and notebook cells), `readkeeper/write` and `readkeeper/changes`."""

from __future__ import annotations

from typing import Literal

import attrs

from .contract import Contract

# --- edits and writes (edits.py) --------------------------------------------------------


@attrs.frozen(repr=False, eq=False)
class EditParams(Contract):
    """`readkeeper/edit` of a text file: replace `old_string` with `new_string`."""

    file_path: str
    old_string: str
    new_string: str
    replace_all: bool = False
    session: str = ""


@attrs.frozen(repr=False, eq=False)
class PlainEdit(Contract):
    """One replacement of a batch (`edits`): `old_string` must occur once."""

    old_string: str
    new_string: str


@attrs.frozen(repr=False, eq=False)
class AnchorEdit(Contract):
    """One edit by anchors (`anchor_edits`), as an anchored read shows lines ("12ab":
    line 12, whose content hashes to "ab"): replace or delete the lines `start`..`end`
    (`end` defaults to `start`), or insert `lines` before or after `start`."""

    op: Literal["replace", "insert_after", "insert_before", "delete"]
    start: str
    end: str | None = None
    lines: list[str] | None = None


@attrs.frozen(repr=False, eq=False)
class EditBatchParams(Contract):
    """`readkeeper/edit` of several places of one text file in one call, all or none:
    `edits` (old_string/new_string pairs) or `anchor_edits` (lines named by anchors)."""

    file_path: str
    edits: list[PlainEdit] | None = None
    anchor_edits: list[AnchorEdit] | None = None
    session: str = ""


@attrs.frozen(repr=False, eq=False)
class FileEdit(Contract):
    """One file of a multi-file edit (`files`): one of `old_string`/`new_string`
    (`replace_all?`), `edits` or `anchor_edits`, as `readkeeper/edit` takes them."""

    file_path: str
    old_string: str | None = None
    new_string: str | None = None
    replace_all: bool = False
    edits: list[PlainEdit] | None = None
    anchor_edits: list[AnchorEdit] | None = None


@attrs.frozen(repr=False, eq=False)
class EditFilesParams(Contract):
    """`readkeeper/edit` of several files in one call (`files`): every file's edits
    land, or none does; one `readkeeper/undo` takes them all back."""

    files: list[FileEdit]
    session: str = ""


@attrs.frozen(repr=False, eq=False)
class Relocation(Contract):
    """An anchor whose line had moved (unambiguously, nearby) and was found there."""

    anchor: str
    line: int  # where its line is now


@attrs.frozen(repr=False, eq=False)
class WriteParams(Contract):
    """`readkeeper/write`: create a file, or replace all of one, with `content`."""

    file_path: str
    content: str
    session: str = ""


@attrs.frozen(repr=False, eq=False)
class ReadStateInfo(Contract):
    """The session's read-state after an edit or write: what the agent now knows."""

    digest: str
    total_lines: int
    source: Literal["disk", "buffer"]
    size: int | None = None  # bytes on disk (None when only the editor buffer changed)
    mtime_ns: int | None = None
    # What a whole re-read will answer: "stub" (unchanged) or a diff once it changes,
    # when the agent holds all of this content (it wrote it, or edited what it held
    # whole); else "full", the file in full.
    next_read: Literal["full", "stub"] = "full"


@attrs.frozen(repr=False, eq=False)
class ExternalChange(Contract):
    """What another program changed between the agent's read and its edit."""

    diff: str  # unified diff, as read -> as found
    truncated: bool
    lines: list[int]  # first and last changed line in the file as found ([] if none)


@attrs.frozen(repr=False, eq=False)
class EditResult(Contract):
    """What an edit did: how many replacements, where, and a numbered snippet of the first."""

    file_path: str
    replacements: int
    snippet: str  # numbered lines (as reads number them) around the first change
    start_line: int  # first line of the snippet
    lines: list[int]  # the first changed line of each replacement, in the new content
    applied_to: Literal["disk", "buffer"]
    encoding: str
    line_ending: str
    read_state: ReadStateInfo
    merged: bool = False  # the file had changed, disjointly, and the edit was merged
    external_change: ExternalChange | None = None
    note: str | None = None
    # Anchor edits: anchors found where their line had moved to.
    relocated: list[Relocation] | None = None


@attrs.frozen(repr=False, eq=False)
class WriteResult(Contract):
    """What a write did: whether it created or changed the file, and its encoding and line
    ending (an existing file keeps its own)."""

    file_path: str
    created: bool
    changed: bool  # False when the content was already exactly this
    applied_to: Literal["disk", "buffer"]
    total_lines: int
    encoding: str
    line_ending: str
    read_state: ReadStateInfo
    size: int | None = None
    note: str | None = None


# --- notebook cell edits (edit/notebook.py) -----------------------------------------------


@attrs.frozen(repr=False, eq=False)
class NotebookEditParams(Contract):
    """`readkeeper/edit` on a notebook cell: sent with `cell_id`/`new_source`/`edit_mode`
    instead of `old_string`/`new_string`."""

    file_path: str
    cell_id: str | None = None  # the target; for "insert", the new cell goes after it
    new_source: str | None = None  # required for "replace" and "insert"
    edit_mode: Literal["replace", "insert", "delete"] = "replace"
    cell_type: Literal["code", "markdown", "raw"] | None = None  # insert: default code
    session: str = ""


@attrs.frozen(repr=False, eq=False)
class NotebookEditResult(Contract):
    """What a notebook cell edit did: which cell, where it is now, and how many there are."""

    file_path: str
    edit_mode: Literal["replace", "insert", "delete"]
    cell_id: str  # the cell edited, inserted or deleted
    index: int  # its position (for delete: where it was)
    total_cells: int
    read_state: ReadStateInfo
    cell_type: str | None = None
    merged: bool = False  # the notebook had changed elsewhere, and the edit was merged
    external_change: ExternalChange | None = None
    note: str | None = None


# --- change notices (changes.py) ----------------------------------------------------------


@attrs.frozen(repr=False, eq=False)
class ChangesParams(Contract):
    """`readkeeper/changes`: the session whose change notices to take."""

    session: str = ""


ChangeKind = Literal["modified", "created", "deleted", "moved"]


@attrs.frozen(repr=False, eq=False)
class FileChange(Contract):
    """A file this session read that changed since: what changed, never who changed it."""

    file_path: str
    kind: ChangeKind  # "created": it had been reported deleted or moved, and is back
    diff: str  # unified diff from what the session saw to what is there now ("" if none)
    truncated: bool  # the diff was cut, or could not be made: re-read to see the file
    new_path: str | None = None  # where a "moved" file went
    total_lines: int | None = None  # lines in the file now
    note: str | None = None


@attrs.frozen(repr=False, eq=False)
class ChangesResult(Contract):
    """`readkeeper/changes`: the files the session read that changed since."""

    changes: list[FileChange]
    # Changes left for the next call, when this one reached its token cap.
    remaining: int | None = None
    # Why the list may not hold every change (the watcher is not watching, or polls a
    # root, or more read files lie where no watch hears than one call looks at), and
    # what to do: re-read before relying on a file. None: it hears them all.
    note: str | None = None


@attrs.frozen(repr=False, eq=False)
class DidChangeReadFilesParams(Contract):
    """`readkeeper/didChangeReadFiles`, server to client: new changes to files a
    session read, each sent once (the same changes stay available to
    `readkeeper/changes`, which is what the agent reads)."""

    session: str
    changes: list[FileChange]
