"""Opening files without ever blocking, and reading them within a byte bound.

`open()` on a FIFO with no writer blocks forever, and reading `/dev/zero` never ends; so
files are opened non-blocking and classified with `fstat` on the descriptor itself (not
a separate `stat`, which would race with a rename) before a single byte is read. Files
are opened as a name in their folder's descriptor, itself opened beneath the workspace
root (`beneath.Location`), never through a symlink.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Protocol

from .. import quoting
from ..errors import ReadkeeperError
from ..hints import call
from . import held_bytes
from .beneath import Location, Moved, lstat_in, open_in
from .globcost import glob_of_name
from .stamps import Stamp, proof


class Resolver(Protocol):
    """What opening a user-given path needs of the workspace (`paths.Workspace`)."""

    def direct(self, file_path: str) -> Location | None:
        """Where a path inside a root with no symlink on the way is, or None."""

    def resolve(self, file_path: str, session: str = "") -> Location:
        """Where a path permitted to `session` is, or a clear error."""


_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
_CHUNK = 1 << 20


@dataclass(frozen=True)
class OpenedFile:
    """A regular file open for reading, with the stat of the descriptor itself (what
    the read-state records); `fd` is closed when its `open_*` block ends."""

    path: str
    fd: int
    size: int
    mtime_ns: int
    mode: int
    # The file's stamp when it proves that what is read from `fd` now is what the file
    # holds while the stamp stays the same (stamps.py); None when it changed too lately.
    stamp: Stamp | None = None


def _kind_of(mode: int) -> str | None:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return None


def _not_regular(path: str, what: str) -> ReadkeeperError:
    return ReadkeeperError(
        "unsupported",
        f"{path} is {what}, not a regular file; readkeeper only reads regular files. "
        "Read a regular file instead, or redirect the output you need to one.",
        file_path=path,
    )


def special_file(path: str, mode: int) -> ReadkeeperError | None:
    """The refusal of an edit or write of a FIFO, socket or device (`mode`, its lstat),
    None for anything else: such a file is never opened, whatever the session read, so
    the refusal comes before any read-state check, and names no read (a read of it is
    refused too)."""
    what = _kind_of(mode)
    if what is None:
        return None
    return ReadkeeperError(
        "unsupported",
        f"{quoting.name(path)} is {what}, not a regular file; readkeeper never opens one to "
        "read or write it. Write a regular file instead (another path), or ask the user to "
        "replace it with one.",
        file_path=path,
    )


def is_directory(path: str, *, to_write: bool = False) -> ReadkeeperError:
    """The refusal of a folder where a file was expected, with what to do instead."""
    instead = (
        f"Give the path of a file (e.g. {os.path.join(path, 'name.txt')})."
        if to_write
        else f"List its entries ({call('list', path=path)}) and read one of its files."
    )
    return ReadkeeperError("is_directory", f"{path} is a directory. {instead}", file_path=path)


@contextmanager
def open_path(workspace: Resolver, file_path: str, session: str = "") -> Iterator[OpenedFile]:
    """Open a user-given path for reading, beneath its permitted folder.

    Most paths name a file inside a root with no symlink on the way: opened as written
    (no symlink allowed), that costs a single lookup. Anything else (a symlink on the
    way, a missing file, a path outside the roots) takes the long way: the real path,
    the permission check, and the error with suggestions.
    """
    with ExitStack() as stack:
        opened: OpenedFile | None = None
        where = workspace.direct(file_path)
        if where is not None:
            try:
                opened = stack.enter_context(open_regular(where))
            except ReadkeeperError as exc:
                if exc.kind not in ("not_found", "stale"):
                    raise
        if opened is None:
            opened = stack.enter_context(open_regular(workspace.resolve(file_path, session)))
        yield opened


@contextmanager
def open_regular(where: Location) -> Iterator[OpenedFile]:
    """Open a file for reading if it is a regular file, else raise a clear error."""
    try:
        folder = where.open_folder()
    except OSError as exc:
        raise opening_error(where.path, exc) from None
    try:
        with open_regular_in(folder, where.name, where.path) as opened:
            yield opened
    finally:
        os.close(folder)


@contextmanager
def open_regular_in(folder: int, name: str, path: str) -> Iterator[OpenedFile]:
    """Open the entry `name` of an open folder (shown to the agent as `path`)."""
    try:
        pre = lstat_in(folder, name)
    except OSError as exc:
        raise opening_error(path, exc) from None
    if pre is None:
        raise _open_error(path, FileNotFoundError(errno.ENOENT, "No such file", path))
    # Refuse devices, FIFOs and sockets before opening: opening some devices has side
    # effects (a tape rewinds, a serial line hangs up) even with O_NONBLOCK.
    _refuse_irregular(path, pre.st_mode)
    if stat.S_ISLNK(pre.st_mode):
        raise moved(path)  # the real path had no link here: it was just planted
    try:
        fd = open_in(folder, name, _OPEN_FLAGS)
    except OSError as exc:
        raise opening_error(path, exc) from None
    try:
        now = time.time_ns()  # before the stat: a change after it is on a later tick
        st = os.fstat(fd)  # the file we actually opened, whatever happened to the name
        _refuse_irregular(path, st.st_mode)
        yield OpenedFile(path, fd, st.st_size, st.st_mtime_ns, st.st_mode, proof(st, now))
    finally:
        os.close(fd)


def _refuse_irregular(path: str, mode: int) -> None:
    if stat.S_ISDIR(mode):
        raise is_directory(path)
    what = _kind_of(mode)
    if what:
        raise _not_regular(path, what)


def moved(path: str, exc: OSError | None = None) -> ReadkeeperError:
    """A symlink appeared on the way to a path between resolving and opening it (or,
    `exc` says so, a folder on the way was moved away as folders were made in it)."""
    if exc is not None and exc.errno == errno.ESTALE:
        return folder_moved(path)
    return ReadkeeperError(
        "stale",
        f"{path} changed while readkeeper opened it: it, or a folder on its way, was "
        "replaced by a symbolic link, and readkeeper never follows a link it has not "
        "checked. Read it again (by its new path, if it moved).",
        file_path=path,
        moved=True,
    )


def folder_moved(path: str) -> ReadkeeperError:
    """A change refused because the file's folder left its path while it was written."""
    return ReadkeeperError(
        "stale",
        f"{quoting.name(path)} was not changed: its folder was moved, replaced or removed "
        "while readkeeper wrote it, and a change lands only where its path leads beneath "
        "the workspace root (nothing of it is left where the folder went). Look for "
        f"the file where it is now ({call('glob', pattern=glob_of_name(path))}) "
        "and read it again.",
        file_path=path,
        moved=True,
    )


