"""The modification times `glob` orders its files by (newest first), kept across calls
while the watcher hears the folders.

Newest first needs a time per file. ripgrep's own `--sortr=modified` walks on one
thread and stats as it sorts, several times slower than its parallel `--files`
(bench/bench_search.py); stat-ing every file here costs about as much. So where times
can be kept, ripgrep lists in parallel and the times are read here once, one stat a
file by its name in its folder opened beneath the root (never an open of the file: a
FIFO or device is only stat-ed; never a symlink followed), and kept; where they cannot
(no watcher hears the folder: the CLI) listing.py lets ripgrep sort.

A folder's files' times are kept only while the watcher hears every change to that
folder (watch/hears.py: readkeeper's inotify reader holds a watch on it and the watcher
is `watching`). An event forgets the path it names (a folder's: everything beneath).
Each folder also keeps its own modification time, checked on every use: a file added,
removed or renamed there changes it before the event arrives. A time read before an
event is not kept after it. A new watcher (restarted, or another) starts afresh. A file
written in place changes only itself: until its event arrives (milliseconds) its old
time may still order it.
"""

from __future__ import annotations

import operator
import os
import threading
import time
from collections.abc import Callable, Iterable
from itertools import compress, repeat
from typing import Protocol, cast

# Files held at most, over every folder searched from; past that the cache starts again
# (a bound on its memory, about 150 bytes a file).
MAX_FILES = 500_000
_CHECK_EVERY = 512  # stats between looks at the clock


# Opens a folder (relative to the one globbed) beneath the root, following no symlink.
Opener = Callable[[bytes], int]


class Heard(Protocol):
    """The watcher as the cache sees it (watch/hears.py)."""

    def hears(self, folder: bytes) -> bool:
        """Whether every change to the entries of `folder` is reported now."""
        ...

    def listen(self, listener: Callable[[str, str | None, bool], None]) -> None:
        """Be told of every event from now on."""
        ...


class _Tree:
    """What is kept of the files under one folder globbed from (paths relative to it, as
    ripgrep prints them)."""

    def __init__(self) -> None:
        self.times: dict[bytes, int] = {}
        self.folders: dict[bytes, tuple[int, list[bytes]]] = {}  # -> (its mtime, its files)

    def drop_folder(self, folder: bytes) -> None:
        _, names = self.folders.pop(folder, (0, []))
        for name in names:
            self.times.pop(name, None)


class FileTimes:
    """Modification times of files, kept while the watcher hears their changes.
    Thread-safe: the watcher's thread forgets, requests look up."""

    def __init__(self, watcher: Callable[[], Heard | None]) -> None:
        self._watcher = watcher
        self._heard_by: Heard | None = None
        self._trees: dict[bytes, _Tree] = {}
        self._lock = threading.Lock()
        self._events = 0  # events heard so far: a time read before one is not kept after it
        self.hits = 0  # files whose time came from the cache (tests, the bench)

    def kept(self, cwd: str) -> bool:
        """Whether times under `cwd` can be kept: the watcher hears that folder."""
        watcher = self._watcher()
        return watcher is not None and watcher.hears(os.fsencode(cwd))

    def newest(
        self, cwd: str, names: list[bytes], count: int, deadline: float, opener: Opener
    ) -> tuple[list[tuple[int, bytes]], bool]:
        """The `count` newest of `names` (paths relative to `cwd`, as ripgrep printed
        them) as (modification time, name), newest first; and whether the deadline (a
        `time.monotonic()` value) stopped the look-ups early (then only the files
        looked up are ordered). `opener` opens a folder (relative to `cwd`) beneath
        the root with no symlink followed: each file is stat-ed by name in it, so a
        folder swapped for a symlink out is never stat-ed through (its files are left
        out)."""
        watcher = self._current()
        base = os.fsencode(cwd)
        heard = self._events
        tree = self._valid_tree(watcher, base, opener)
        known = tree.times if tree is not None else {}
        got = list(map(known.get, names))  # in C: 100,000s of names, most of them known
        missing: set[bytes] = set()
        if None in got:  # identity first: a quick scan when every name is known
            missing = set(compress(names, map(operator.is_, got, repeat(None))))
        self.hits += len(names) - len(missing)
        times = known
        late = False
        if missing:
            fresh, folders, late = _look_up(watcher, base, missing, deadline, opener)
            times = {**known, **fresh}
            with self._lock:
                if tree is not None and self._events == heard and not late:
                    _keep(tree, fresh, folders)  # those of folders the watcher hears
            if len(fresh) < len(missing):  # gone since ripgrep listed them, or out of time
                names = [name for name in names if name in times]
            got = list(map(times.__getitem__, names))
        return _newest(cast(list[int], got), names, count), late  # no None is left

    def forget(self, path: str, moved_to: str | None, is_dir: bool) -> None:
        """An event named `path` (and `moved_to`): what the cache holds of them goes."""
        with self._lock:
            self._events += 1
            for changed in (path, moved_to):
                if changed is None:
                    continue
                encoded = os.fsencode(changed)
                for base, tree in self._trees.items():
                    if not encoded.startswith(base + b"/"):
                        continue
                    relative = encoded[len(base) + 1 :]
                    tree.times.pop(relative, None)
                    if is_dir:
                        prefix = relative + b"/"
                        for folder in [
                            f for f in tree.folders if f == relative or f.startswith(prefix)
                        ]:
                            tree.drop_folder(folder)

    def _current(self) -> Heard | None:
        """The watcher now; the cache starts again when it is not the one it was filled
        under."""
        watcher = self._watcher()
        with self._lock:
            if watcher is not self._heard_by:
                self._trees.clear()
                self._heard_by = watcher
                if watcher is not None:
                    watcher.listen(self._forget_for(watcher))
        return watcher

    def _forget_for(self, watcher: Heard) -> Callable[[str, str | None, bool], None]:
        def forget(path: str, moved_to: str | None, is_dir: bool) -> None:
            if self._heard_by is watcher:  # a former watcher's events mean nothing now
                self.forget(path, moved_to, is_dir)

        return forget

    def _valid_tree(self, watcher: Heard | None, base: bytes, opener: Opener) -> _Tree | None:
        """The cache of the files under `base`, each folder in it still heard and with
        the modification time it had when its files' times were read (else dropped)."""
        if watcher is None:
            return None
        with self._lock:
            tree = self._trees.get(base)
            if tree is None:
                if sum(len(t.times) for t in self._trees.values()) >= MAX_FILES:
                    self._trees.clear()
                tree = self._trees[base] = _Tree()
            folders = list(tree.folders.items())
        stale = [f for f, (mtime, _) in folders if _folder_time(watcher, base, f, opener) != mtime]
        if stale:
            with self._lock:
                for folder in stale:
                    tree.drop_folder(folder)
        return tree


