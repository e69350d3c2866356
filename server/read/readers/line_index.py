"""Where the lines of files too large to hold start, remembered between ranged reads.

A ranged read of a large file finds its first line by counting newline bytes from the
top (text_stream.py): about 0.6 ms per MB here, paid again by every page of a log an
agent reads its way through. The index keeps, per file, how many newlines come before
each 64 KB boundary the count has passed, so the next read of that file counts from
the boundary nearest its line instead of from the top.

An index is only used while the file is provably the one it was counted from: the same
device, inode, size, mtime and ctime. The kernel stamps ctime on every change from its
clock (which nothing short of changing the system clock sets back), so a change after
the count gives the file a newer ctime. Two changes within one tick of that clock (a
few milliseconds) can share a ctime, though, so a file changed less than `SETTLED_NS`
before it is counted is not indexed at all (git's rule for racily clean files): a change
after the count then lands on a later tick than the file's ctime. On a filesystem that
keeps whole seconds (FAT keeps mtime to 2 s) the wait is `COARSE_SETTLED_NS`. A
filesystem whose clock runs behind this machine's by more than that could defeat the
rule; the index is a hint for finding lines, never a proof of content (a re-read's stub
compares the lines' digest).
"""

from __future__ import annotations

import os
import threading
import time
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

SETTLED_NS = 100_000_000  # how long unchanged before a file's count is kept
COARSE_SETTLED_NS = 2_000_000_000  # the same where timestamps are whole seconds
KEPT_FILES = 32  # the files indexed at once (least recently used dropped)

Signature = tuple[int, int, int, int, int]  # device, inode, size, mtime_ns, ctime_ns


@dataclass
class Index:
    """The newlines before each chunk boundary of one file, as far as counted."""

    chunk: int
    signature: Signature
    counts: list[int] = field(default_factory=list)  # counts[i]: before (i + 1) * chunk
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def resume(self, wanted: int) -> tuple[int, int]:
        """Where to count from to pass `wanted` newlines: the last boundary known to
        come before the `wanted`-th newline, and the newlines before it."""
        known = bisect_left(self.counts, wanted)  # boundaries with fewer before them
        if known == 0:
            return 0, 0
        return known * self.chunk, self.counts[known - 1]

    def passed(self, position: int, newlines: int) -> None:
        """The count reached boundary `position` with `newlines` before it (kept when it
        is the next boundary not known yet: two reads of the file may count at once)."""
        with self._lock:
            if position == (len(self.counts) + 1) * self.chunk:
                self.counts.append(newlines)


class LineIndexes:
    """The indexes of the large files read lately, by device and inode."""

    def __init__(self, clock: Callable[[], int] = time.time_ns) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._indexes: OrderedDict[tuple[int, int], Index] = OrderedDict()

    def for_file(self, fd: int, chunk: int) -> Index | None:
        """The index of the open file `fd`, new when it has none or changed since; None
        when the file changed too recently to be indexed (or cannot be stat'ed)."""
        try:
            st = os.fstat(fd)
        except OSError:
            return None
        signature = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        key = signature[:2]
        with self._lock:
            index = self._indexes.get(key)
            if index is not None and index.signature == signature and index.chunk == chunk:
                self._indexes.move_to_end(key)
                return index
            self._indexes.pop(key, None)
            if self._clock() - max(st.st_mtime_ns, st.st_ctime_ns) < settles_after(st):
                return None
            index = self._indexes[key] = Index(chunk, signature)
            while len(self._indexes) > KEPT_FILES:
                self._indexes.popitem(last=False)
            return index


def settles_after(st: os.stat_result) -> int:
    """How long a file must have been unchanged to be indexed: longer on a filesystem
    whose timestamps are whole seconds (both of them, to the nanosecond)."""
    if st.st_mtime_ns % 1_000_000_000 == 0 and st.st_ctime_ns % 1_000_000_000 == 0:
        return COARSE_SETTLED_NS
    return SETTLED_NS


INDEXES = LineIndexes()

__all__ = [
    "COARSE_SETTLED_NS",
    "INDEXES",
    "KEPT_FILES",
    "SETTLED_NS",
    "Index",
    "LineIndexes",
    "settles_after",
]
