"""Linux's inotify, read by the watcher itself.

One inotify instance watches every root, one watch per folder; folders the ignore
rules skip get none (`Hooks.subfolders`, `Hooks.skips`), so node_modules and .git cost
nothing. One thread reads it: once the descriptor is readable it waits
`BATCH_SECONDS`, so that a burst is read in batches, then parses the kernel's records
and hands each to `Hooks.note` (intake.py) as a path and a kind, on that same thread:
no event objects, queues or other threads between the kernel and the intake.

What the records need on top, done here:
- A rename inside the watched folders comes as two records sharing a cookie,
  IN_MOVED_FROM then IN_MOVED_TO, paired into one move. A MOVED_FROM still alone after
  `PAIR_SECONDS` left the watched folders: for the workspace, its path was deleted.
  A folder that left has its watches removed (it lives on elsewhere, and its events
  would carry paths it no longer has).
- A folder renamed inside the tree keeps its watches (their paths are renamed with it).
- A folder that appears (mkdir, moved in, `mkdir -p a/b/c`, an unpacked archive) is
  watched, and what is already in it is reported created: those entries came before
  its watch could report them.
- A watch the kernel refuses for lack of room (ENOSPC, EMFILE) is reported to
  `Hooks.limit_reached` (while a root is set up, `WatchLimitReached` ends the setup
  too), and so is the thread ending on an error: the watcher leaves inotify, and says so.
- A queue overflow (events were lost) is reported to `Hooks.overflowed`, and the roots
  are walked again for folders that appeared meanwhile.

The thread is named `rk-watch-read` (/proc/<pid>/task/*/comm, `ps -L`).
"""

from __future__ import annotations

import array
import contextlib
import errno
import fcntl
import logging
import os
import select
import struct
import termios
import threading
import time
from typing import Protocol

from ..files.beneath import Moved
from ..state.health import Health
from .beneath_watch import Beneath, watch_opened
from .coalesce import Kind
from .inotify_abi import (
    IN_ATTRIB,
    IN_CLOSE_WRITE,
    IN_CREATE,
    IN_DELETE,
    IN_DELETE_SELF,
    IN_IGNORED,
    IN_ISDIR,
    IN_MODIFY,
    IN_MOVE_SELF,
    IN_MOVED_FROM,
    IN_MOVED_TO,
    IN_Q_OVERFLOW,
    WATCH_MASK,
    calls,
    last_error,
)  # fmt: skip
from .threads import name_os_thread

log = logging.getLogger("readkeeper")

# How long inotify's records gather once one is there, before they are read: each read is
# a wake-up and a turn of the GIL, and the notices wait longer (`watch_debounce_ms`).
BATCH_SECONDS = 0.005
# How long a MOVED_FROM waits for its MOVED_TO, queued just after it (for a read between).
PAIR_SECONDS = 0.05
STOP_TIMEOUT = 5.0
_READ_SIZE = 64 * 1024  # whole records only; one is at most 16 + NAME_MAX + 1 bytes

_HEADER = struct.Struct("iIII")  # wd, mask, cookie, length of the NUL-padded name
_LIMIT_ERRNOS = (errno.ENOSPC, errno.EMFILE)


class Hooks(Protocol):
    """What the reader asks and tells the watcher, on the reader's thread (and, for
    `subfolders` and `limit_reached`, on the thread setting up a root)."""

    def subfolders(self, folder: bytes, fd: int, files: list[bytes] | None = None) -> list[bytes]:
        """The folders inside `folder`, open as `fd`, to watch (not ignored, not
        symlinks; beneath_watch.folder_entries); with `files`, its other entries are
        added to that list, found by the same look."""
        ...

    def skips(self, folder: bytes) -> bool:
        """Whether `folder`, new in the tree, is one the ignore rules skip."""
        ...

    def limit_reached(self, error: OSError) -> None:
        """The kernel refused a watch (ENOSPC, EMFILE), or the reader ended (no errno)."""
        ...

    def overflowed(self) -> None:
        """The kernel's event queue overflowed: events were lost."""
        ...

    def root_gone(self, root: str) -> None:
        """A root's own folder was deleted or moved away: its watches are gone."""
        ...

    def note(
        self, src: str, kind: Kind, is_dir: bool, dest: str | None = None, writing: bool = False
    ) -> None:
        """A change under a root (intake.py's `Intake.note`)."""
        ...


