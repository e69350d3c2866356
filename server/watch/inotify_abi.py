"""inotify's kernel interface (inotify(7)): the flags, and the three calls through
ctypes with errno kept. What the reader makes of them is inotify.py's; where a watch
lands is beneath_watch.py's."""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable

IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x1000000
IN_DONT_FOLLOW = 0x2000000  # never asked for (see WATCH_MASK)
IN_EXCL_UNLINK = 0x4000000
IN_ISDIR = 0x40000000
# Opens and reads (readkeeper's own included) are never asked for. No IN_DONT_FOLLOW:
# every watch is added through /proc/self/fd/<fd>, a link that must be followed
# (beneath_watch.py), and no symlink leads there.
WATCH_MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
    | IN_EXCL_UNLINK
)


class Libc:
    """inotify's three calls, through ctypes, errno kept."""

    def __init__(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
        self.init1: Callable[[int], int] = libc.inotify_init1
        self.add_watch: Callable[[int, bytes, int], int] = libc.inotify_add_watch
        self.rm_watch: Callable[[int, int], int] = libc.inotify_rm_watch


_libc: Libc | None = None


def calls() -> Libc:
    """The libc calls, loaded once (OSError or AttributeError where there are none)."""
    global _libc
    if _libc is None:
        _libc = Libc()
    return _libc


def last_error(path: bytes | None = None) -> OSError:
    """The OSError for the errno the last libc call left."""
    code = ctypes.get_errno()
    return OSError(code, os.strerror(code), path)
