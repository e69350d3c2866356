"""Polling: stat the files agents have read, to see which look changed.

Two uses. Polling proper, for roots no backend watches (an unreliable filesystem, the
fallback's last step, `watcher` `polling`): every `watch_poll_interval_ms` it compares
each read file with its own last stat, at most `_POLL_BATCH` files a round. And the
re-check, after a setup, a queue overflow or a fallback, when events may have been
lost: every read file under the roots is compared with what its read recorded.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable

from ..files.ignore import IgnoreRules
from ..files.paths import is_within
from ..state.stats import WatchCounters
from .coalesce import Kind

_POLL_BATCH = 10_000


class Poller:
    """Which read files look changed. `rules` is the watcher's own dict (root -> its
    ignore rules); `read_files` gives path -> (mtime_ns, size) of each file's newest
    read. Used by the watcher's worker thread only."""

    def __init__(
        self,
        rules: dict[str, IgnoreRules],
        read_files: Callable[[], dict[str, tuple[int, int]]],
        counters: WatchCounters,
    ) -> None:
        self._rules = rules
        self._read_files = read_files
        self._counters = counters
        self._queue: deque[str] = deque()
        self._base: dict[str, tuple[int, int]] = {}
        self._seen: dict[str, tuple[int, int, int] | None] = {}

    def check(self, roots: set[str], against_records: bool) -> list[tuple[str, Kind]]:
        """Stat the read files under `roots`: those that look changed, and how.

        Polling (`against_records` False) compares each file with its own last stat, in
        rounds of at most `_POLL_BATCH`; a re-check compares every file with what its
        read recorded."""
        roots = {r for r in roots if r in self._rules}
        if not roots:
            return []
        if against_records:
            files = self._in_scope(self._read_files(), roots)
            paths: Iterable[str] = list(files)
        else:
            if not self._queue:
                self._base = self._in_scope(self._read_files(), roots)
                self._queue.extend(self._base)
                self._seen = {p: s for p, s in self._seen.items() if p in self._base}
            files = self._base
            count = min(_POLL_BATCH, len(self._queue))
            paths = [self._queue.popleft() for _ in range(count)]
        changed: list[tuple[str, Kind]] = []
        for path in paths:
            try:
                st = os.stat(path)
                now: tuple[int, int, int] | None = (st.st_mtime_ns, st.st_size, st.st_ino)
            except FileNotFoundError:
                now = None
            except OSError:
                continue
            if against_records or path not in self._seen:
                recorded = files.get(path)
                differs = now is None or recorded is None or recorded != now[:2]
            else:
                differs = self._seen[path] != now
            if not against_records:
                self._seen[path] = now
                self._counters.polled_files += 1
            if differs:
                changed.append((path, "deleted" if now is None else "modified"))
        return changed

    def _in_scope(
        self, files: dict[str, tuple[int, int]], roots: set[str]
    ) -> dict[str, tuple[int, int]]:
        kept: dict[str, tuple[int, int]] = {}
        for path, stat in files.items():
            for root in roots:
                rules = self._rules.get(root)
                if rules is not None and is_within(path, root) and not rules.ignored(path):
                    kept[path] = stat
                    break
        return kept
