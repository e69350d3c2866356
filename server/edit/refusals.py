"""The refusals of edits and writes, worded once for text files and notebook cells.

Each says what happened and what to do next (DESIGN.md, "Errors"). The `stale` refusal
carries a bounded diff (diffs.py) of what changed since the session's read, when the
snapshot of that read is still kept.
"""

from __future__ import annotations

import errno
import os

from .. import quoting
from ..errors import ReadkeeperError, is_diff
from ..files.fileio import folder_moved, moved, race, too_long
from ..hints import call
from ..read.diffs import bounded_diff
from ..state.readstate import ReadRecord
from .services import EditServices


def not_read(real: str, session: str) -> ReadkeeperError:
    """The `not_read` refusal of a change to a file the session has not read."""
    return ReadkeeperError(
        "not_read",
        f"This session has not read {real}, so an edit could overwrite what it has not "
        f"seen. Read it ({call('read', file_path=real)}), then make the edit.",
        file_path=real,
        session=session,
    )


def stale(
    core: EditServices,
    record: ReadRecord,
    current: str,
    path: str,
    verb: str,
    why_not_merged: str | None,
) -> ReadkeeperError:
    """The `stale` refusal of a change to a file that changed since `record` was read,
    with the diff from what was read to `current` when the snapshot is kept."""
    snapshot = core.snapshots.get(path, record.digest) if record.scope == "file" else None
    data: dict[str, object] = {"file_path": path, "read_source": record.source}
    if snapshot is None:
        detail = (
            " (what it said then is no longer kept, so no diff can be shown)"
            if record.scope == "file"
            else " (you read part of it when it was too large to read whole)"
        )
        return ReadkeeperError(
            "stale",
            f"{path} changed since this session read it{detail}, so the {verb} could "
            f"overwrite someone's work. Read it again, then redo the {verb} on what it says "
            "now.",
            **data,
        )
    diff, truncated = bounded_diff(snapshot, current, path)
    # A diff is the file's text, kept in data; what stands for one too costly to make
    # is readkeeper's sentence, in the message alone.
    data.update({"diff": diff} if is_diff(diff) else {}, diff_truncated=truncated)
    reason = f" The edit was not merged: {why_not_merged}." if why_not_merged else ""
    if verb == "write":
        reason = " A whole-file write is never merged with other changes."
    return ReadkeeperError(
        "stale",
        f"{path} changed since this session read it, so the {verb} could overwrite "
        f"someone's work.{reason} Read it again, then redo the {verb} on what it says now. "
        f"What changed:\n{diff}",
        **data,
    )


def busy(path: str) -> ReadkeeperError:
    """The `stale` refusal of a file another program has open for writing right now."""
    return ReadkeeperError(
        "stale",
        f"{path} is open for writing in another program right now (a save or a "
        "formatter in progress), so it may be changing. Read it again once that is "
        "done, then redo the change.",
        file_path=path,
        busy=True,
    )


def kept_changing(path: str) -> ReadkeeperError:
    """The `stale` refusal of a file that changed under every commit attempt."""
    return ReadkeeperError(
        "stale",
        f"{path} kept changing while readkeeper tried to commit (another program is "
        "rewriting it continuously). Read it again once it settles, then redo the change.",
        file_path=path,
    )


def deleted(path: str, verb: str) -> ReadkeeperError:
    """The `stale` refusal of a file that is gone since the session read it."""
    return ReadkeeperError(
        "stale",
        f"{path} was deleted or moved since this session read it. List its folder to find "
        f"where it went, or create it again with {call('write', file_path=path)}.",
        file_path=path,
        deleted=True,
        verb=verb,
    )


def root_replaced(path: str, folder: str, verb: str) -> ReadkeeperError:
    """The `stale` refusal of a change to a file read before its workspace folder was
    deleted and created again (or replaced): the file there now is another one."""
    return ReadkeeperError(
        "stale",
        f"The workspace folder {folder} was deleted and created again (or replaced) since "
        f"this session read {path}, so the file there now is not the one you read. Read "
        f"it again, then {verb} it.",
        file_path=path,
        root=folder,
        root_replaced=True,
    )


def set_id(path: str, mode: int) -> ReadkeeperError:
    """The refusal to change a set-user-ID or set-group-ID program."""
    # New bytes under a set-id program's name would run with its owner's rights, and
    # dropping the bits would break it: neither is an agent's call to make.
    return ReadkeeperError(
        "unsupported",
        f"{path} is a set-user-ID or set-group-ID program (mode {mode:04o}); readkeeper "
        "does not change privileged programs. Ask the user to change it by hand.",
        file_path=path,
        mode=f"{mode:04o}",
    )


def read_only(path: str, mode: int) -> ReadkeeperError:
    """The refusal to change a file whose mode lets no one write it (even when readkeeper
    runs as root, which the permission check would let through)."""
    return ReadkeeperError(
        "unsupported",
        f"{quoting.name(path)} is marked read-only (mode {mode & 0o7777:04o}: no one may write "
        "it), so readkeeper does not change it, whichever user it runs as. Nothing was "
        "changed. Ask the user whether it should change; if so, they give its owner leave "
        "to write it, then send the call again.",
        file_path=path,
        mode=f"{mode & 0o7777:04o}",
    )