def _newest(times: list[int], names: list[bytes], count: int) -> list[tuple[int, bytes]]:
    """The `count` newest (time, name) pairs, newest first (ties: the greater name
    first), by comparisons in C: a heap in Python costs more than the stats it orders."""
    if len(times) > count:
        threshold = sorted(times)[-count]
        keep = list(map(operator.ge, times, repeat(threshold)))
        times, names = list(compress(times, keep)), list(compress(names, keep))
    return sorted(zip(times, names, strict=True), reverse=True)[:count]


def _folder_time(watcher: Heard | None, base: bytes, folder: bytes, opener: Opener) -> int | None:
    """The modification time of `folder` (relative to `base`) when the watcher hears
    every change to it, else None."""
    if watcher is None or not watcher.hears(os.path.join(base, folder) if folder else base):
        return None
    try:
        fd = opener(folder)
    except OSError:
        return None
    try:
        return os.fstat(fd).st_mtime_ns
    finally:
        os.close(fd)


def _look_up(
    watcher: Heard | None, base: bytes, names: Iterable[bytes], deadline: float, opener: Opener
) -> tuple[dict[bytes, int], dict[bytes, tuple[int | None, list[bytes]]], bool]:
    """(the times of `names`, by folder its time read before theirs (None: not heard)
    and its names, whether the deadline stopped it). One stat a file by its name in its
    folder's descriptor: never an open, never a symlink followed."""
    folders: dict[bytes, tuple[int | None, list[bytes]]] = {}
    for name in names:
        folder = name.rpartition(b"/")[0]
        entry = folders.get(folder)
        if entry is None:
            entry = folders[folder] = (_folder_time(watcher, base, folder, opener), [])
        entry[1].append(name)
    fresh: dict[bytes, int] = {}
    done = 0
    for folder, (_, files) in folders.items():
        try:
            fd = opener(folder)
        except OSError:
            continue  # gone, or now a symlink: its files are left out
        try:
            cut = len(folder) + 1 if folder else 0
            for name in files:
                done += 1
                if done % _CHECK_EVERY == 0 and time.monotonic() > deadline:
                    return fresh, folders, True
                try:
                    st = os.stat(name[cut:], dir_fd=fd, follow_symlinks=False)
                except OSError:
                    continue  # gone since ripgrep listed it
                fresh[name] = st.st_mtime_ns
        finally:
            os.close(fd)
    return fresh, folders, False


def _keep(
    tree: _Tree, fresh: dict[bytes, int], folders: dict[bytes, tuple[int | None, list[bytes]]]
) -> None:
    """Add the `fresh` times of the folders heard to `tree` (caller holds the lock)."""
    for folder, (folder_mtime, names) in folders.items():
        if folder_mtime is None:
            continue
        entry = tree.folders.get(folder)
        if entry is None or entry[0] != folder_mtime:
            if entry is not None:
                tree.drop_folder(folder)
            entry = tree.folders[folder] = (folder_mtime, [])
        for name in names:
            mtime = fresh.get(name)
            if mtime is not None:
                entry[1].append(name)
                tree.times[name] = mtime
