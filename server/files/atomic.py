"""Replacing a file's bytes atomically, without losing another program's write.

Crash safety: the new bytes go to a temporary file in the same directory (so the rename
is atomic), are fsynced, and only then take the file's name; the directory is fsynced
after. A kill -9 or a power cut at any moment leaves the old file or the new one, never
a truncated mix. The new file keeps the old one's mode bits (and owner, when we may set
it). Every name is opened, created and renamed relative to the folder's descriptor,
opened beneath the workspace root (`beneath.Location`), so no symlink planted in the
meantime can send the temporary file or the rename anywhere else. That descriptor
follows its folder if another program moves the folder away (out of the workspace): so
just before the rename, and again after it, the folder must still be the one its path
leads to (`Location.in_place`); when it is not, the rename is taken back (the swap
undone, a created name removed) and the change refused, so nothing is left outside.

Lost updates: between reading a file and replacing it, another program may write it.
There are two kinds of writers, and a guard for each:

- In-place writers (truncate-and-write, as most formatters do; appenders). On Linux the
  file is held under a read lease (`fcntl(F_SETLEASE)`, leases.py) from before it is
  read until the commit is done. The kernel grants a read lease only when no process has
  the file open for writing, and makes any process that opens it for writing wait until
  the lease is released (a few milliseconds here). So what we read is never a half-
  written file. A writer kept waiting has already looked the name up, and would write
  into the old inode once let go; so the commit asks the kernel (`F_GETLEASE`) whether a
  writer is waiting, just before and just after the swap below, and if one is, the old
  file goes back under the name, the writer goes first, and the caller looks again. What
  is left is a writer whose `open` falls between those two checks, one system call
  apart.
- Rename writers (editors' atomic saves, `git checkout`) never open our inode; they put
  a new one under the name. So the new file is not renamed over the name but swapped
  with it (`renameat2(RENAME_EXCHANGE)` on Linux, `renamex_np(RENAME_SWAP)` on macOS):
  the inode that comes out must be the one we read. If it is not, the swap is undone and
  the caller looks at the file again.

Where these are not available (other systems, filesystems without them, files owned by
someone else), the file is compared with what was read just before an ordinary rename:
the window left is microseconds, and `held.leased` tells the caller so it can be more
careful (the edit path then refuses to merge changes that could be a write in progress).
"""

from __future__ import annotations

import ctypes
import errno
import os
import secrets
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

from .beneath import Location, Moved, lstat_in, open_in
from .fileio import OpenedFile, folder_moved, moved, open_regular_in

# Raised by `hold`; callers catch it from here, where they hold files.
from .leases import Busy as Busy
from .leases import lease, unlease, writer_waiting
from .pending import JOURNAL, TEMP_SUFFIX

if sys.platform == "linux":
    pass


# renameat2(2) flags (Linux) and renameatx_np(2) flags (macOS).
_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2
_MAC_RENAME_SWAP = 0x2
_MAC_RENAME_EXCL = 0x4
_UNSUPPORTED = frozenset(
    {errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, getattr(errno, "ENOTSUP", errno.EOPNOTSUPP)}
)


def _load_rename() -> tuple[Any, Any]:
    if os.name != "posix":
        return None, None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None, None
    linux = getattr(libc, "renameat2", None)
    if linux is not None:
        linux.argtypes = [
            ctypes.c_int,
            ctypes.c_char_p,
            ctypes.c_int,
            ctypes.c_char_p,
            ctypes.c_uint,
        ]
        linux.restype = ctypes.c_int
    mac = getattr(libc, "renameatx_np", None)
    if mac is not None:
        mac.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        mac.restype = ctypes.c_int
    return linux, mac


_renameat2, _renameatx_np = _load_rename()


@dataclass(frozen=True)
class Held:
    """An existing regular file, open for reading, that the caller means to replace."""

    opened: OpenedFile
    folder: int  # its folder, open (beneath the root) for creating and renaming in it
    name: str  # its name in that folder
    leased: bool  # no other program can be writing it in place while held
    identity: tuple[int, int]  # (st_dev, st_ino) of the file we read
    mode: int
    owner: tuple[int, int]
    where: Location  # its path, and the folder it is reached beneath


@contextmanager
def hold(where: Location) -> Iterator[Held]:
    """Open a file and, where the system allows, lease it until the block ends.

    Raises `Busy` when another program keeps it open for writing, and the errors of
    `fileio.open_regular` for what is not a regular file.
    """
    with _folder(where) as folder, open_regular_in(folder, where.name, where.path) as opened:
        st = os.fstat(opened.fd)
        leased = lease(opened.fd, folder, st.st_dev, where.path)
        try:
            yield Held(
                opened,
                folder,
                where.name,
                leased,
                (st.st_dev, st.st_ino),
                st.st_mode & 0o7777,
                (st.st_uid, st.st_gid),
                where,
            )
        finally:
            if leased:
                unlease(opened.fd)