# What an open of a resolved path fails with when the tree changed under it: a symlink
# on the way (ELOOP, the `Moved` beneath.py raises), a way up and out (EXDEV).
RACE_ERRNOS = frozenset({errno.ELOOP, errno.EXDEV})


def race(exc: OSError) -> bool:
    """Whether an open beneath a root failed because the tree changed since the path was
    resolved (`moved` is its answer): never a fault of readkeeper's, nor the caller's."""
    return isinstance(exc, Moved) or exc.errno in RACE_ERRNOS


def opening_error(path: str, exc: OSError) -> ReadkeeperError:
    """The one answer to an open beneath a root that failed after `path` was resolved,
    for a read, a listing or a search: a race is `stale` (read again), a name too long
    for the system `bad_params`, a path gone `not_found`; never `internal`."""
    if race(exc):
        return moved(path)
    if exc.errno == errno.ENAMETOOLONG:
        return too_long(path)
    return _open_error(path, exc)


def too_long(path: str, field: str = "file_path") -> ReadkeeperError:
    """The refusal of a path no file can have: a name over NAME_MAX bytes, or a path over
    PATH_MAX (files/reach.py `too_long` says which)."""
    return ReadkeeperError(
        "bad_params",
        f"{path} is longer than any file's path can be: each name is at most 255 bytes, "
        f"and the whole path at most 4,095, so nothing is there and nothing can be made "
        f"there. Give a shorter path (glob finds a file by part of its name, e.g. "
        f"{call('glob', pattern=glob_of_name(path, 40))}).",
        field=field,
        file_path=path,
    )


