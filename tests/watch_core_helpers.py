"""Helpers for the watcher's in-process tests: a core watching its workspace, with the
notices it pushed (`Watching`), and polls with this suite's deadline.

Waiting is always a poll with a deadline. "Exactly one notice" is checked after a
sentinel: a later write to another read file, whose notice can only come once every
earlier event has been looked at.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from helpers import wait_until
from readkeeper.core import Readkeeper
from readkeeper.protocol import ChangesParams, FileChange, ReadParams

DEADLINE_S = 10.0


def wait_for(condition: Callable[[], Any], what: str, timeout: float = DEADLINE_S) -> Any:
    """`helpers.wait_until` with this file's deadline."""
    return wait_until(condition, what, timeout)


# The worker reading ahead runs at nice 19 (read/ahead.py): on a loaded machine it gets a
# small share of a core, so what it builds can take many seconds. A hang detector only.
AHEAD_DEADLINE_S = 60.0


def wait_for_ahead(condition: Callable[[], Any], what: str) -> Any:
    """`wait_for` something the worker reading ahead does."""
    return wait_until(condition, what, AHEAD_DEADLINE_S)


class Watching:
    """A core that is watching its workspace, with the notices it pushed."""

    def __init__(self, root: Path, settings: dict[str, Any] | None = None) -> None:
        self.root = root
        self.core = Readkeeper(roots=[str(root)], client_settings=settings)
        self.pushed: list[tuple[str, FileChange]] = []
        self.warnings: list[str] = []
        self.progress: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        self.core.notices.on_notice = self._on_notice

    def _on_notice(self, session: str, changes: list[FileChange]) -> None:
        with self._lock:
            self.pushed.extend((session, c) for c in changes)

    def start(self) -> Watching:
        """Start watching, and wait until the setup is over."""
        self.core.start_watching(self.warnings.append, self._on_progress)
        wait_for(lambda: self.status()["state"] != "starting", "the watcher's setup")
        return self

    def _on_progress(self, stage: str, message: str) -> None:
        self.progress.append((stage, message))

    def status(self) -> dict[str, Any]:
        """The watcher's block of readkeeper/stats."""
        return self.core.watcher_status()

    def read(self, path: str, session: str = "") -> None:
        """Read `path` for `session`."""
        self.core.read(ReadParams(file_path=path, session=session))

    def notices(self, session: str = "", path: str | None = None) -> list[FileChange]:
        """The notices pushed to `session` so far (of `path` only, if given)."""
        with self._lock:
            return [
                c
                for s, c in self.pushed
                if s == session and (path is None or c.file_path == str(self.root / path))
            ]

    def wait_notice(self, path: str, session: str = "", count: int = 1) -> list[FileChange]:
        """Wait for `count` notices of `path` to `session`: all of them so far."""
        return wait_for(
            lambda: len(self.notices(session, path)) >= count and self.notices(session, path),
            f"{count} notice(s) for {path} in session {session!r}",
        )

    def sentinel(self, session: str = "") -> None:
        """Write a read file and wait for its notice: everything before is looked at."""
        path = self.root / "sentinel.txt"
        if not path.exists():
            path.write_text("0\n")
            self.read("sentinel.txt", session)
        seen = len(self.notices(session, "sentinel.txt"))
        path.write_text(f"{seen + 1}\n")
        self.wait_notice("sentinel.txt", session, seen + 1)

    def take(self, session: str = "") -> list[FileChange]:
        """readkeeper/changes for `session`: the agent's channel."""
        return self.core.changes_for(ChangesParams(session=session)).changes

    def close(self) -> None:
        """Stop the core and its watcher."""
        self.core.close()


@contextlib.contextmanager
def watching_core(root: Path) -> Iterator[Readkeeper]:
    """A core whose inotify watcher hears `root` (asserted), closed afterwards."""
    watching = Watching(root).start()
    try:
        assert watching.status()["state"] == "watching"
        yield watching.core
    finally:
        watching.core.close()
