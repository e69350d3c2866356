"""Opening files without ever blocking, and reading them within a byte bound.

`open()` on a FIFO with no writer blocks forever, and reading `/dev/zero` never ends; so
files are opened non-blocking and classified with `fstat` on the descriptor itself (not
a separate `stat`, which would race with a rename) before a single byte is read.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from .errors import ReadkeeperError

_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
_CHUNK = 1 << 20


@dataclass(frozen=True)
class OpenedFile:
    path: str
    fd: int
    size: int
    mtime_ns: int
    mode: int


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


def _is_directory(path: str) -> ReadkeeperError:
    return ReadkeeperError(
        "is_directory",
        f"{path} is a directory. List its entries (e.g. `ls {path}`) and read one of its files.",
        file_path=path,
    )


@contextmanager
def open_regular(path: str) -> Iterator[OpenedFile]:
    """Open `path` for reading if it is a regular file, else raise a clear error."""
    try:
        pre = os.stat(path)
    except OSError:
        pre = None
    # Refuse devices, FIFOs and sockets before opening: opening some devices has side
    # effects (a tape rewinds, a serial line hangs up) even with O_NONBLOCK.
    if pre is not None:
        if stat.S_ISDIR(pre.st_mode):
            raise _is_directory(path)
        what = _kind_of(pre.st_mode)
        if what:
            raise _not_regular(path, what)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise ReadkeeperError(
                "not_found",
                f"{path} disappeared while being opened. Read it again.",
                file_path=path,
                suggestions=[],
            ) from None
        if exc.errno == errno.EISDIR:
            raise _is_directory(path) from None
        if exc.errno == errno.ENXIO:
            raise _not_regular(path, "a socket or a device with nothing behind it") from None
        if exc.errno in (errno.EACCES, errno.EPERM):
            raise ReadkeeperError(
                "unsupported",
                f"Permission denied reading {path}. Ask the user to make it readable.",
                file_path=path,
            ) from None
        raise ReadkeeperError(
            "unsupported", f"Cannot open {path}: {exc.strerror}.", file_path=path
        ) from None
    try:
        st = os.fstat(fd)  # the file we actually opened, whatever happened to the name
        if stat.S_ISDIR(st.st_mode):
            raise _is_directory(path)
        what = _kind_of(st.st_mode)
        if what:
            raise _not_regular(path, what)
        yield OpenedFile(path, fd, st.st_size, st.st_mtime_ns, st.st_mode)
    finally:
        os.close(fd)


def read_at_most(fd: int, limit: int) -> bytes:
    """Up to `limit` bytes from `fd`'s current position (stops early at EOF)."""
    parts: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(fd, min(_CHUNK, remaining))
        if not chunk:
            break
        parts.append(chunk)
        remaining -= len(chunk)
    return b"".join(parts)


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()
