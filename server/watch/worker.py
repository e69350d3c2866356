"""The watcher's worker thread: the one place where its work is done, in order.

Backends, setups and the kernel only leave word here (a path marked in the coalescer,
roots to re-check, a backend to leave); the worker wakes, leaves the backends it was
told to, re-checks and polls read files (polling.py), and hands each batch of quiet
paths to the change notices. One thread does it all, so a slow batch delays the next
one and never runs beside it, and a backend is never left from one of its own threads.
Should the thread end on an error all the same, `health` says so (stats: the watcher
`failed`, and why) and one warning says change notices stopped (state/health.py).
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
from collections.abc import Callable, Iterable

from ..files.ignore import IgnoreRules
from ..settings import Settings
from ..state.health import Health
from ..state.stats import WatchCounters
from .backends import Backend
from .coalesce import Coalescer, FsChange
from .polling import Poller
from .threads import name_os_thread

log = logging.getLogger("readkeeper")


class Worker:
    """The worker thread and what it waits on. `lock` guards the coalescer and the
    requests; `rules` and `polled` are the watcher's own dicts (root -> ignore rules,
    root -> why it is polled), read as they change."""

    def __init__(
        self,
        settings: Settings,
        counters: WatchCounters,
        rules: dict[str, IgnoreRules],
        polled: dict[str, str],
        stopping: threading.Event,
        changed: Callable[[list[FsChange]], None],
        read_files: Callable[[], dict[str, tuple[int, int]]],
        leave: Callable[[Backend, str], None],
        check_roots: Callable[[], None],
        warn: Callable[[str], None],
    ) -> None:
        self.counters = counters
        self._interval = settings.watch_poll_interval_ms / 1000
        self._polled = polled
        self._stopping = stopping
        self._changed = changed
        self._leave = leave
        self._check_roots = check_roots
        self._roots_due = False  # a backend saw a root's folder go
        # Events -> pending paths -> batches, guarded by lock.
        self.lock = threading.Condition()
        self.coalescer = Coalescer(settings.watch_debounce_ms / 1000, counters, self.lock)
        self._recheck: set[str] = set()  # roots whose read files need a stat check
        self._leaving: dict[Backend, str] = {}  # backends to leave, and why
        self._poller = Poller(rules, read_files, counters)  # this thread only
        self._warn = warn
        self.health = Health("the watcher's worker", on_failure=self._stopped)
        self.thread = threading.Thread(
            target=self.health.run(self._run), name="readkeeper-watch-worker", daemon=True
        )

    def _stopped(self, why: str) -> None:
        with contextlib.suppress(Exception):  # the warning must not hide the failure
            self._warn(
                f"readkeeper: {why}. Change notices have stopped (reads and edits still "
                "check every file); restart the server to watch again."
            )

    def wake(self) -> None:
        """Wake the thread (to see that the watcher is stopping)."""
        with self.lock:
            self.lock.notify_all()

    def pending(self) -> int:
        """How many paths wait in the coalescer."""
        with self.lock:
            return len(self.coalescer)

    def recheck(self, roots: Iterable[str]) -> None:
        """Compare the read files under `roots` with their records soon (events may have
        been lost)."""
        with self.lock:
            self._recheck.update(roots)
            self.lock.notify()

    def roots_soon(self) -> None:
        """Look at the roots' folders on this thread now (roots.py)."""
        with self.lock:
            self._roots_due = True
            self.lock.notify()

    def leave_soon(self, backend: Backend, reason: str) -> None:
        """Leave `backend` on this thread: the caller may be one of the threads leaving
        stops."""
        with self.lock:
            self._leaving.setdefault(backend, reason)
            self.lock.notify()

    def _run(self) -> None:
        name_os_thread("rk-watch-worker")
        next_poll = time.monotonic() + self._interval
        while True:
            with self.lock:
                while True:
                    if self._stopping.is_set():
                        return
                    now = time.monotonic()
                    due = self.coalescer.next_due()
                    # Every tick looks at the roots' folders (deleted, replaced?).
                    poll_at = next_poll
                    if (
                        self._recheck
                        or self._leaving
                        or self._roots_due
                        or min(due, poll_at) <= now
                    ):
                        break
                    wait = min(due, poll_at) - now
                    self.lock.wait(None if wait == math.inf else wait)
                recheck, self._recheck = self._recheck, set()
                leaving, self._leaving = self._leaving, {}
                roots_due, self._roots_due = self._roots_due, False
                batch = self.coalescer.take_due(now)
            try:
                for backend, reason in leaving.items():
                    self._leave(backend, reason)
                if roots_due or poll_at <= now:
                    self._check_roots()
                with self.lock:  # what that found to re-check
                    recheck |= self._recheck
                    self._recheck = set()
                if recheck:
                    self._check_read_files(recheck, against_records=True)
                if poll_at <= now:
                    next_poll = now + self._interval
                    if self._polled:
                        self.counters.polls += 1
                        self._check_read_files(set(self._polled), against_records=False)
                if batch:
                    self.counters.batches += 1
                    self._changed(batch)
            except Exception:  # a bad batch must not end the watcher, nor flood the log
                self.counters.failures += 1
                if self.counters.failures == 1:
                    log.exception("readkeeper: the watcher failed to handle a change")
                else:
                    log.debug("readkeeper: the watcher failed again", exc_info=True)

    def _check_read_files(self, roots: set[str], against_records: bool) -> None:
        """Stat the read files under `roots` (polling.py) and mark those that look changed."""
        changed = self._poller.check(roots, against_records)
        if changed:
            with self.lock:
                for path, kind in changed:
                    self.coalescer.mark(path, kind)