def _open_error(path: str, exc: OSError) -> ReadkeeperError:
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return ReadkeeperError(
            "not_found",
            f"{path} disappeared while being opened. Read it again.",
            file_path=path,
            suggestions=[],
        )
    if exc.errno == errno.EISDIR:
        return is_directory(path)
    if exc.errno == errno.ENXIO:
        return _not_regular(path, "a socket or a device with nothing behind it")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return ReadkeeperError(
            "unsupported",
            f"Permission denied reading {path}. Ask the user to make it readable.",
            file_path=path,
        )
    return ReadkeeperError(
        "unsupported", f"Cannot open {path}: {exc.strerror or exc}.", file_path=path
    )


def read_at_most(fd: int, limit: int) -> bytes:
    """Up to `limit` bytes from `fd`'s current position (stops early at EOF), counted
    against the running call's share of the server's file bytes (held_bytes.py), which
    may wait for room or refuse `too_large` (reason `busy`). A regular file is read in
    one piece of its size (and one byte more, to see it grew): no second copy of its
    bytes, even for a moment, and one block the allocator gives back whole."""
    try:
        size = os.fstat(fd).st_size
    except OSError:
        size = 0
    held_bytes.hold(min(size, limit))
    parts: list[bytes] = []
    remaining = limit
    piece = min(max(size + 1, _CHUNK), remaining)
    while remaining > 0:
        try:
            chunk = os.read(fd, min(piece, remaining))
        except BlockingIOError:
            raise _waits_for_events() from None
        if not chunk:
            break
        parts.append(chunk)
        remaining -= len(chunk)
        piece = _CHUNK
    return parts[0] if len(parts) == 1 else b"".join(parts)


def read_small_in(folder: int, name: str | bytes, limit: int) -> bytes:
    """The first `limit` bytes of the regular file `name` in an open folder: a side file
    readkeeper reads for itself (an ignore file, a `.git` file), not one the agent asked
    for. Raises OSError (FileNotFoundError when there is none) for anything else: a FIFO
    or a device is never opened (a FIFO would block, some devices act when opened), nor
    a symlink (it could lead anywhere)."""
    pre = lstat_in(folder, name)
    if pre is None:
        raise FileNotFoundError(errno.ENOENT, "No such file", name)
    if not stat.S_ISREG(pre.st_mode):
        raise OSError(errno.EINVAL, "not a regular file", name)
    fd = open_in(folder, name, _OPEN_FLAGS)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped since the lstat
            raise OSError(errno.EINVAL, "not a regular file", name)
        parts: list[bytes] = []
        while limit > 0 and (chunk := os.read(fd, min(_CHUNK, limit))):
            parts.append(chunk)
            limit -= len(chunk)
        return b"".join(parts)
    finally:
        os.close(fd)


def read_small(path: str | bytes, limit: int) -> bytes:
    """`read_small_in` of a path's last name in its folder (a folder of readkeeper's own,
    or one the caller checked: the way to it is not confined)."""
    folder = os.open(os.path.dirname(path) or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        return read_small_in(folder, os.path.basename(path), limit)
    finally:
        os.close(folder)


def peek(fd: int, size: int) -> bytes:
    """The first `size` bytes of an open file, wherever its position is."""
    try:
        return os.pread(fd, size, 0)
    except BlockingIOError:
        raise _waits_for_events() from None


def _waits_for_events() -> ReadkeeperError:
    # A "regular" file that is a kernel interface (/proc/kmsg) with nothing to say yet:
    # what it would say later is not a file's content.
    return ReadkeeperError(
        "unsupported",
        "This file has no content to read yet (a kernel interface that waits for events, "
        "such as /proc/kmsg); readkeeper reads only files with content. Read a regular "
        "file instead.",
    )


def digest(data: bytes) -> str:
    """The content digest the read-state records: a file changed when it differs.

    SHA-256, cut to 128 bits: OpenSSL's runs on the CPU's SHA instructions, over twice as
    fast as BLAKE2b here, and a stub re-read hashes the whole file."""
    return hashlib.sha256(data).hexdigest()[:32]
