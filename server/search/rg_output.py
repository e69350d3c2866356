"""ripgrep's output read as it comes (rg.py runs it): stdout cut into lines (or NUL-ended
names), each held only up to a size, and stderr kept up to a size; both read by the
caller's thread, which waits between reads for more to gather.

Why it waits: ripgrep writes each file's lines with one write of their own (its threads
print a file's buffer whole), hundreds of small writes for a common word, and a reader
woken for each took the cores from ripgrep's own threads on a small machine
(bench/README.md, `bench_grep_phases`). So once output came, the reader waits up to `BATCH_S`
for the program's end (its pidfd) before it reads again: the end is seen at once, and
a pipe of PIPE_BYTES (confined.py) holds what ripgrep writes meanwhile, so it never
waits on the reader. Without a pidfd or so wide a pipe, each write is read as it comes;
and so once two waits in a row gathered nothing (a rare pattern's few lines, far apart,
where each wait's end would be a wake-up of its own).
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import selectors
import subprocess
import time
from collections.abc import Iterator
from typing import IO

from ..files.confined import PIPE_BYTES, Child

# A line of ripgrep's output longer than this (a match on a minified file) is skipped,
# never held: the line it shows is cut to MAX_LINE_CHARS anyway. Its ends are kept
# (`Overlong`), so the answer can say which line it left out, and that it did.
MAX_OUTPUT_LINE_BYTES = 1 << 20
OVERLONG_ENDS_BYTES = 512
OVERLONG_KEPT = 20
# The wait for more output after a read (0: none).
BATCH_S = 0.001
Process = subprocess.Popen[bytes] | Child
# The bytes of a run's stderr kept (its messages are cut to 4,000 characters).
_STDERR_KEPT = 65536


class Output:
    """A run's stdout, cut into pieces, and its stderr (at most `_STDERR_KEPT` bytes
    kept), both read by the caller's thread: a thread per run for the deadline and one
    for stderr cost more than a small search (each start waits for the new thread to
    be scheduled, on a loaded machine for milliseconds)."""

    def __init__(self, proc: Process, sep: bytes) -> None:
        assert proc.stdout is not None
        assert proc.stderr is not None
        self._proc = proc
        self._out, self._err = proc.stdout.fileno(), proc.stderr.fileno()
        self._cut = _Pieces(sep)
        self.stderr: list[bytes] = []
        self._kept = 0
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._out, selectors.EVENT_READ)
        self._selector.register(self._err, selectors.EVENT_READ)
        self._ended_fd = _ended_fd(proc, self._out)
        self._ended: select.poll | None = None
        if self._ended_fd >= 0:
            self._ended = select.poll()
            self._ended.register(self._ended_fd, select.POLLIN)
        self._full = False  # the last read filled its buffer: more is there at once
        self._misses = 0  # waits in a row that gathered no output
        self.timed_out = False

    def pieces(self, deadline: float) -> Iterator[list[bytes]]:
        """stdout's pieces, a list per chunk read, until both pipes end or `deadline`
        (time.monotonic) passes: the program is then killed, and `timed_out` set."""
        waited = False
        while self._selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                self.timed_out = True
                self._proc.kill()
                return
            ready = self._selector.select(0 if waited else left)
            if waited:  # what the wait gathered; two waits in a row with none end waiting
                got = any(key.fd == self._out for key, _ in ready)
                self._misses = 0 if got else self._misses + 1
                waited = False
                if not ready:
                    continue
            for key, _ in ready:
                pieces = self._read(key.fd)
                if pieces:
                    yield pieces
                if key.fd == self._out and self._ended is not None and self._waits():
                    # More output, or the end (its pidfd), whichever comes first.
                    wait = min(BATCH_S, deadline - time.monotonic())
                    if wait > 0:
                        self._ended.poll(wait * 1000)
                        waited = True

    @property
    def overlong(self) -> Overlong:
        """The pieces of stdout skipped for their length (`MAX_OUTPUT_LINE_BYTES`)."""
        return self._cut.overlong

    def _waits(self) -> bool:
        """Whether to wait for more output before the next read: not after a read that
        filled its buffer (more is there at once), nor once waits found nothing twice
        in a row (sparse output: each write then costs two wake-ups instead of one)."""
        return not self._full and self._misses < _MISSES

    def close(self) -> None:
        """Read what is left of stderr (for at most a second: the program has ended or
        been killed), then close both pipes."""
        if self._out in self._selector.get_map():
            self._selector.unregister(self._out)
        ends = time.monotonic() + 1.0
        while self._selector.get_map() and (left := ends - time.monotonic()) > 0:
            for key, _ in self._selector.select(left):
                self._read(key.fd)
        self._selector.close()
        if self._ended_fd >= 0:
            os.close(self._ended_fd)
            self._ended_fd = -1
        for stream in (self._proc.stdout, self._proc.stderr):
            if stream is not None:
                stream.close()

    def _read(self, fd: int) -> list[bytes]:
        chunk = os.read(fd, _READ_BYTES)
        if fd == self._out:
            self._full = len(chunk) == _READ_BYTES or not chunk
        if not chunk:
            self._selector.unregister(fd)
            return self._cut.end() if fd == self._out else []
        if fd == self._err:
            if self._kept < _STDERR_KEPT:
                self.stderr.append(chunk)
                self._kept += len(chunk)
            return []
        return self._cut.feed(chunk)


_READ_BYTES = 1 << 20
_MISSES = 2


def _ended_fd(proc: Process, out: int) -> int:
    """A descriptor readable once `proc` has ended, for `Output`'s waits (-1: none, or
    its stdout `out` is a pipe too narrow to wait on: PIPE_BYTES (confined.py))."""
    get_size = getattr(fcntl, "F_GETPIPE_SZ", None)  # Linux only
    try:
        if BATCH_S <= 0 or get_size is None or fcntl.fcntl(out, get_size) < PIPE_BYTES:
            return -1
        if isinstance(proc, subprocess.Popen):
            return os.pidfd_open(proc.pid) if hasattr(os, "pidfd_open") else -1
        return proc.ended_fd()
    except OSError:  # a kernel without pidfds; the program already reaped
        return -1


def bounded_lines(stream: IO[bytes], sep: bytes) -> Iterator[bytes]:
    """The pieces of `stream` ended by `sep`, a piece past MAX_OUTPUT_LINE_BYTES skipped
    whole (never held)."""
    for pieces in _bounded_pieces(stream, sep):
        yield from pieces


def _bounded_pieces(stream: IO[bytes], sep: bytes) -> Iterator[list[bytes]]:
    """`bounded_lines`, a list per chunk read."""
    cut = _Pieces(sep)
    while True:
        chunk = stream.read1(1 << 20) if hasattr(stream, "read1") else stream.read(1 << 20)
        pieces = cut.feed(chunk) if chunk else cut.end()
        if pieces:
            yield pieces
        if not chunk:
            return


class Overlong:
    """The pieces skipped for their length: how many, and the first ends of the first
    `OVERLONG_KEPT` (a match's path and line number are at its ends)."""

    def __init__(self) -> None:
        self.count = 0
        self.context = 0  # of them, context lines (`--context`), not matches
        self.ends: list[tuple[bytes, bytes]] = []

    def add(self, head: bytes, tail: bytes) -> None:
        head, tail = head[:OVERLONG_ENDS_BYTES], tail[-OVERLONG_ENDS_BYTES:]
        self.count += 1
        if _CONTEXT.match(head):
            self.context += 1
        elif len(self.ends) < OVERLONG_KEPT:
            self.ends.append((head, tail))


# A context line of ripgrep's output: JSON's, or plain `[path NUL]number-text`.
_CONTEXT = re.compile(rb'\{"type":"context"|(?:[^\0]*\0)?\d+-')


class _Pieces:
    """Chunks of output cut into the pieces ended by `sep`, a piece past
    MAX_OUTPUT_LINE_BYTES skipped whole (never held; its ends are, in `overlong`)."""

    def __init__(self, sep: bytes) -> None:
        self._sep = sep
        self._pending = b""
        self._skipping = False
        self._head = self._tail = b""  # of the piece being skipped
        self.overlong = Overlong()

    def feed(self, chunk: bytes) -> list[bytes]:
        """The pieces `chunk` ends."""
        if self._skipping:  # the rest of an overlong piece, up to its end
            end = chunk.find(self._sep)
            if end < 0:
                self._tail = (self._tail + chunk)[-OVERLONG_ENDS_BYTES:]
                return []
            self.overlong.add(self._head, self._tail + chunk[:end])
            self._skipping = False
            chunk = chunk[end + len(self._sep) :]
        data = self._pending + chunk
        pieces = data.split(self._sep)
        self._pending = pieces.pop()
        if len(data) > MAX_OUTPUT_LINE_BYTES:  # else no piece of it can be overlong
            kept = []
            for piece in pieces:
                if len(piece) <= MAX_OUTPUT_LINE_BYTES:
                    kept.append(piece)
                else:
                    self.overlong.add(piece, piece)
            pieces = kept
        if len(self._pending) > MAX_OUTPUT_LINE_BYTES:
            self._head = self._pending[:OVERLONG_ENDS_BYTES]
            self._tail = self._pending[-OVERLONG_ENDS_BYTES:]
            self._pending, self._skipping = b"", True
        return pieces

    def end(self) -> list[bytes]:
        """The last piece, when the output did not end with `sep`."""
        if self._skipping:
            self.overlong.add(self._head, self._tail)
            return []
        return [self._pending] if self._pending else []
