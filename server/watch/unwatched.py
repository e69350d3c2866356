"""Read files no live watch covers, looked at when `readkeeper/changes` is asked.

A watch may not cover a file a session read: the ignore rules skip its folder (a
gitignored `build/`, `watch_exclude`) or the file itself, Watchman skips what the
repository's `.watchmanconfig` names (`ignore_dirs`, `ignore_vcs`: the repository
decides, so readkeeper never takes Watchman's word for a file), polling and a watcher
that is off, failed, set up or falling back hear nothing for sure. Only readkeeper's
own inotify reader, watching, with a watch on the file's folder and the ignore rules
keeping the file, covers it (watch/hears.py `covers`); every other read file is looked
at here each time `changes` is asked: its stat (size, mtime_ns, inode, ctime_ns)
against the one last looked at, and when that differs (or was never looked at since
the read) its content, by the change notices' own comparison (changes.py).

The work is bounded: at most MAX_FILES stats and MAX_BYTES of content a call, the files
looked at longest ago first; those left over are counted in the answer's note, so the
agent knows to call again or re-read them.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable

from ..state.readstate import ReadRecord

MAX_FILES = 2_000
MAX_BYTES = 64 << 20
# Stats remembered, over every session; past it all are forgotten (each file's content
# is then compared once more, within the bounds above).
MAX_REMEMBERED = 100_000
# What a stat says of a file (None: it is gone or cannot be looked at).
Stat = tuple[int, int, int, int] | None


def never(path: str) -> bool:
    """No watch covers anything (no watcher started)."""
    return False


class Unwatched:
    """What each session's unwatched read files looked like when last looked at."""

    def __init__(self) -> None:
        self.covers: Callable[[str], bool] = never  # the watcher's, once it starts
        self._seen: dict[tuple[str, str], tuple[int, Stat, int]] = {}
        self._order = itertools.count()
        self._lock = threading.Lock()

    def due(self, session: str, records: list[ReadRecord]) -> tuple[list[ReadRecord], int]:
        """Of the session's `records`, those whose file no watch covers and which may
        have changed since last looked at (their content is to be compared now), and
        how many were left for the bounds."""
        with self._lock:
            if len(self._seen) > MAX_REMEMBERED:  # evicted sessions' too: start afresh
                self._seen.clear()
            held = {(session, r.path) for r in records}
            for key in [k for k in self._seen if k[0] == session and k not in held]:
                del self._seen[key]
        unwatched = [r for r in records if not self.covers(r.path)]
        unwatched.sort(key=lambda r: self._seen.get((session, r.path), (0, None, -1))[2])
        due: list[ReadRecord] = []
        left = files = spent = 0
        for record in unwatched:
            if files >= MAX_FILES:
                left += 1
                continue
            files += 1
            now = _stat(record.path)
            key = (session, record.path)
            seen = self._seen.get(key)
            if seen is not None and seen[:2] == (record.recorded_ns, now):
                continue
            cost = now[0] if now is not None else 0
            if due and spent + cost > MAX_BYTES:
                left += 1
                continue
            spent += cost
            due.append(record)
            with self._lock:
                self._seen[key] = (record.recorded_ns, now, next(self._order))
        return due, left

    def forget(self, session: str) -> None:
        """The session is gone: forget what its files looked like."""
        with self._lock:
            for key in [k for k in self._seen if k[0] == session]:
                del self._seen[key]


def note(left: int) -> str:
    """What the answer says of the files the bounds left unlooked at."""
    files = "1 file you read lies" if left == 1 else f"{left} files you read lie"
    were = "was" if left == 1 else "were"
    return (
        f"{files} where no watch hears changes and {were} not looked at "
        f"in this call (it looks at most {MAX_FILES} such files and {MAX_BYTES >> 20} MiB): "
        "call changes again, or re-read them before relying on them."
    )


def _stat(path: str) -> Stat:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return (info.st_size, info.st_mtime_ns, info.st_ino, info.st_ctime_ns)


__all__ = ["MAX_BYTES", "MAX_FILES", "Unwatched", "never", "note"]