def replace(held: Held, data: bytes, expected: bytes) -> os.stat_result | None:
    """Put `data` under the held file's name, if the file still holds `expected`.

    Returns the new file's stat, or None when the file changed or was replaced since it
    was read: nothing was changed then, and the caller must look at the file again.
    """
    folder, name = held.folder, held.name
    tmp: str | None
    tmp, new_stat, entry = _write_temp(
        folder,
        os.path.dirname(held.opened.path),
        name,
        data,
        held.mode,
        held.owner,
        held.opened.fd,
    )
    ours = (new_stat.st_dev, new_stat.st_ino)
    try:
        if writer_waiting(held.opened.fd, held.leased) or not (
            _named(held) and _unchanged(held, expected)
        ):
            return None
        if not held.where.in_place(folder):
            raise folder_moved(held.where.path)
        if _swap(folder, tmp, name):
            # A writer that looked the name up before the swap and is now waiting on
            # our lease would write into the file we just swapped out: hand it back.
            if (
                writer_waiting(held.opened.fd, held.leased)
                or _identity_of(folder, tmp) != held.identity
                or not _unchanged(held, expected)
            ):
                _undo_swap(folder, tmp, name, ours)
                return None
            if not held.where.in_place(folder):  # moved out as we swapped: take it back
                _undo_swap(folder, tmp, name, ours)
                raise folder_moved(held.where.path)
        else:
            os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
            tmp = None
    finally:
        if tmp is not None:
            _unlink_quietly(folder, tmp)
        JOURNAL.done(entry)
    _fsync(folder)
    return new_stat


