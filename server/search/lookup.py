"""The times of the files glob orders (mtimes.py keeps them): one stat a file, by its
name in its folder opened beneath the root (never an open of the file: a FIFO or device
is only stat-ed; never a symlink followed), and the newest of them.

A stat touches the file's inode, which ripgrep's listing never does (a file's kind comes
with its folder's entries): about 1.2 us of the kernel's a file, 2.5 to 3 us through
`os.lstat` (its result object), as much as ripgrep's whole listing of a file
(bench/README.md, glob and list). So the loop of stats holds nothing else, and the
folders are found in C.
"""

from __future__ import annotations

import operator
import os
import time
from collections.abc import Callable, Iterable
from itertools import compress, groupby, repeat

from ..watch.hears import Heard
from .kept import folder_each

# Opens a folder (relative to the one globbed) beneath the root, following no symlink.
Opener = Callable[[bytes], int]
CHECK_EVERY = 512  # stats between looks at the clock (and at `stop`)
# Where a folder's files' times are: whether the watcher hears it, and its names.
Folders = dict[bytes, tuple[bool, list[bytes]]]
_FIRST, _SECOND = operator.itemgetter(0), operator.itemgetter(1)


def newest_of(times: list[int], names: list[bytes], count: int) -> list[tuple[int, bytes]]:
    """The `count` newest (time, name) pairs, newest first (ties: the greater name
    first), by comparisons in C: a heap in Python costs more than the stats it orders."""
    if len(times) > count:
        threshold = sorted(times)[-count]
        keep = list(map(operator.ge, times, repeat(threshold)))
        times, names = list(compress(times, keep)), list(compress(names, keep))
    return sorted(zip(times, names, strict=True), reverse=True)[:count]


def look_up(
    watcher: Heard | None,
    base: bytes,
    names: Iterable[bytes],
    deadline: float,
    opener: Opener,
    stop: Callable[[], bool] | None = None,
) -> tuple[dict[bytes, int], Folders, bool]:
    """(the times of `names`, by folder whether the watcher hears it (asked before
    their times are read) and its names, whether the deadline or `stop` ended it
    early: then the times read so far). One stat a file by its name in its folder's
    descriptor: never an open, never a symlink followed."""
    names = names if isinstance(names, list) else list(names)
    folders: Folders = {}
    # A run of one folder's names at a time (ripgrep prints a folder's files together),
    # each name's folder cut in C: no Python step a name.
    for folder, run in groupby(zip(folder_each(names), names, strict=True), _FIRST):
        entry = folders.get(folder)
        if entry is None:
            heard = watcher is not None and watcher.hears(
                os.path.join(base, folder) if folder else base
            )
            entry = folders[folder] = (heard, [])
        entry[1].extend(map(_SECOND, run))
    fresh: dict[bytes, int] = {}
    lstat = os.lstat
    due = CHECK_EVERY  # stats until the next look at the clock
    for folder, (_, files) in folders.items():
        try:
            fd = opener(folder)
        except OSError:
            continue  # gone, or now a symlink: its files are left out
        try:
            cut = len(folder) + 1 if folder else 0
            for start in range(0, len(files), CHECK_EVERY):
                if due <= 0:
                    if time.monotonic() > deadline or (stop is not None and stop()):
                        return fresh, folders, True
                    due = CHECK_EVERY
                chunk = files[start : start + CHECK_EVERY]
                due -= len(chunk)
                for name in chunk:  # the loop of one stat a file: nothing else in it
                    try:
                        fresh[name] = lstat(name[cut:], dir_fd=fd).st_mtime_ns
                    except OSError:
                        continue  # gone since ripgrep listed it
        finally:
            os.close(fd)
    return fresh, folders, False


__all__ = ["CHECK_EVERY", "Folders", "Opener", "look_up", "newest_of"]
