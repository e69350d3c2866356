"""Coalescing: the paths that may have changed, each held until it has been quiet.

A path is handed on once it has been quiet for `watch_debounce_ms` (longer while a
writer still has it open, or while a path gone waits for the other half of its rename;
never more than `_MAX_DELAY` after its first event), so a formatter's burst of writes,
or an editor's write-and-rename save, is one change (`FsChange`) in one batch.
"""

from __future__ import annotations

import heapq
import math
import threading
import time
from dataclasses import dataclass
from typing import Literal

from ..state.stats import WatchCounters

Kind = Literal["modified", "created", "deleted", "moved"]

# A path a writer still holds open (modified, no close seen yet) waits this long for
# the close before it is looked at anyway; and no path waits longer than _MAX_DELAY.
_OPEN_WRITE_GRACE = 0.5
# A path gone waits this long for the other half of a rename: the backends pair the two
# halves only within a moment (inotify.py: `PAIR_SECONDS`), and a busy machine can
# split them into a delete and, a moment later, a create, which change notices then
# pair by content.
_UNPAIRED_MOVE_GRACE = 0.5
_MAX_DELAY = 2.0


@dataclass(frozen=True)
class FsChange:
    """A path that may have changed. `kind` is what the events suggested; changes.py
    looks at the file itself. `folder` means a whole folder went away (or moved), and
    with it every file read under it."""

    path: str
    kind: Kind
    moved_to: str | None = None
    folder: bool = False
    events: int = 1


@dataclass
class _Pending:
    kind: Kind
    first: float
    last: float
    moved_to: str | None = None
    folder: bool = False
    writing: bool = False
    events: int = 1


class Coalescer:
    """The pending paths, by when each is due. Every method is called with `wake` held;
    `wake` is notified when a first path arrives, so the thread that waits on it for
    `next_due` can take the batch."""

    def __init__(self, debounce: float, counters: WatchCounters, wake: threading.Condition) -> None:
        self._debounce = debounce
        self._counters = counters
        self._wake = wake
        self._pending: dict[str, _Pending] = {}
        self._due: list[tuple[float, str]] = []

    def __len__(self) -> int:
        return len(self._pending)

    def next_due(self) -> float:
        """When (time.monotonic) the first pending path may be due; math.inf if none."""
        return self._due[0][0] if self._due else math.inf

    def mark(
        self,
        path: str,
        kind: Kind,
        moved_to: str | None = None,
        folder: bool = False,
        writing: bool | None = None,
    ) -> None:
        """Note a possible change of `path`, merged with what is pending for it."""
        now = time.monotonic()
        pending = self._pending.get(path)
        if pending is None:
            self._pending[path] = _Pending(kind, now, now, moved_to, folder, writing=bool(writing))
            was_idle = not self._due
            heapq.heappush(self._due, (now + self._debounce, path))
            if was_idle:
                self._wake.notify()
            return
        pending.last = now
        pending.events += 1
        pending.folder = pending.folder or folder
        if kind == "deleted" and pending.kind == "moved":
            return  # a stat after the rename: the path is gone, and the move says where to
        if not (kind == "modified" and pending.kind == "created"):  # created, then written
            pending.kind = kind
        if moved_to is not None or kind != "moved":
            pending.moved_to = moved_to
        if writing is not None:
            pending.writing = writing

    def take_due(self, now: float) -> list[FsChange]:
        """Pop the paths whose quiet time has passed."""
        ready: list[FsChange] = []
        while self._due and self._due[0][0] <= now:
            _, path = heapq.heappop(self._due)
            pending = self._pending.get(path)
            if pending is None:
                continue
            due = pending.last + self._debounce
            if pending.writing:
                due = pending.last + max(self._debounce, _OPEN_WRITE_GRACE)
            elif pending.kind == "deleted":
                due = pending.last + max(self._debounce, _UNPAIRED_MOVE_GRACE)
            due = min(due, pending.first + _MAX_DELAY)
            if due > now:
                heapq.heappush(self._due, (due, path))
                continue
            del self._pending[path]
            if pending.events > 1:
                self._counters.coalesced_bursts += 1
                self._counters.coalesced_events += pending.events - 1
            ready.append(
                FsChange(path, pending.kind, pending.moved_to, pending.folder, pending.events)
            )
        return ready
