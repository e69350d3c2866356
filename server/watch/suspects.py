"""The entries of the watched tree that could make ripgrep wait or die: an ignore file
that is not a regular file (a FIFO: ripgrep's open waits for a writer; a device: it
reads it whole) or is larger than MAX_IGNORE_BYTES (read whole, it takes ripgrep past
its memory cap) and each repository's `.git` (its `info/exclude`, and a `.git` file's git
folder's `commondir` and the common folder's `info/exclude`, lie where no watch hears:
a search looks at them again each time).

The watcher's walk sees every entry's type in the folder listing (d_type), and its
events name every entry created, moved or deleted, so the tree's suspects are known
with no extra look at the disk: the walk adds each ignore-named entry that is not a
regular file (a symlink too: where it leads is looked at only when a search asks), each
regular one over the size limit (one lstat of each ignore-named regular entry: the
listing gives no size) and each `.git`; an event (a creation, a move in, or a write,
which may grow a file) adds an ignore-named path only after one lstat says it is not a
regular file or is over the limit. Nothing else is opened (but see below). A search
(search/stalls.py) looks at each suspect again, so one gone or made regular (or small)
since is harmless; one missed is not, so after a lost event (the queue overflowed) or
past the cap none is trusted.

A third kind is not a stall but a wrong answer: an ignore file ripgrep reads otherwise
than git (`reads_apart`: a byte-order mark, a NUL, a POSIX class, a byte that is not
UTF-8, which makes ripgrep drop the whole file), so that its answer can show what git
hides. The walk reads each regular ignore file within the size limit (through its
folder's descriptor, as a regular file only: fileio.read_small_in) and an event about
one reads it again; the search judges ripgrep's answer beneath such a file's folder by
the project's rules, which read it as git does (search/above.py).
"""

from __future__ import annotations

import os
import stat
import threading

from ..files.fileio import read_small, read_small_in

# ripgrep's ignore files in a folder (search/kept.py's IGNORE_NAMES, as str).
IGNORE_NAMES = frozenset({".gitignore", ".ignore", ".rgignore"})
GIT = ".git"
# Suspects remembered at most; past that none is trusted (the deadline bounds a search).
MAX_SUSPECTS = 10_000
# The largest file ripgrep is let read whole as an ignore file, `.git` file, `commondir`
# or `info/exclude`. Real ones are kilobytes; ripgrep holds every pattern compiled, and
# 1 MiB of one-letter lines peaked at 346 MB (4 MiB of them passed its 1 GiB cap and
# it died): the limit leaves it more than half its cap.
MAX_IGNORE_BYTES = 1 << 20


def reads_apart(data: bytes) -> bool:
    """Whether ripgrep may read these ignore-file bytes otherwise than git does (files/
    ignore.py `git_lines`): a byte-order mark, a NUL, a POSIX class, a byte that is not
    UTF-8. In doubt, yes: a search then judges what ripgrep printed, which costs time."""
    if data.startswith(b"\xef\xbb\xbf") or b"\0" in data or b"[:" in data:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def apart_in(folder: int | None, name: str | bytes) -> bool:
    """`reads_apart` of the regular ignore file `name` in the open `folder` (None: `name`
    is a path), within the size limit; False when it is not one."""
    try:
        if folder is None:
            data = read_small(name, MAX_IGNORE_BYTES + 1)
        else:
            data = read_small_in(folder, name, MAX_IGNORE_BYTES + 1)
    except (OSError, ValueError):
        return False
    return len(data) <= MAX_IGNORE_BYTES and reads_apart(data)


def is_suspect(name: str, regular: bool, size: int = 0) -> bool:
    """Whether an entry called `name`, a regular file (of `size` bytes) or not, is one
    to remember."""
    if name == GIT:
        return True
    return name in IGNORE_NAMES and (not regular or size > MAX_IGNORE_BYTES)


class Suspects:
    """The suspects of the watched roots (absolute paths); thread-safe."""

    def __init__(self) -> None:
        self._paths: dict[bytes, None] = {}
        self._lock = threading.Lock()
        self.complete = True  # False once one may have been missed

    def found(self, path: bytes) -> None:
        """The walk met `path`, a suspect by its name and type."""
        with self._lock:
            if len(self._paths) >= MAX_SUSPECTS:  # those gone since go first
                self._paths = {p: None for p in self._paths if os.path.lexists(p)}
            if len(self._paths) >= MAX_SUSPECTS:
                self.complete = False
            else:
                self._paths[path] = None

    def heard(self, src: str, dest: str | None, is_dir: bool, kind: str) -> None:
        """An event (the watcher's listener): a suspect's folder moved keeps its
        suspects under the new name; a name created, moved in or written is looked at."""
        if is_dir and kind == "moved" and dest is not None:
            self._moved(os.fsencode(src), os.fsencode(dest))
        path = dest if kind == "moved" else src
        if path is None or kind not in ("created", "moved", "modified"):
            return
        name = os.path.basename(path)
        if name == GIT:
            self.found(os.fsencode(path))
        elif name in IGNORE_NAMES and not is_dir:
            try:
                info = os.lstat(path)
            except OSError:
                return  # gone already: nothing to wait on
            regular = stat.S_ISREG(info.st_mode)
            if is_suspect(name, regular, info.st_size) or (regular and apart_in(None, path)):
                self.found(os.fsencode(path))

    def lost(self) -> None:
        """An event may have been lost: no list is sure any more."""
        self.complete = False

    def under(self, folder: bytes) -> list[bytes] | None:
        """The suspects beneath `folder`; None when one may be missing."""
        prefix = folder + b"/"
        with self._lock:
            if not self.complete:
                return None
            return [path for path in self._paths if path.startswith(prefix)]

    def _moved(self, src: bytes, dest: bytes) -> None:
        prefix, cut = src + b"/", len(src)
        with self._lock:
            for path in [p for p in self._paths if p.startswith(prefix)]:
                del self._paths[path]
                self._paths[dest + path[cut:]] = None


__all__ = [
    "GIT", "IGNORE_NAMES", "MAX_IGNORE_BYTES", "Suspects", "apart_in", "is_suspect", "reads_apart"
]  # fmt: skip
