"""Intake: the events a backend reports, through the ignore rules, into the coalescer.

Every backend ends here: the changes readkeeper's inotify reader sees (`Intake.note`,
on Linux), watchdog's events elsewhere (through the handler `Intake.handler` makes,
subscribed to the kinds `event_filter` lists) and Watchman's reports
(`Intake.watchman_changed`). Paths the ignore rules skip (VCS folders, `watch_exclude`,
.gitignore'd paths: ignore.py) are counted and dropped; a .gitignore edit applies to
the events that follow it at once.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..files.ignore import IgnoreRules
from ..state.stats import WatchCounters
from . import watchman
from .coalesce import Coalescer, Kind

if TYPE_CHECKING:
    from watchdog.events import FileSystemEvent


class Intake:
    """Turns events into marks on the coalescer. `rules` is the watcher's own dict
    (root -> its ignore rules), read as it changes; marks are made under `lock`."""

    def __init__(
        self,
        rules: dict[str, IgnoreRules],
        coalescer: Coalescer,
        lock: threading.Condition,
        counters: WatchCounters,
    ) -> None:
        self._rules = rules
        self._coalescer = coalescer
        self._lock = lock
        self._counters = counters
        self._serial = threading.Lock()  # events of several roots' emitters take turns
        # Told of every event before the ignore rules judge it, on the backend's thread:
        # (path, where it moved to or None, whether it is a folder, the kind). Caches of
        # file metadata (search/mtimes.py) forget what changed.
        self.listeners: list[Callable[[str, str | None, bool, str], None]] = []

    def rules_for(self, path: str) -> IgnoreRules | None:
        """The ignore rules of the watched root `path` is under, if any."""
        for rules in list(self._rules.values()):
            if rules.covers(path):
                return rules
        return None

    def handler(self) -> Any:
        """A watchdog event handler that hands every event to `on_event`."""
        from watchdog.events import FileSystemEventHandler

        on_event = self.on_event

        class Handler(FileSystemEventHandler):
            def dispatch(self, event: FileSystemEvent) -> None:
                on_event(event)

        return Handler()

    def on_event(self, event: FileSystemEvent) -> None:
        """One watchdog event (from any thread: one at a time)."""
        with self._serial:
            self._on_event(event)

    def _on_event(self, event: FileSystemEvent) -> None:
        kind = event.event_type
        src = os.fsdecode(event.src_path)
        if kind == "closed":  # a write is complete
            self.note(src, "modified", event.is_directory)
        elif kind in ("created", "modified", "deleted", "moved"):
            dest = os.fsdecode(event.dest_path) if kind == "moved" and event.dest_path else None
            # A modification may be one of many writes: wait for the close a while.
            writing = kind == "modified"
            self.note(src, kind, event.is_directory, dest, writing)  # type: ignore[arg-type]

    def watchman_changed(self, changes: list[watchman.Change]) -> None:
        """What a Watchman subscription reported (one PDU)."""
        # A .gitignore first: the paths reported with it are judged by its new patterns.
        for change in sorted(changes, key=lambda c: os.path.basename(c.path) != ".gitignore"):
            self.note(change.path, change.kind, change.folder)

    def note(
        self, src: str, kind: Kind, is_dir: bool, dest: str | None = None, writing: bool = False
    ) -> None:
        """An event of the backend in use: skip what the ignore rules skip, mark the rest."""
        for listener in self.listeners:
            listener(src, dest, is_dir, kind)
        rules = self.rules_for(src)
        if rules is None:
            return
        if os.path.basename(src) == ".gitignore":
            rules.forget_folder(os.path.dirname(src))
        src_ignored = rules.ignored(src, is_dir)
        dest_ignored = dest is None or rules.ignored(dest, is_dir)
        mark = self._coalescer.mark
        with self._lock:
            self._counters.events += 1
            if src_ignored and dest_ignored:
                self._counters.ignored_events += 1
                return
            if is_dir:  # a folder gone or moved: files read under it
                if kind in ("deleted", "moved") and not src_ignored:
                    mark(src, "moved" if dest and not dest_ignored else "deleted", dest, True)
            elif kind == "moved":
                if not src_ignored:
                    mark(src, "moved" if not dest_ignored else "deleted", dest)
                if dest is not None and not dest_ignored:
                    mark(dest, "created")
            elif not src_ignored:
                mark(src, kind, writing=writing)


def event_filter() -> list[type[FileSystemEvent]]:
    """The watchdog event kinds the observer is subscribed to."""
    # Opens and reads (readkeeper's own included) are never subscribed to.
    from watchdog.events import (
        DirDeletedEvent,
        DirMovedEvent,
        FileClosedEvent,
        FileCreatedEvent,
        FileDeletedEvent,
        FileModifiedEvent,
        FileMovedEvent,
    )

    return [
        FileCreatedEvent,
        FileModifiedEvent,
        FileClosedEvent,
        FileDeletedEvent,
        FileMovedEvent,
        DirDeletedEvent,
        DirMovedEvent,
    ]
