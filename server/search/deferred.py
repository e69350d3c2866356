"""The kept listing of a folder whose first glob was answered without one, built after
the answer (issue 31): the first glob of a server then costs what a glob with no
watcher costs (ripgrep sorts by time itself), not ripgrep's listing plus a stat of
every file plus the order. So is the order of a listing kept but not yet ordered (a
build stopped by a call, a listing ripgrep just made): that glob stats its matches
only (listing.py `_newest_listed`).

What it builds is what that first glob used to build before answering, by the same
functions (listing.py `list_files`, then `FileTimes.newest` of every file): the same
ripgrep run, the same stats beneath the root, the same rules for what may be kept and
for when it is dropped (kept.py, mtimes.py: a change heard while it runs keeps nothing
of what was read before it). Nothing new is trusted; only the time the call waits moves.

A later glob of the folder that arrives mid-build joins it (waits for its end, at most
ripgrep's deadline) and then answers as a glob after a build does: from the kept
listing when it was kept, else the usual way. One build at a time per folder, on its
own thread; `close` stops them (ripgrep is killed after its current chunk of output,
the stats stop within lookup.py's `CHECK_EVERY` of them) and waits for them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ..state.health import Health
from . import rg

# Joined builds wait at most this long past ripgrep's own deadline.
_JOIN_MARGIN_S = 1.0
# A closed core's builds stop within a chunk of ripgrep's output or a few hundred
# stats; this bounds the wait for one that does not.
_CLOSE_WAIT_S = 5.0

Build = Callable[[Callable[[], bool]], None]


class Builds:
    """The builds started after first answers, one at most per folder (a key)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[bytes, threading.Thread] = {}
        self._closed = threading.Event()
        self.counts = {"started": 0, "joined": 0}
        self.health = Health("a glob's listing built after its answer")

    def start(self, key: bytes, build: Build) -> bool:
        """Run `build(stop)` on its own thread unless one for `key` runs or the builds
        are closed; whether it started."""
        with self._lock:
            if self._closed.is_set() or key in self._running:
                return False
            thread = threading.Thread(
                target=self._run, args=(key, build), name="readkeeper-glob-build", daemon=True
            )
            self._running[key] = thread
            self.counts["started"] += 1
        thread.start()
        return True

    def status(self) -> dict[str, Any]:
        """As `readkeeper/stats` shows them (`workers`): counts, and the last failure."""
        with self._lock:
            running = len(self._running)
        # Each build is its own thread: one that failed leaves none running, nothing down.
        state = "running" if running else "idle"
        return {**self.health.status(None), "state": state, **self.counts}

    def running(self, key: bytes) -> bool:
        """Whether a build of `key` runs now."""
        with self._lock:
            return key in self._running

    def join(self, key: bytes) -> None:
        """Wait for the build of `key`, if one runs (at most ripgrep's deadline and a
        margin: then the glob goes on the usual way)."""
        with self._lock:
            thread = self._running.get(key)
        if thread is not None and thread is not threading.current_thread():
            self.counts["joined"] += 1
            thread.join(rg.DEADLINE_S + _JOIN_MARGIN_S)

    def wait(self) -> None:
        """Wait for every build running now (the bench, tests)."""
        with self._lock:
            threads = list(self._running.values())
        for thread in threads:
            thread.join(rg.DEADLINE_S + _JOIN_MARGIN_S)

    def close(self) -> None:
        """Stop the builds and wait for them (a core shut down leaves no thread)."""
        self._closed.set()
        with self._lock:
            threads = list(self._running.values())
        for thread in threads:
            thread.join(_CLOSE_WAIT_S)

    def _run(self, key: bytes, build: Build) -> None:
        try:
            build(self._closed.is_set)
        except BaseException as exc:  # an optimisation only: the next glob lists afresh
            self.health.failed(exc)  # said in stats (`workers`), never swallowed
        finally:
            with self._lock:
                self._running.pop(key, None)