class WatchLimitReached(OSError):
    """The kernel refused a watch while a root was being set up."""


class Inotify:
    """An inotify instance of its own and the thread reading it; `stop` ends both and
    every watch (closing the instance releases them all at once)."""

    def __init__(self, hooks: Hooks) -> None:
        self._hooks = hooks
        self._libc = calls()
        self._beneath = Beneath()  # every folder is opened beneath its root
        self._rewalk: set[bytes] = set()  # roots a walk met a symlink in, to walk again
        fd = self._libc.init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            raise last_error()  # EMFILE: the per-user instance limit
        self._fd = fd
        self._wake_r, self._wake_w = os.pipe()
        self._lock = threading.RLock()  # the maps below, and the descriptor's life
        self._folders: dict[int, bytes] = {}  # watch descriptor -> the folder it watches
        self._watches: dict[bytes, int] = {}  # folder -> its watch descriptor
        self._roots: list[bytes] = []
        self._moves: dict[int, tuple[bytes, bool, float]] = {}  # cookie -> (path, dir, until)
        self._closed = False
        self.full = False
        self.drops = 0  # times watches were removed: a cache of events starts again
        self._stopping = threading.Event()
        ended = Health("the inotify reader", lambda why: hooks.limit_reached(OSError(why)))
        self._thread = threading.Thread(
            target=ended.run(self._run), name="readkeeper-watch-inotify", daemon=True
        )
        self._thread.start()

    # --- what the watcher calls ---------------------------------------------------------

    def watch(self, root: str) -> str:
        """Watch `root` and every folder under it the ignore rules keep. Raises
        `WatchLimitReached` when the kernel refuses a watch, OSError when `root` itself
        cannot be watched. Returns the handle `unwatch` takes."""
        path = os.fsencode(root)
        if self._stopping.is_set():
            raise OSError(errno.EBADF, "the watcher has stopped", root)
        self._beneath.hold(path)
        try:
            self._add_tree(path, setting_up=True)
        except BaseException:
            self._beneath.release(path)
            raise
        with self._lock:
            self._roots.append(path)
        if path in self._rewalk:
            self._walk_again(path)
        return root

    def unwatch(self, root: str) -> None:
        """Stop watching `root` and every folder under it."""
        path = os.fsencode(root)
        with self._lock:
            if path in self._roots:
                self._roots.remove(path)
            self._beneath.release(path)
            self._drop_tree(path)

    def stop(self) -> None:
        """End the reader's thread; the instance and its watches go with it."""
        self._stopping.set()
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"\0")
        if self._thread is not threading.current_thread():
            self._thread.join(STOP_TIMEOUT)

    def is_watched(self, folder: bytes) -> bool:
        """Whether `folder` has a watch now: every change to its entries is reported."""
        return folder in self._watches

    def quiet(self) -> bool:
        """Whether every change made before this call was handed to `Hooks.note` (queued
        before the call returned): none unread, no rename half-paired, no watch refused,
        no walk due."""
        with self._lock:
            if self._closed or self._moves or self.full or self._rewalk:
                return False
            fcntl.ioctl(self._fd, termios.FIONREAD, pending := array.array("i", [0]))
            return pending[0] == 0

    def watched(self) -> list[str]:
        """The folders watched now (for tests and stats)."""
        with self._lock:
            return sorted(os.fsdecode(f) for f in self._watches)

    # --- watches ------------------------------------------------------------------------

    def _add_tree(
        self, top: bytes, setting_up: bool = False, files: list[bytes] | None = None
    ) -> list[bytes]:
        """Watch `top` and the folders under it `Hooks.subfolders` keeps; the folders
        watched (fewer when the kernel runs out of watches). `files`: a list to add the
        other entries of those folders to, found by the same look."""
        added: list[bytes] = []
        stack = [top]
        with self._beneath.walking():  # the root opened once for the walk
            while stack and not self._stopping.is_set():
                folder = stack.pop()
                fd = -1
                try:
                    fd = self._beneath.open(folder)
                    self._add(folder, fd)
                except OSError as exc:
                    if fd >= 0:
                        os.close(fd)
                    if isinstance(exc, Moved):  # a symlink on the way: refused, and the tree
                        self._walk_again(folder)  # moved under the walk
                    if exc.errno in _LIMIT_ERRNOS:
                        self.full = True  # a folder unheard: no cache may rely on events now
                        self._hooks.limit_reached(exc)
                        if setting_up:  # the caller falls back
                            raise WatchLimitReached(exc.errno, exc.strerror) from exc
                        break
                    if folder == top and setting_up:
                        raise
                    continue  # vanished, unreadable, or not a folder after all
                added.append(folder)
                try:
                    stack.extend(self._hooks.subfolders(folder, fd, files))
                finally:
                    os.close(fd)
        return added

    def _add(self, folder: bytes, fd: int) -> None:
        """Watch the folder open as `fd` (beneath_watch.py), known as `folder`."""
        with self._lock:
            if self._closed:
                raise OSError(errno.EBADF, "the watcher has stopped", folder)
            wd = watch_opened(self._libc, self._fd, fd, WATCH_MASK)
            before = self._folders.get(wd)  # the same folder, renamed while unwatched
            if before is not None and before != folder and self._watches.get(before) == wd:
                del self._watches[before]
            self._folders[wd] = folder
            self._watches[folder] = wd

    def _walk_again(self, folder: bytes) -> None:
        """Walk the root of `folder` again on the reader's thread, once it has read
        the renames that put a symlink on the walk's way (and maybe took it off)."""
        root = self._beneath.root_of(folder)
        if root is not None:
            self._rewalk.add(root)
            with contextlib.suppress(OSError):
                os.write(self._wake_w, b"w")

    def _walk_roots_again(self) -> None:
        with self._lock:
            roots = [r for r in self._rewalk if r in self._roots]  # the others: once set up
            self._rewalk.difference_update(roots)
            for root in roots:
                self._add_tree(root)

    def _drop_tree(self, top: bytes) -> None:
        """Remove the watches of `top` and the folders under it (caller holds the lock)."""
        self.drops += 1
        prefix = top + b"/"
        for folder, wd in list(self._watches.items()):
            if folder == top or folder.startswith(prefix):
                del self._watches[folder]
                self._folders.pop(wd, None)
                if not self._closed:
                    self._libc.rm_watch(self._fd, wd)  # EINVAL if already gone: fine

    def _rename_tree(self, src: bytes, dest: bytes) -> bool:
        """The watches under `src` now watch under `dest`; False if `src` had none."""
        if src not in self._watches:
            return False
        prefix, cut = src + b"/", len(src)
        for folder, wd in list(self._watches.items()):
            if folder == src or folder.startswith(prefix):
                del self._watches[folder]
                renamed = dest + folder[cut:]
                self._watches[renamed] = wd
                self._folders[wd] = renamed
        return True

    # --- the reader ---------------------------------------------------------------------

    def _run(self) -> None:
        name_os_thread("rk-watch-read")
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        poller.register(self._wake_r, select.POLLIN)
        try:
            while True:
                ready = poller.poll(self._wait_ms())
                if self._stopping.is_set():
                    break
                if ready and any(fd == self._fd for fd, _ in ready):
                    time.sleep(BATCH_SECONDS)
                    self._read()
                if ready and any(fd == self._wake_r for fd, _ in ready):
                    os.read(self._wake_r, _READ_SIZE)
                    self._read()  # caught up with the renames first
                    self._walk_roots_again()
                if self._moves:  # what was queued by now is read first: a MOVED_TO in time
                    now = time.monotonic()  # pairs, however late this thread came back
                    self._read()
                    with self._lock:
                        self._expire_moves(now)
        finally:
            with self._lock:
                self._closed = True
                os.close(self._fd)
            os.close(self._wake_r)
            os.close(self._wake_w)

    def _wait_ms(self) -> int | None:
        soonest = min((until for _, _, until in self._moves.values()), default=None)
        return None if soonest is None else max(0, int((soonest - time.monotonic()) * 1000) + 1)

    def _read(self) -> None:
        while not self._stopping.is_set():
            with self._lock:  # read and handled at once: `quiet` sees no record between
                try:
                    data = os.read(self._fd, _READ_SIZE)
                except BlockingIOError:
                    return
                except OSError:
                    log.exception("readkeeper: reading inotify failed")
                    return
                try:
                    self._handle(data)
                except Exception:  # never end the thread: the read files are re-checked
                    log.exception("readkeeper: handling inotify's events failed")
                    self._hooks.overflowed()

    def _handle(self, data: bytes) -> None:
        unpack, size, end = _HEADER.unpack_from, _HEADER.size, len(data)
        offset = 0
        while offset < end:
            wd, mask, cookie, length = unpack(data, offset)
            start = offset + size
            offset = start + length
            self._record(wd, mask, cookie, data[start:offset].rstrip(b"\0"))

    def _record(self, wd: int, mask: int, cookie: int, name: bytes) -> None:
        """One record of the kernel's (caller holds the lock)."""
        if mask & IN_Q_OVERFLOW:
            self._overflowed()
            return
        folder = self._folders.get(wd)
        if folder is None:  # a watch removed a moment ago
            return
        if mask & IN_IGNORED:  # the watch is gone: its folder was deleted or unmounted
            del self._folders[wd]
            if self._watches.get(folder) == wd:
                del self._watches[folder]
            if folder in self._roots:
                self._root_gone(folder)
            return
        if not name:  # about the watched folder itself: its parent's record says it
            if mask & (IN_DELETE_SELF | IN_MOVE_SELF) and folder in self._roots:
                self._hooks.note(os.fsdecode(folder), "deleted", True)
                self._root_gone(folder)
            return
        path = folder + b"/" + name
        is_dir = bool(mask & IN_ISDIR)
        note = self._hooks.note
        if mask & IN_CLOSE_WRITE:
            note(os.fsdecode(path), "modified", False)
        elif mask & (IN_MODIFY | IN_ATTRIB):  # a write goes on (its close says when it is
            # done), or a folder's mode changed: ripgrep may no longer enter it
            note(os.fsdecode(path), "modified", is_dir, writing=not is_dir)
        elif mask & IN_CREATE:
            self._appeared(path, is_dir)
        elif mask & IN_DELETE:
            note(os.fsdecode(path), "deleted", is_dir)
        elif mask & IN_MOVED_FROM:
            self._moves[cookie] = (path, is_dir, time.monotonic() + PAIR_SECONDS)
        elif mask & IN_MOVED_TO:
            moved = self._moves.pop(cookie, None)
            if moved is None:  # from outside the watched folders
                self._appeared(path, is_dir)
            else:
                self._moved(moved[0], path, is_dir)

    def _root_gone(self, root: bytes) -> None:
        """A root's folder was deleted or moved away (renamed, it would report its
        changes under the root's name): its watches go, and the watcher watches the
        folder that takes its place, when one does (roots.py)."""
        self._roots.remove(root)
        self._beneath.release(root)
        self._drop_tree(root)
        self._hooks.root_gone(os.fsdecode(root))

    def _appeared(self, path: bytes, is_dir: bool) -> None:
        """A file or folder created or moved in; a folder is watched, and what is
        already in it reported."""
        self._hooks.note(os.fsdecode(path), "created", is_dir)
        if not is_dir or self._hooks.skips(path):
            return
        files: list[bytes] = []
        self._add_tree(path, files=files)
        for file in files:
            self._hooks.note(os.fsdecode(file), "created", False)

    def _moved(self, src: bytes, dest: bytes, is_dir: bool) -> None:
        self._hooks.note(os.fsdecode(src), "moved", is_dir, os.fsdecode(dest))
        if not is_dir:
            return
        if self._hooks.skips(dest):
            self._drop_tree(src)
        elif not self._rename_tree(src, dest):  # it was skipped where it came from
            self._appeared(dest, True)

    def _expire_moves(self, now: float) -> None:
        """MOVED_FROMs whose other half never came: moved out of the watched folders."""
        for cookie, (path, is_dir, until) in list(self._moves.items()):
            if until <= now:
                del self._moves[cookie]
                self._hooks.note(os.fsdecode(path), "deleted", is_dir)
                if is_dir:
                    self._drop_tree(path)

    def _overflowed(self) -> None:
        self._moves.clear()
        self._hooks.overflowed()
        for root in list(self._roots):  # folders that appeared while events were lost
            self._add_tree(root)


def watches_supported() -> bool:
    """Whether this libc has inotify's calls."""
    try:
        calls()
    except (OSError, AttributeError):
        return False
    return True


__all__ = ["BATCH_SECONDS", "Hooks", "Inotify", "WatchLimitReached", "watches_supported"]
