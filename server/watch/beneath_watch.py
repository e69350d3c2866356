"""Where the inotify reader's watches land: on the folder it opened beneath a root, never
on whatever a path names a moment later.

A watch added by path (`inotify_add_watch(path, IN_DONT_FOLLOW)`) follows every symlink
but the last component's, and a listing by path (`scandir(path)`) follows them all: a
folder swapped for a symlink to `/etc` between the watcher's steps would be listed and
watched outside the root. So every folder is opened first, beneath the root's folder
and following no symlink at any component (files/beneath.py: openat2 RESOLVE_BENEATH |
RESOLVE_NO_SYMLINKS, or one O_NOFOLLOW openat per component); it is listed from that
descriptor, and its watch is added on `/proc/self/fd/<fd>`, a link the
kernel resolves to the very inode the descriptor holds (checked with fstat). Without a
/proc that says so, no watch is added at all: there is no path walk to fall back to.

A folder refused because a component is now a symlink is skipped, like a symlink
itself. The tree changed under the walk, so the root is walked again once the reader
has caught up with the renames (inotify.py), and a real folder put back is watched.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
from collections.abc import Iterator

from ..files.beneath import Anchor
from .inotify_abi import IN_DONT_FOLLOW, Libc, last_error
from .suspects import GIT, IGNORE_NAMES, Suspects, apart_in, is_suspect

_SUSPECT_NAMES = IGNORE_NAMES | {GIT}


class Beneath:
    """The roots being watched, and the opening of folders beneath them.

    A root is opened once per walk, never held between walks: an open descriptor keeps
    a deleted folder's inode alive, and with it the root's IN_DELETE_SELF, which is how
    the watcher learns that its root is gone."""

    def __init__(self) -> None:
        self._roots: set[bytes] = set()
        self._lock = threading.Lock()
        self._walks = threading.local()  # per thread: root -> its Anchor, during a walk

    @contextlib.contextmanager
    def walking(self) -> Iterator[None]:
        """One walk: each root is opened once for all of it, and let go at its end."""
        self._walks.anchors = {}
        try:
            yield
        finally:
            self._walks.anchors = None

    def hold(self, root: bytes) -> None:
        """Open folders beneath `root` (a real path) from now on."""
        with self._lock:
            self._roots.add(root)

    def release(self, root: bytes) -> None:
        """Open nothing beneath `root` any more."""
        with self._lock:
            self._roots.discard(root)

    def root_of(self, folder: bytes) -> bytes | None:
        """The root `folder` lies in (the deepest one), if any."""
        with self._lock:
            roots = list(self._roots)
        best = None
        for root in roots:
            if (folder == root or folder.startswith(root + b"/")) and (
                best is None or len(root) > len(best)
            ):
                best = root
        return best

    def open(self, folder: bytes) -> int:
        """A readable descriptor of `folder`, opened beneath its root following no
        symlink at any component; `files.beneath.Moved` when one is met, OSError when
        the folder is missing or lies in no held root. The caller closes it."""
        root = self.root_of(folder)
        if root is None:
            raise OSError(errno.EXDEV, "the folder lies in no watched root", folder)
        anchors: dict[bytes, Anchor] | None = getattr(self._walks, "anchors", None)
        anchor = anchors.get(root) if anchors is not None else None
        if anchor is None:
            # A real path: a symlink in the root's own path is one planted since (Moved).
            anchor = Anchor.open(os.fsdecode(root))
            if anchors is not None:
                anchors[root] = anchor
        # `write=True` asks for an O_RDONLY descriptor (O_PATH cannot be listed).
        return anchor.open_folder(os.fsdecode(folder[len(root) + 1 :]), write=True)


def watch_opened(libc: Libc, inotify_fd: int, fd: int, mask: int) -> int:
    """Add a watch on the folder open as `fd` itself; its watch descriptor. Refused
    (OSError EACCES) unless /proc/self/fd/<fd> names that very folder."""
    link = b"/proc/self/fd/%d" % fd
    try:
        held, named = os.fstat(fd), os.stat(link)
    except OSError as exc:
        raise OSError(errno.EACCES, "no /proc to watch an open folder through", link) from exc
    if (held.st_dev, held.st_ino) != (named.st_dev, named.st_ino):
        raise OSError(errno.EACCES, "/proc does not name the open folder", link)
    wd = libc.add_watch(inotify_fd, link, mask & ~IN_DONT_FOLLOW)
    if wd < 0:
        raise last_error(link)
    return wd


def folder_entries(
    fd: int, folder: bytes, files: list[bytes] | None = None, suspects: Suspects | None = None
) -> list[bytes]:
    """The folders in the folder open as `fd` (a link to one is not), as paths under
    `folder`; with `files`, its other entries are added to that list; with `suspects`,
    the entries ripgrep could wait on are told to it (by the type the listing gives,
    and an ignore file's size).
    Listed from the descriptor, so it is the folder opened, wherever its name now leads."""
    found = []
    with os.scandir(fd) as entries:
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue  # vanished before it could be looked at
            path = folder + b"/" + os.fsencode(entry.name)
            if suspects is not None and entry.name in _SUSPECT_NAMES:
                regular = not is_dir and entry.is_file(follow_symlinks=False)
                if is_suspect(entry.name, regular, _size(entry) if regular else 0):
                    suspects.found(path)
                elif regular and entry.name != GIT and apart_in(fd, entry.name):
                    suspects.found(path)  # ripgrep reads it otherwise than git
            if is_dir:
                found.append(path)
            elif files is not None:
                files.append(path)
    return found


def _size(entry: os.DirEntry[str]) -> int:
    """The size of the regular file `entry` (one lstat), 0 when it is gone."""
    try:
        return entry.stat(follow_symlinks=False).st_size
    except OSError:
        return 0


__all__ = ["Beneath", "folder_entries", "watch_opened"]