def create(where: Location, data: bytes) -> os.stat_result | None:
    """Create the file holding `data`; None if a file appeared there meanwhile (it is
    left untouched). Its folders must exist."""
    with _folder(where) as folder:
        name = where.name
        tmp: str | None
        tmp, new_stat, entry = _write_temp(
            folder, os.path.dirname(where.path), name, data, None, None
        )
        try:
            if not where.in_place(folder):
                raise folder_moved(where.path)
            done = _rename_flags(folder, tmp, name, _RENAME_NOREPLACE, _MAC_RENAME_EXCL)
            if done is None:
                return None
            if done:
                tmp = None
            else:
                try:
                    # Fails rather than replace an existing name.
                    os.link(tmp, name, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
                except FileExistsError:
                    return None
                except OSError as exc:
                    if exc.errno not in (errno.EPERM, errno.EMLINK, *_UNSUPPORTED):
                        raise
                    # A filesystem with neither: check, then rename (a microsecond window).
                    if lstat_in(folder, name) is not None:
                        return None
                    os.rename(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
                    tmp = None
            if not where.in_place(folder):  # moved out as we named it: take it back
                with suppress(FileNotFoundError):
                    if _identity_of(folder, name) == (new_stat.st_dev, new_stat.st_ino):
                        _unlink_quietly(folder, name)
                raise folder_moved(where.path)
        finally:
            if tmp is not None:
                _unlink_quietly(folder, tmp)
            JOURNAL.done(entry)
        _fsync(folder)
        return new_stat


# --- the pieces --------------------------------------------------------------------------


@contextmanager
def _folder(where: Location) -> Iterator[int]:
    """The location's folder, opened beneath its root for writing in it."""
    try:
        folder = where.open_folder(write=True)
    except Moved:
        raise moved(where.path) from None
    try:
        yield folder
    finally:
        os.close(folder)


def _named(held: Held) -> bool:
    """The name still points at the held file."""
    try:
        return _identity_of(held.folder, held.name) == held.identity
    except FileNotFoundError:
        return False


def _unchanged(held: Held, expected: bytes) -> bool:
    """The held file (wherever its name is now) still holds `expected`."""
    fd = held.opened.fd
    if os.fstat(fd).st_size != len(expected):
        return False
    return _pread_all(fd, len(expected) + 1) == expected


def _pread_all(fd: int, limit: int) -> bytes:
    parts: list[bytes] = []
    offset = 0
    while offset < limit:
        chunk = os.pread(fd, min(1 << 20, limit - offset), offset)
        if not chunk:
            break
        parts.append(chunk)
        offset += len(chunk)
    return b"".join(parts)


def _identity_of(folder: int, name: str) -> tuple[int, int]:
    st = os.stat(name, dir_fd=folder, follow_symlinks=False)
    return st.st_dev, st.st_ino


def _write_temp(
    folder: int,
    folder_path: str,
    name: str,
    data: bytes,
    mode: int | None,
    owner: tuple[int, int] | None,
    original: int | None = None,
) -> tuple[str, os.stat_result, bytes | None]:
    """The temporary file holding `data`, its stat, and its journal entry (pending.py:
    written down before it exists, so that a kill at any moment leaves nothing the next
    start does not remove)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    while True:
        # Hidden, and recognisably ours; within NAME_MAX however long the name's bytes.
        tmp = f".{_shortened(name)}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
        entry = JOURNAL.add(folder_path, tmp)
        try:
            # A new file gets 0o666 less the umask, like any editor's; a replacement
            # starts private and gets the old file's mode below.
            fd = open_in(folder, tmp, flags, 0o600 if mode is not None else 0o666)
            break
        except FileExistsError:
            JOURNAL.done(entry)
            continue
        except BaseException:
            JOURNAL.done(entry)
            raise
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        if os.name == "posix":
            # After the bytes: a write by a process without CAP_FSETID clears set-id
            # bits. chown before chmod, since chown clears them too. Only root may
            # give a file away; otherwise it becomes ours, as with any editor's save.
            if owner is not None and owner != (os.getuid(), os.getgid()):
                with suppress(PermissionError):
                    os.fchown(fd, *owner)
            if mode is not None:
                os.fchmod(fd, mode)
            # After the mode: an ACL carries the group bits, and fchmod would rewrite
            # its mask.
            if original is not None:
                _copy_xattrs(original, fd)
        os.fsync(fd)
        new_stat = os.fstat(fd)
    except BaseException:
        os.close(fd)
        _unlink_quietly(folder, tmp)
        JOURNAL.done(entry)
        raise
    os.close(fd)
    return tmp, new_stat, entry


def _copy_xattrs(source: int, target: int) -> None:
    """Give the replacement the original's extended attributes (user.*, POSIX ACLs, and
    whatever else this user may set): an edit changes the text, not the file's metadata.
    Names the user may not set (security.*, trusted.* when not root) or the filesystem
    refuses are left out rather than fail the edit."""
    listxattr = getattr(os, "listxattr", None)
    if listxattr is None:
        return
    try:
        names = listxattr(source)
    except OSError:
        return  # a filesystem without extended attributes
    for attr in names:
        try:
            os.setxattr(target, attr, os.getxattr(source, attr))
        except OSError:
            continue


def _shortened(name: str, limit: int = 180) -> str:
    """`name` cut to at most `limit` bytes of the filesystem encoding, at a character
    (180 non-ASCII characters are up to 720 bytes: with our affixes, over NAME_MAX)."""
    cut = name[:limit]
    while len(os.fsencode(cut)) > limit:
        cut = cut[:-1]
    return cut


def _rename_flags(folder: int, src: str, dst: str, linux_flag: int, mac_flag: int) -> bool | None:
    """Rename within a folder with a flag: True when done, False when the system or
    filesystem lacks it, None when the flag was "don't replace" and `dst` exists."""
    if _renameat2 is not None:
        rc = _renameat2(folder, os.fsencode(src), folder, os.fsencode(dst), linux_flag)
    elif _renameatx_np is not None:
        rc = _renameatx_np(folder, os.fsencode(src), folder, os.fsencode(dst), mac_flag)
    else:
        return False
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err == errno.EEXIST:
        return None
    if err in _UNSUPPORTED:
        return False
    raise OSError(err, os.strerror(err), dst)


def _swap(folder: int, a: str, b: str) -> bool:
    """Exchange two names atomically; False when this system cannot."""
    return _rename_flags(folder, a, b, _RENAME_EXCHANGE, _MAC_RENAME_SWAP) is True


def _undo_swap(folder: int, tmp: str, name: str, ours: tuple[int, int]) -> None:
    """Put back what our swap took out; `tmp` is then deleted by the caller."""
    try:
        _swap(folder, tmp, name)
    except FileNotFoundError:
        # The name was deleted after our swap: ours went with it, so bring back theirs.
        _rename_flags(folder, tmp, name, _RENAME_NOREPLACE, _MAC_RENAME_EXCL)
        return
    if _identity_of(folder, tmp) != ours:
        # A third program replaced the file between our two swaps: its version is the
        # newest, so it goes back under the name (the older one would have been
        # replaced by it anyway).
        _swap(folder, tmp, name)


def _unlink_quietly(folder: int, name: str) -> None:
    with suppress(FileNotFoundError):
        os.unlink(name, dir_fd=folder)


def _fsync(folder: int) -> None:
    """Make the rename itself durable; some filesystems cannot, which is no error."""
    with suppress(OSError):
        os.fsync(folder)


def rename_new(src_folder: int, src: str, dst_folder: int, dst: str) -> bool:
    """Rename the entry `src` of one open folder to `dst` in another, never replacing
    what is at `dst` (FileExistsError then): `renameat2(RENAME_NOREPLACE)`, else for a
    file a hard link and an unlink (the link fails on an existing name). False where the
    system can do neither (a folder without renameat2): nothing was renamed."""
    if _renameat2 is not None or _renameatx_np is not None:
        if _renameat2 is not None:
            flags = _RENAME_NOREPLACE
            rc = _renameat2(src_folder, os.fsencode(src), dst_folder, os.fsencode(dst), flags)
        else:
            flags = _MAC_RENAME_EXCL
            rc = _renameatx_np(src_folder, os.fsencode(src), dst_folder, os.fsencode(dst), flags)
        if rc == 0:
            return True
        err = ctypes.get_errno()
        if err not in _UNSUPPORTED:
            raise OSError(err, os.strerror(err), dst)
    found = lstat_in(src_folder, src)
    if found is None or not stat.S_ISREG(found.st_mode):
        return False
    os.link(src, dst, src_dir_fd=src_folder, dst_dir_fd=dst_folder, follow_symlinks=False)
    os.unlink(src, dir_fd=src_folder)
    return True