def dirty(path: str, version: int | None) -> ReadkeeperError:
    """The `dirty_buffer` refusal of a file with unsaved changes in the editor."""
    return ReadkeeperError(
        "dirty_buffer",
        f"{path} is open in the editor with unsaved changes, and readkeeper never writes a "
        "file underneath them. Ask the user to save or revert it, then read it again and "
        'redo the change (or the user can set readkeeper.edit_open_buffers to "apply" to '
        "let edits go into the editor's buffer).",
        file_path=path,
        buffer_version=version,
    )


def refuse_unsaved_where_created(core: EditServices, path: str, root: str) -> None:
    """`dirty_buffer` when a path a call is about to create (`path`, and every missing
    folder above it up to `root`) is where the editor holds a document: at the first
    missing one or beneath it. Nothing is on disk there, so every such document is
    unsaved (never saved, or untitled with a path), and its save would fail on, or
    replace, what readkeeper made. The one rule of mkdir, a move's destination and a
    write's new file and folders."""
    top = _first_missing(path, root)
    if top is None:
        return
    prefix = top.rstrip(os.sep) + os.sep
    for name in sorted(core.buffers.paths()):
        if name == top or name.startswith(prefix):
            buffer = core.buffers.get(name)
            if buffer is not None:
                raise ReadkeeperError(
                    "dirty_buffer",
                    f"{quoting.name(name)} is open in the editor and was never saved, and "
                    f"creating {quoting.name(path)} would stand where it is to be saved. Ask "
                    "the user to save or close it, then send the call again (or choose "
                    "another path).",
                    file_path=name,
                    buffer_version=buffer.version,
                )


def _first_missing(path: str, root: str) -> str | None:
    """The topmost of `path` and the folders above it (below `root`) that do not exist;
    None when `path` exists."""
    missing = None
    current = path
    while current != root and current.startswith(root) and not os.path.lexists(current):
        missing = current
        current = os.path.dirname(current)
    return missing


def not_reloaded(path: str, version: int | None) -> ReadkeeperError:
    """The `dirty_buffer` refusal of a file whose clean editor copy disagrees with the
    disk (the editor has not reloaded it yet)."""
    return ReadkeeperError(
        "dirty_buffer",
        f"{path} changed on disk, and the editor's copy, which has no unsaved changes, "
        "has not been reloaded yet. readkeeper never writes underneath an open document "
        "that disagrees with the disk. Ask the user to reload it (or wait for the editor "
        "to), then read it again and redo the change.",
        file_path=path,
        buffer_version=version,
        unsaved=False,
    )


def not_text(path: str, reason: str) -> ReadkeeperError:
    """The `binary` refusal of a file that is not text readkeeper can edit exactly."""
    return ReadkeeperError(
        "binary",
        f"{path} is not a text file ({reason}), and readkeeper only edits text, exactly. "
        "Change it with a tool made for its format.",
        file_path=path,
    )


def folder_blocked(real: str) -> ReadkeeperError:
    """The refusal to create `real` where a file stands in place of one of its folders."""
    return ReadkeeperError(
        "bad_params",
        f"Cannot create {real}: a file stands where one of its folders should be "
        f"({_deepest_existing(os.path.dirname(real))}). Write it under another path.",
        field="file_path",
    )


def _deepest_existing(folder: str) -> str:
    probe = folder
    while not os.path.lexists(probe) and probe != os.path.dirname(probe):
        probe = os.path.dirname(probe)
    return probe


def os_error(path: str, exc: OSError) -> ReadkeeperError:
    """The refusal of a change the system would not make (permissions, disk full, ...);
    a tree changed under the change is `stale` (files/fileio.py `race`)."""
    if race(exc):
        return moved(path)
    if exc.errno in (errno.ENOENT, errno.ESTALE):
        # The file's folder was removed or moved away under the change.
        return folder_moved(path)
    if exc.errno == errno.ENAMETOOLONG:
        return too_long(path)
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        advice = "Ask the user to make it (and its folder) writable, then try again."
    elif exc.errno in (errno.ENOSPC, errno.EDQUOT):
        advice = "Ask the user to free disk space, then try again."
    else:
        advice = "Ask the user to check the file and its folder, then try again."
    return ReadkeeperError(
        "unsupported",
        f"Cannot write {path}: {exc.strerror or exc}. Nothing was changed. {advice}",
        file_path=path,
        errno=exc.errno,
    )


def folder_path(given: str, absolute: str, field: str) -> ReadkeeperError:
    """The refusal of a folder's path where a file's is needed (write, edit, the file
    moved): the way to name a file in that folder, or the file itself."""
    inside = os.path.join(absolute, "name.txt")
    return ReadkeeperError(
        "bad_params",
        f"{field} {quoting.name(given)} names a folder (it ends in a slash or a dot), not a "
        f"file. To write a file in that folder, give the file's own name: "
        f"{call('write', file_path=inside)} (missing folders are made); to mean the file "
        f"{quoting.name(absolute)}, leave out the trailing part.",
        field=field,
        file_path=absolute,
    )
