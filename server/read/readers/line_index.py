"""Where the lines of files too large to hold start, remembered between ranged reads.

A ranged read of a large file finds its first line by counting newline bytes from the
top (text_stream.py): about 0.6 ms per MB here, paid again by every page of a log an
agent reads its way through. The index keeps, per file, how many newlines come before
each 64 KB boundary the count has passed, so the next read of that file counts from
the boundary nearest its line instead of from the top; and where the last lines asked
for start, and the encoding and line ending its first bytes showed, so that a read
repeated, or the page after it, counts nothing and sniffs nothing again.

An index is only used while the file is provably the one it was counted from: its
stamp (device, inode, size, mtime, ctime) is the same, and the file had settled when it
was counted (files/stamps.py says why that proves it unchanged, and what it can miss).
The index is a hint for finding lines: a re-read's stub has its own proof.
"""

from __future__ import annotations

import os
import threading
import time
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from ...files.encodings import TextEncoding
from ...files.stamps import Stamp, settled, stamp_of

KEPT_FILES = 32  # the files indexed at once (least recently used dropped)
KEPT_STARTS = 64  # the line starts kept per file (the first found dropped first)


@dataclass
class Index:
    """The newlines before each chunk boundary of one file, as far as counted; the
    lines found lately, where they start; what its first bytes said of its text."""

    chunk: int
    signature: Stamp
    counts: list[int] = field(default_factory=list)  # counts[i]: before (i + 1) * chunk
    # Newlines passed -> the position after them, for the last `KEPT_STARTS` lines found.
    starts: dict[int, int] = field(default_factory=dict)
    # The encoding and line ending judged from the file's first bytes (text_stream.py).
    sniffed: tuple[TextEncoding, str] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def resume(self, wanted: int) -> tuple[int, int]:
        """Where to count from to pass `wanted` newlines: the last boundary known to
        come before the `wanted`-th newline, and the newlines before it."""
        known = bisect_left(self.counts, wanted)  # boundaries with fewer before them
        if known == 0:
            return 0, 0
        return known * self.chunk, self.counts[known - 1]

    def found(self, newlines: int, position: int) -> None:
        """A line starts at `position`, after `newlines` newlines: a ranged read asked
        for it, and the next page or a repeat of the read asks again."""
        with self._lock:
            self.starts[newlines] = position
            if len(self.starts) > KEPT_STARTS:
                del self.starts[next(iter(self.starts))]  # the one found first

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
        signature = stamp_of(st)
        key = signature[:2]
        with self._lock:
            index = self._indexes.get(key)
            if index is not None and index.signature == signature and index.chunk == chunk:
                self._indexes.move_to_end(key)
                return index
            self._indexes.pop(key, None)
            if not settled(st, self._clock()):
                return None
            index = self._indexes[key] = Index(chunk, signature)
            while len(self._indexes) > KEPT_FILES:
                self._indexes.popitem(last=False)
            return index


INDEXES = LineIndexes()

__all__ = ["INDEXES", "KEPT_FILES", "KEPT_STARTS", "Index", "LineIndexes"]
