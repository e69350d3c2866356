"""One budget for the bytes of files that calls in flight hold while they work on them.

A read of a 95 MB notebook, PDF or image holds the file's bytes (and what its reader
makes of them) for seconds; eight such reads at once took the server to 2 GB, linearly
with the number of reads, bounded only by the 64 requests in flight. So every file a
call loads whole (`fileio.read_at_most`: reads of every kind, readMany, attachments,
the drop-in's tools, edits and the diff of a stale one) is counted against one budget
for as long as the call runs:

- a call that would take the bytes held past `TOTAL_BYTES` waits for the others to
  answer (a 100 MB document is read in seconds), up to `WAIT_SECONDS`, and is then
  refused `too_large` with reason `busy` and what to do; at most `MAX_WAITING` calls
  wait (each on a thread of the server's pool), the rest are refused at once. Waiting
  rather than refusing: an agent's parallel reads are each answered, only later, and
  a waiting call holds no file bytes (it waits before reading);
- a file under `SMALL_BYTES` is not counted and never waits: 64 calls in flight hold
  at most 64 MB of them, and small reads never queue behind large ones;
- one call already holding bytes never waits for more (it would wait on itself);
- a file larger than the whole budget runs alone;
- what a call held is given back when it ends, and the allocator trimmed after a
  large one (`trim`): glibc keeps freed blocks in the arena of the thread that freed
  them, which left 0.9 GB resident after eight large reads.

A call is a `call()` block (read/pipeline.py opens one per read, the core one per
edit or write); a load outside any call (the reads ahead, the watcher's looks: each
one thread, within `max_size_bytes`) is not counted. The limits are module constants,
not settings: a workspace cannot lift them.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from .. import quoting
from ..errors import ReadkeeperError

MB = 1 << 20
# File bytes every call in flight holds together: two documents of the largest default
# size (`max_document_bytes`, 100 MB) at once; on a 2-core machine more would only
# compete for the cores.
TOTAL_BYTES = 200 * MB
# A file under this is not counted: it never waits.
SMALL_BYTES = 1 * MB
# How long a call waits for room before it is refused.
WAIT_SECONDS = 30.0
# At most this many calls wait for room at once; more are refused at once.
MAX_WAITING = 4
# A call that held at least this much is followed by a trim of the allocator.
TRIM_AFTER_BYTES = 8 * MB


class Busy(Exception):
    """No room in a budget within its wait, or too many calls waiting."""


class Budget:
    """Bytes held at once by the calls in flight, with counters for `stats`: the one
    rule for every memory budget of the server (file bytes here, decoded pixels in
    read/readers/decode_budget.py). A taker that does not fit waits for room, at most
    `max_waiting` at once (each on a thread of the server's pool), up to
    `wait_seconds`; past either it gets `Busy`."""

    def __init__(
        self,
        total: int = TOTAL_BYTES,
        max_waiting: int = MAX_WAITING,
        wait_seconds: float = WAIT_SECONDS,
    ) -> None:
        self.total = total
        self.max_waiting = max_waiting
        self.wait_seconds = wait_seconds
        self._used = 0
        self._holding = 0  # calls holding bytes now
        self._waiting = 0
        self._counts = {"peak_bytes": 0, "peak_calls": 0, "waited": 0, "refused": 0}
        self._changed = threading.Condition()

    @property
    def used(self) -> int:
        with self._changed:
            return self._used

    @property
    def waiting(self) -> int:
        with self._changed:
            return self._waiting

    def take(
        self,
        nbytes: int,
        waits: bool,
        cancelled: Callable[[], bool],
        wait: float | None = None,
    ) -> int:
        """Count `nbytes` (at most the whole budget: then it runs alone) as held, and
        return what was counted; when `waits`, first wait for room, up to `wait`
        seconds (`wait_seconds` by default), raising `Busy`."""
        nbytes = min(nbytes, self.total)
        deadline = time.monotonic() + (self.wait_seconds if wait is None else wait)
        with self._changed:
            if waits and self._used + nbytes > self.total:
                if self._waiting >= self.max_waiting:
                    self._counts["refused"] += 1
                    raise Busy
                self._waiting += 1
                self._counts["waited"] += 1
                try:
                    while self._used + nbytes > self.total:
                        left = deadline - time.monotonic()
                        if left <= 0 or cancelled():
                            self._counts["refused"] += 1
                            raise Busy
                        self._changed.wait(min(left, 0.05))
                finally:
                    self._waiting -= 1
            self._used += nbytes
            self._counts["peak_bytes"] = max(self._counts["peak_bytes"], self._used)
        return nbytes

    @contextlib.contextmanager
    def reserve(
        self,
        nbytes: int,
        wait: float | None = None,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> Iterator[None]:
        """Hold `nbytes` for the block (waiting for room as `take` does), then give
        them back and trim the allocator after a large one."""
        taken = self.take(nbytes, True, cancelled, wait)
        try:
            yield
        finally:
            self.give_back(taken)
            if taken >= TRIM_AFTER_BYTES:
                trim()

    def holds(self, delta: int) -> None:
        """One more (+1) or one fewer (-1) call holding bytes."""
        with self._changed:
            self._holding += delta
            self._counts["peak_calls"] = max(self._counts["peak_calls"], self._holding)

    def give_back(self, nbytes: int) -> None:
        with self._changed:
            self._used -= nbytes  # what `take` counted, each take within the total
            self._changed.notify_all()

    def status(self) -> dict[str, Any]:
        """As `stats` shows it: the cap, what is held and waits now, the peaks, counts."""
        with self._changed:
            return {
                "total_bytes": self.total,
                "held_bytes": self._used,
                "calls_holding": self._holding,
                "waiting": self._waiting,
                **self._counts,
            }


_budget = Budget()


def budget() -> Budget:
    """The server's one budget."""
    return _budget


@dataclass
class _Call:
    name: str
    cancelled: Callable[[], bool]
    held: int = 0


_CALL: ContextVar[_Call | None] = ContextVar("readkeeper_held_bytes", default=None)


@contextlib.contextmanager
def call(name: str, cancelled: Callable[[], bool] = lambda: False) -> Iterator[None]:
    """A call's block: what it loads within is counted until the block ends. `name`
    (the file asked for) is what a refusal names; `cancelled()` ends a wait."""
    running = _Call(name, cancelled)
    token = _CALL.set(running)
    try:
        yield
    finally:
        _CALL.reset(token)
        if running.held:
            _budget.holds(-1)  # before the bytes: a call let in by them counts after it
            _budget.give_back(running.held)
            if running.held >= TRIM_AFTER_BYTES:
                trim()


def hold(nbytes: int) -> None:
    """Count `nbytes` of a file about to be loaded against the running call (nothing
    outside a call, nor for a small file); `too_large` (reason `busy`) when no room
    was found in time."""
    running = _CALL.get()
    if running is None or nbytes < SMALL_BYTES:
        return
    try:
        _budget.take(nbytes, waits=not running.held, cancelled=running.cancelled)
    except Busy:
        raise busy(running.name) from None
    if not running.held:
        _budget.holds(1)
    running.held += min(nbytes, _budget.total)


def status() -> dict[str, Any]:
    """The budget as `stats` shows it."""
    return _budget.status()


def busy(name: str) -> ReadkeeperError:
    """The refusal of a call that found no room for its file's bytes."""
    return ReadkeeperError(
        "too_large",
        f"{quoting.name(name)}: other calls are working on large files, holding the "
        f"{TOTAL_BYTES // MB} MB of file bytes the server holds at once, and none "
        f"finished within {WAIT_SECONDS:.0f} s. Call again once the other reads of large "
        "files have answered (read large files one or two at a time).",
        file_path=name,
        reason="busy",
        max_held_file_bytes=TOTAL_BYTES,
    )


def _load_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        function = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to trim
        return None
    function.argtypes = [ctypes.c_size_t]
    function.restype = ctypes.c_int
    return function


_trim = _load_trim()


def trim() -> None:
    """Give the allocator's free pages back to the system (glibc only)."""
    if _trim is not None:
        _trim(0)


__all__ = ["Budget", "Busy", "budget", "busy", "call", "hold", "status", "trim"]
