"""`readkeeper/move` and `readkeeper/mkdir`: the two changes that are not a file's bytes,
confined as writes are.

- Both ends of a move, and every folder made, lie inside a root or `allowed_paths` by
  their real path (a read the user allowed does not extend to changing anything), and
  never in version-control metadata (files/vcs.py).
- A move renames one entry of a folder opened beneath its root into another opened the
  same way (beneath.py): a folder on the way swapped for a symlink since the check
  fails the move (`stale`), never leads it out. The entry moved is the one the path
  names: a symlink is moved as itself, never its target.
- A move never replaces anything (`renameat2(RENAME_NOREPLACE)`: an existing
  destination, even one created between the check and the rename, refuses it).
- A file (or any file in a folder) with unsaved changes in the editor is not moved:
  the editor would save them under the old name; nor is anything moved to a path the
  editor holds a document for that is not on disk (its save would replace it).
- What the session read follows the files it moved (its read-state and snapshots), so
  it may edit them at their new path without reading again; other sessions are told
  the file is gone from where they read it, as for any deletion. A file a read at its
  new path reads another way (a notebook renamed to .txt, text renamed to .ipynb)
  carries nothing: the session reads it again there (move_reads.py).
- mkdir makes each missing folder beneath the one before it, following no symlink.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from contextlib import ExitStack, suppress
from typing import Any

from .. import quoting
from ..errors import ReadkeeperError
from ..files import atomic
from ..files.beneath import Location, Moved
from ..files.fileio import folder_moved, moved
from ..files.locks import lock_for
from ..files.paths import ALLOWED_SETTING, Workspace, names_a_folder
from ..files.reach import LeadsOut
from ..files.vcs import refuse_metadata
from ..hints import call
from ..protocol.files import MkdirParams, MoveParams
from ..words import count
from . import move_reads
from .refusals import dirty, os_error, refuse_unsaved_where_created
from .services import EditServices


def move(core: EditServices, params: MoveParams) -> dict[str, Any]:
    """Serve `readkeeper/move` by the rules above."""
    workspace = core.workspace
    source_given, source = _entry(workspace, params.source, "source")
    destination_given, destination = _entry(workspace, params.destination, "destination")
    with ExitStack() as stack:
        locks: dict[int, threading.Lock] = {}
        for path in (source.path, destination.path):
            lock = lock_for(path)
            locks[id(lock)] = lock
        for _, lock in sorted(locks.items()):
            stack.enter_context(lock)  # stripes shared by both paths are taken once
        found = _lstat(source)
        if found is None:
            raise workspace.not_found(source_given)
        if not stat.S_ISDIR(found.st_mode):
            _refuse_folder_form(params, source.path, destination.path)
            # A file or link may not become a HEAD (files/vcs.py); a folder may.
            anchor = destination.anchor.path
            refuse_metadata(destination_given, destination.path, anchor, "move", folder=False)
        if _lstat(destination) is not None:
            raise _exists(destination.path)
        if destination.path.startswith(source.path.rstrip(os.sep) + os.sep):
            raise ReadkeeperError(
                "bad_params",
                f"{destination.path} lies inside {source.path}: a folder cannot be moved into "
                "itself. Choose a destination outside it.",
                field="destination",
                file_path=destination.path,
            )
        _refuse_unsaved(core, source.path, stat.S_ISDIR(found.st_mode))
        # Open in the editor but not on disk (at the destination, or beneath it for a
        # folder): all of it is unsaved, and its save would replace what the move put there.
        refuse_unsaved_where_created(core, destination.path, destination.anchor.path)
        _rename(source, destination, destination_given)
        # A file now read another way (its suffix changed its reader) carries nothing
        # the session read of it: it reads it again there (move_reads.py).
        reader = (
            move_reads.changed(destination, source.path) if stat.S_ISREG(found.st_mode) else None
        )
        if reader is not None:
            had_read = core.read_states.forget(params.session, [source.path]) > 0
            followed = []
        else:
            followed = core.read_states.moved(params.session, source.path, destination.path)
        for old, new, digest in followed:
            text = core.snapshots.get(old, digest)
            if text is not None:
                core.snapshots.put(new, digest, text)
    kind = "folder" if stat.S_ISDIR(found.st_mode) else _kind(found.st_mode)
    result: dict[str, Any] = {
        "source": source.path,
        "destination": destination.path,
        "kind": kind,
        "read_state_followed": len(followed),
    }
    if followed:
        result["note"] = (
            f"What this session read of {count(len(followed), 'moved file')} counts at the new "
            "path as it did at the old one."
        )
    elif reader is not None:
        said = move_reads.note(reader, core.settings, had_read)
        if said:
            result["note"] = said
    return result


def mkdir(core: EditServices, params: MkdirParams) -> dict[str, Any]:
    """Serve `readkeeper/mkdir`: the folder and any missing folders above it."""
    workspace = core.workspace
    _, where = _resolved(workspace, params.path, "path", follow_last=True)
    relative = "" if where.path == where.anchor.path else where.path[len(where.anchor.path) + 1 :]
    existed = _lstat(where)
    if existed is not None and stat.S_ISLNK(existed.st_mode):
        raise moved(where.path)  # resolved, it was none: a symlink planted since
    if existed is not None and not stat.S_ISDIR(existed.st_mode):
        raise _not_a_folder(where.path)
    refuse_unsaved_where_created(core, where.path, where.anchor.path)
    try:
        where.anchor.make_folders(relative).close()
    except Moved as exc:
        raise moved(where.path, exc) from None
    except (NotADirectoryError, FileExistsError):
        raise _not_a_folder(where.path) from None
    except OSError as exc:
        raise os_error(where.path, exc) from None
    return {"path": where.path, "created": existed is None}


# --- where each end is -------------------------------------------------------------------


def _entry(workspace: Workspace, path: str, field: str) -> tuple[str, Location]:
    """The entry `path` names (its folder's symlinks resolved, its own name not: a
    symlink is moved as itself), permitted for changes; never a root itself."""
    given, where = _resolved(workspace, path, field, follow_last=False)
    if where.path == where.anchor.path:
        raise ReadkeeperError(
            "bad_params",
            f"{where.path} is a workspace folder itself; move what is inside it instead.",
            field=field,
            file_path=where.path,
        )
    return given, where


def _resolved(
    workspace: Workspace, path: str, field: str, *, follow_last: bool
) -> tuple[str, Location]:
    if not isinstance(path, str) or not path or "\x00" in path:
        raise ReadkeeperError(
            "bad_params", f"{field} must be a non-empty path without NUL characters.", field=field
        )
    given = workspace.absolute(path)
    advice = (
        "readkeeper changes nothing there. Give a path inside the workspace, or ask the "
        f"user to add its folder to {ALLOWED_SETTING}."
    )
    real = workspace.real_of(
        given, grants=False, follow_last=follow_last, advice=advice, field=field
    )
    where = workspace.locate(real, grants=False)
    if where is None:  # the roots changed meanwhile
        raise workspace.outside(given, LeadsOut(), advice, field=field)
    verb = "move" if not follow_last else "create"
    refuse_metadata(given, where.path, where.anchor.path, verb, folder=True)
    return given, where


def _refuse_folder_form(params: MoveParams, source: str, destination: str) -> None:
    """A file is never moved by a path that names a folder (`b/`, `b/.`): `mv a b/`
    would move it into b, and the rename would name it b instead."""
    if names_a_folder(params.source):
        raise ReadkeeperError(
            "bad_params",
            f"source {quoting.name(params.source)} names a folder (it ends in a slash or a "
            f"dot), and {quoting.name(source)} is a file. To move the file, give its path as "
            f"it is: {call('move', source=source, destination=params.destination)}.",
            field="source",
            file_path=source,
        )
    if names_a_folder(params.destination):
        inside = os.path.join(destination, os.path.basename(source))
        raise ReadkeeperError(
            "bad_params",
            f"destination {quoting.name(params.destination)} names a folder (it ends in a "
            f"slash or a dot), and {quoting.name(source)} is a file. To move it into that "
            f"folder, give its full new path: {call('move', source=source, destination=inside)}; "
            "to rename it, leave out the trailing part.",
            field="destination",
            file_path=destination,
        )


def _lstat(where: Location) -> os.stat_result | None:
    try:
        return where.lstat()
    except Moved:
        raise moved(where.path) from None
    except OSError as exc:
        raise os_error(where.path, exc) from None


# --- the move itself -----------------------------------------------------------------------


def _refuse_unsaved(core: EditServices, path: str, folder: bool) -> None:
    """`dirty_buffer` when the editor holds unsaved changes to the file (or to any file
    in the folder) being moved."""
    prefix = path.rstrip(os.sep) + os.sep
    names = [p for p in core.buffers.paths() if p.startswith(prefix)] if folder else [path]
    for name in names:
        buffer = core.buffers.get(name)
        if buffer is not None and buffer.edited:
            raise dirty(name, buffer.version)


def _rename(source: Location, destination: Location, destination_given: str) -> None:
    try:
        src_fd = source.open_folder(write=True)
    except Moved:
        raise moved(source.path) from None
    except OSError as exc:  # its folder removed or moved away since it was resolved
        raise os_error(source.path, exc) from None
    try:
        try:
            dst_fd = destination.open_folder(write=True)
        except Moved:
            raise moved(destination.path) from None
        except (FileNotFoundError, NotADirectoryError):
            folder = os.path.dirname(destination_given)
            raise ReadkeeperError(
                "not_found",
                f"The destination's folder {folder} does not exist. Create it first "
                f"({call('mkdir', path=folder)}), then move.",
                file_path=folder,
                suggestions=[],
            ) from None
        try:
            done = atomic.rename_new(src_fd, source.name, dst_fd, destination.name)
            if done:
                _in_place(source, src_fd, destination, dst_fd)
                for fd in {src_fd, dst_fd}:
                    _fsync_quietly(fd)
        finally:
            os.close(dst_fd)
    except FileExistsError:
        raise _exists(destination.path) from None
    except OSError as exc:
        if exc.errno == errno.EXDEV:
            raise ReadkeeperError(
                "unsupported",
                f"{source.path} and {destination.path} are on different filesystems, and a "
                "move is a rename. Write the file at the destination, then ask the user to "
                "delete the source.",
                file_path=source.path,
            ) from None
        raise os_error(source.path, exc) from None
    finally:
        os.close(src_fd)
    if not done:
        raise ReadkeeperError(
            "unsupported",
            f"This system cannot rename the folder {source.path} without the risk of "
            "replacing what appears at the destination meanwhile, so it was not moved.",
            file_path=source.path,
        )


def _in_place(source: Location, src_fd: int, destination: Location, dst_fd: int) -> None:
    """After the rename: both folders are still where their paths lead, else a folder
    moved out of the workspace meanwhile, and the move, which took a file from outside
    or put one there, is taken back and refused (atomic.py: the folders' descriptors
    follow them)."""
    ends = ((source, src_fd), (destination, dst_fd))
    moved_folder = next((where for where, fd in ends if not where.in_place(fd)), None)
    if moved_folder is None:
        return
    with suppress(OSError):
        atomic.rename_new(dst_fd, destination.name, src_fd, source.name)
    raise folder_moved(moved_folder.path)


def _fsync_quietly(fd: int) -> None:
    # Some filesystems cannot sync a folder: the rename is done all the same.
    with suppress(OSError):
        os.fsync(fd)


def _exists(path: str) -> ReadkeeperError:
    return ReadkeeperError(
        "bad_params",
        f"{quoting.name(path)} already exists, and a move never replaces anything. Choose another "
        f"destination, or look at what is there first ({call('stat', path=path)}).",
        field="destination",
        file_path=path,
        exists=True,
    )


def _not_a_folder(path: str) -> ReadkeeperError:
    return ReadkeeperError(
        "bad_params",
        f"{quoting.name(path)}, "
        f"or a folder on its way, exists and is not a folder, so no folder can be "
        "made there. Choose another path.",
        field="path",
        file_path=path,
    )


def _kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "other"
