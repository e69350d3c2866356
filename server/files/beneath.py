"""Opening workspace paths beneath the root's open descriptor, so no symlink leads out.

Checking a path and then opening it by name races with anyone who can rename things in
the workspace: between the two, a folder can become a symlink to `/etc`. So a workspace
path is never opened by name. Each root is opened once, as an `Anchor`, and every open,
create, rename and stat is relative to a descriptor that was itself opened beneath it:

- the folder holding the file is opened with Linux's `openat2(RESOLVE_BENEATH |
  RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)`, one system call the kernel resolves
  atomically, or, where that is missing, one `openat(O_NOFOLLOW)` per component;
- the file itself is then a single name in that folder, opened or renamed with
  `O_NOFOLLOW` (and `AT_SYMLINK_NOFOLLOW`).

The paths handed here are real paths (the caller resolved symlinks to decide whether
the path is permitted at all), so no symlink is left to follow: finding one means the
tree changed since, and the operation fails with `Moved` rather than follow it.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import stat
import sys
import threading
import weakref
from collections.abc import Generator
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
# A descriptor that only names a folder (Linux); elsewhere a read-only one.
_O_PATH = getattr(os, "O_PATH", os.O_RDONLY)

# openat2(2): the system call number is 437 on every Linux architecture but Alpha.
_SYS_OPENAT2 = 547 if platform.machine() == "alpha" else 437
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_RESOLVE = _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS


class Moved(OSError):
    """A component of the path is now a symlink, or not where the caller saw it: the
    tree changed between resolving the path and opening it."""


class _OpenHow(ctypes.Structure):
    _fields_ = (
        ("flags", ctypes.c_uint64),
        ("mode", ctypes.c_uint64),
        ("resolve", ctypes.c_uint64),
    )


def _load_openat2() -> Any:
    if sys.platform != "linux":
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    syscall = libc.syscall
    syscall.restype = ctypes.c_long
    return syscall


_syscall = _load_openat2()
# One read-only `open_how` per set of flags (there are two).
_HOWS: dict[int, _OpenHow] = {}
_HOW_SIZE = ctypes.sizeof(_OpenHow)
# None until the first call tells whether the kernel (or a seccomp filter) allows it.
_openat2_works: bool | None = None if _syscall is not None else False
_probe_lock = threading.Lock()


def _openat2(dir_fd: int, path: str, flags: int) -> int | None:
    """openat2 beneath `dir_fd`; None when this system cannot do it."""
    global _openat2_works
    if _openat2_works is False:
        return None
    how = _HOWS.get(flags)
    if how is None:
        how = _HOWS[flags] = _OpenHow(flags | _CLOEXEC, 0, _RESOLVE)
    fd = int(_syscall(_SYS_OPENAT2, dir_fd, os.fsencode(path), ctypes.byref(how), _HOW_SIZE))
    if fd >= 0:
        _openat2_works = True
        return fd
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EPERM) and _openat2_works is None:
        # An old kernel, or a container's seccomp filter refusing the call.
        with _probe_lock:
            _openat2_works = False
        return None
    raise _error(err, path)


def _error(err: int, path: str) -> OSError:
    if err in (errno.ELOOP, errno.EXDEV):
        # ELOOP: a symlink where the real path had none. EXDEV: the path left the anchor.
        return Moved(err, "a component of the path changed while it was opened", path)
    return OSError(err, os.strerror(err), path)


def _walk(dir_fd: int, parts: list[str], flags: int) -> int:
    """The portable way: one `openat(O_NOFOLLOW)` per component."""
    current = dir_fd
    try:
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            step_flags = flags if last else _O_PATH | _DIRECTORY
            fd = _open_step(current, part, step_flags)
            if current != dir_fd:
                os.close(current)
            current = fd
    except BaseException:
        if current != dir_fd:
            os.close(current)
        raise
    return current if parts else os.open(".", flags | _CLOEXEC, dir_fd=dir_fd)


def _open_step(folder: int, name: str, flags: int) -> int:
    """One component, never followed if it is a symlink."""
    try:
        return os.open(name, flags | _NOFOLLOW | _CLOEXEC, dir_fd=folder)
    except OSError as exc:
        err = exc.errno or 0
        if err == errno.ENOTDIR and _not_a_file(folder, name):
            # O_PATH | O_NOFOLLOW | O_DIRECTORY on a symlink says "not a directory"; a
            # folder there now was something else a moment ago: both, a swap.
            err = errno.ELOOP
        raise _error(err, name) from None


def _not_a_file(folder: int, name: str) -> bool:
    """Whether `name`, which an open just found not to be a folder, is anything but a
    plain file now (a symlink, or a folder again): the tree changed under the open."""
    try:
        mode = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
    except OSError:
        return True  # gone since: it changed too
    return stat.S_ISLNK(mode) or stat.S_ISDIR(mode)


def goes_up(relative: str) -> bool:
    """Whether the path `relative` names `..` (`_parts` refuses it), by scans of its text."""
    up = os.pardir
    return (
        relative == up
        or relative.startswith(up + os.sep)
        or relative.endswith(os.sep + up)
        or f"{os.sep}{up}{os.sep}" in relative
    )


def _parts(relative: str) -> list[str]:
    parts = relative.split(os.sep)
    if "" in parts or "." in parts or ".." in parts:  # scans in C: a real path has none
        parts = [p for p in parts if p and p != "."]
    if ".." in parts:
        # Real paths have none; one here would be a way up and out.
        raise Moved(errno.EXDEV, "a path beneath a folder may not go up", relative)
    return parts


def _open_real(path: str) -> int:
    """A descriptor (O_PATH) of the real folder `path`, no symlink followed (`Anchor.open`)."""
    top = os.open(os.sep, _O_PATH | _DIRECTORY | _CLOEXEC)
    try:
        relative = path.lstrip(os.sep)
        parts = _parts(relative)
        flags = _O_PATH | _DIRECTORY
        fd = _openat2(top, relative if parts else ".", flags)
        return fd if fd is not None else _walk(top, parts, flags)
    finally:
        os.close(top)


@dataclass(eq=False)
class Anchor:
    """A folder readkeeper may work in (a root, an allowed path), held open so that
    paths beneath it are resolved from the folder itself, whatever its name now is."""

    path: str  # its real path when it was opened
    fd: int = field(repr=False)
    identity: tuple[int, int] = (0, 0)  # (st_dev, st_ino) of the folder held

    @classmethod
    def open(cls, path: str) -> Anchor:
        """Open the folder at `path` (an absolute real path) as an anchor, following no
        symlink on the way: a real path has none, so one there now was planted since
        (`Moved`). Raises OSError (FileNotFoundError when it is gone, NotADirectoryError
        for a file) when it cannot."""
        return cls._held(path, _open_real(path))

    @classmethod
    def beneath(cls, outer: Anchor, path: str) -> Anchor:
        """Open the folder at `path` (an absolute real path within `outer`) as an anchor,
        beneath `outer`'s descriptor and following no symlink: what is opened beneath it
        then stays beneath both."""
        prefix = outer.path.rstrip(os.sep) + os.sep
        if path != outer.path and not path.startswith(prefix):
            raise Moved(errno.EXDEV, "the folder is not beneath its outer anchor", path)
        return cls._held(path, outer.open_folder(path[len(prefix) :]))

    @classmethod
    def _held(cls, path: str, fd: int) -> Anchor:
        st = os.fstat(fd)
        anchor = cls(path, fd, (st.st_dev, st.st_ino))
        # Closed when the last user lets go: a request in flight may still hold it
        # after the roots changed, and closing it under that request could hand its
        # number to another file.
        weakref.finalize(anchor, os.close, fd)
        return anchor

    def current(self) -> bool:
        """Whether the folder held is still the one at its path: False once it was
        deleted, moved away, or replaced (`rm -rf ws && git clone ... ws`, `mv ws
        ws.old && mkdir ws`, a symlink put in its place). One lstat: while the folder is
        held open its inode cannot be freed, so its number cannot name another folder."""
        try:
            st = os.lstat(self.path)
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == self.identity

    def open_folder(self, relative: str, *, write: bool = False) -> int:
        """A descriptor of the folder at `relative` (a real path relative to the
        anchor; "" for the anchor itself). `write` makes it one that can be fsynced.
        `Moved` (naming the whole path) when a symlink stands on the way, or a folder
        on it is one no more (NotADirectoryError only for a plain file there)."""
        flags = (os.O_RDONLY if write else _O_PATH) | _DIRECTORY
        if goes_up(relative):
            _parts(relative)  # raises Moved
        try:
            try:
                # Its names are split only for the walk a name at a time: a path of
                # 2,000 folders split at every level above it was 4,000,000 (round 46).
                fd = _openat2(self.fd, relative.lstrip(os.sep) or ".", flags)
            except NotADirectoryError:
                fd = None  # which name, and is it a plain file? One step at a time says
            return fd if fd is not None else _walk(self.fd, _parts(relative), flags)
        except Moved as exc:
            raise self._moved(relative, exc) from None

    def in_place(self, relative: str, fd: int) -> bool:
        """Whether `fd` (the folder at `relative` beneath this anchor, opened earlier) is
        still the folder at that path: reached beneath this anchor, which is still at its
        own path. A folder moved out of the workspace (or replaced) since it was opened is
        not: its descriptor follows it wherever it went, so a change made through it would
        land outside (attack round 25)."""
        if not self.current():
            return False
        try:
            fresh = self.open_folder(relative)
        except OSError:  # gone, or a symlink in its place (`Moved`)
            return False
        try:
            now, held = os.fstat(fresh), os.fstat(fd)
        finally:
            os.close(fresh)
        return (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)

    def make_folders(self, relative: str, mode: int = 0o777) -> MadeFolders:
        """Create the missing folders of `relative`, each beneath the one before it:
        `Moved` when one is or becomes a symlink, or the folder made in is gone. Returns
        the folders made, for the caller to take back if what they were made for fails
        (use it as a context manager: an error inside takes them back)."""
        parts = _parts(relative)
        current = os.dup(self.fd)
        made = MadeFolders()
        try:
            for part in parts:
                try:
                    try:
                        os.mkdir(part, mode, dir_fd=current)
                        made.folders.append((os.dup(current), part))
                    except FileExistsError:
                        pass
                    fd = _open_step(current, part, _O_PATH | _DIRECTORY)
                except FileNotFoundError:  # the folder made in, or the one made, is gone
                    raise Moved(errno.ENOENT, "a folder was removed as it was made", part) from None
                os.close(current)
                current = fd
            if made.folders and not self.in_place(relative, current):
                # A folder on the way was moved away as these were made in it (its
                # descriptor follows it): take them back, as atomic.py does a file.
                raise Moved(errno.ESTALE, "a folder on the way was moved as it was made", relative)
        except BaseException as exc:
            made.take_back()
            made.close()
            if isinstance(exc, Moved):
                raise self._moved(relative, exc) from None
            raise
        finally:
            os.close(current)
        return made

    def _moved(self, relative: str, exc: Moved) -> Moved:
        """`exc` naming the whole path (beneath the anchor), as a message shows it."""
        where = os.path.join(self.path, relative) if relative else self.path
        return Moved(exc.errno, exc.strerror, where)


class MadeFolders:
    """The folders `Anchor.make_folders` made, each held by its parent's descriptor (so
    they are taken back wherever a racing program moved them), until `close`."""

    def __init__(self) -> None:
        self.folders: list[tuple[int, str]] = []

    def take_back(self) -> None:
        """Remove the folders made, deepest first; one that is not empty (another
        program put something in it) stays."""
        for parent, name in reversed(self.folders):
            with suppress(OSError):
                os.rmdir(name, dir_fd=parent)

    def close(self) -> None:
        for parent, _ in self.folders:
            os.close(parent)
        self.folders = []

    def __enter__(self) -> MadeFolders:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is not None:
            self.take_back()
        self.close()


def lstat_in(folder_fd: int, name: str | bytes) -> os.stat_result | None:
    """The entry `name` in a folder, not followed if it is a symlink; None if missing."""
    try:
        return os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def folders_down(root: str, relative: str) -> Generator[tuple[str, int], None, None]:
    """The real path `root` and each folder on the way down to `relative` beneath it
    (relative to `root`: "" for itself), each with a descriptor (O_PATH, closed when
    the next is opened) opened from the one above it following no symlink: a name
    looked up a folder (by its path each cost its depth: round 46). It ends at a folder
    that is not there; OSError for a symlink or a file on the way (NotADirectoryError)."""
    fd = Anchor.open(root).open_folder("")
    at = ""
    try:
        yield at, fd
        for name in _parts(relative):
            try:
                below = os.open(name, _O_PATH | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
            except FileNotFoundError:
                return
            os.close(fd)
            fd, at = below, f"{at}{os.sep}{name}" if at else name
            yield at, fd
    finally:
        os.close(fd)


def no_link_beneath(folder: str, relative: str) -> bool | None:
    """Whether the system, resolving `relative` beneath the real folder `folder` (one
    `openat2` following no symlink), meets no symlink: True (a name missing or a file
    on the way ends it: no link follows), False when it meets one, None when it cannot
    say (no `openat2`, no search permission, `folder` not there): reach.py `_passed`."""
    try:
        top = _open_real(folder)
    except OSError:
        return None
    try:
        fd = _openat2(top, relative or ".", _O_PATH)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except OSError as exc:
        return False if isinstance(exc, Moved) else None
    finally:
        os.close(top)
    if fd is not None:
        os.close(fd)
    return None if fd is None else True


def looked_at(folder_fd: int, name: str | bytes) -> os.stat_result | None:
    """`lstat_in`, None also when the entry cannot be looked at (no permission, a folder
    on the way gone): for what readkeeper judges on its own, where that is nothing."""
    try:
        return lstat_in(folder_fd, name)
    except OSError:
        return None


def open_in(folder_fd: int, name: str | bytes, flags: int, mode: int = 0o666) -> int:
    """Open the entry `name` of a folder, never through a symlink."""
    try:
        return os.open(name, flags | _NOFOLLOW | _CLOEXEC, mode, dir_fd=folder_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Moved(exc.errno, "the file is now a symbolic link", name) from None
        raise


def openat2_available() -> bool:
    """Whether opens here go through openat2 (after the first one has told)."""
    return _openat2_works is True


def force_portable_walk(on: bool) -> None:
    """Tests: take the component-by-component path even where openat2 works."""
    global _openat2_works
    _openat2_works = False if on else (None if _syscall is not None else False)


@dataclass(frozen=True)
class Location:
    """A permitted real path, and the open folder (`anchor`) it is reached beneath."""

    path: str  # absolute and real: what results show
    anchor: Anchor
    folder: str  # the parent folder, relative to the anchor ("" for the anchor itself)
    name: str  # the entry in that folder ("." for the anchor itself)

    def open_folder(self, *, write: bool = False) -> int:
        """A descriptor of the parent folder, opened beneath the anchor; the caller
        closes it."""
        return self.anchor.open_folder(self.folder, write=write)

    def in_place(self, folder_fd: int) -> bool:
        """Whether `folder_fd` (this location's folder, opened earlier) is still the
        folder at its path beneath the anchor (`Anchor.in_place`)."""
        return self.anchor.in_place(self.folder, folder_fd)

    def lstat(self) -> os.stat_result | None:
        """The entry as it is now (a symlink is not followed); None when missing, or
        when a folder on the way is missing."""
        try:
            fd = self.open_folder()
        except (FileNotFoundError, NotADirectoryError):
            return None
        try:
            return lstat_in(fd, self.name)
        finally:
            os.close(fd)
