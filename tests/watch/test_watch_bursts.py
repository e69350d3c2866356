"""What keeps a burst of writes cheap (issue 16): inotify's events go from watchdog's
emitter thread straight to the watcher, and a write to a file no session has read
costs no more than a look-up (never the wait for an edit's lock).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from helpers import wait_until
from readkeeper.files import locks
from readkeeper.watch import changes
from readkeeper.watch.intake import event_filter
from readkeeper.watch.observer import PrunedObserver
from watch_core_helpers import Watching
from watch_helpers import make


class Recorder:
    """The watcher's side of the observer (`observer.Hooks`), keeping what it is told."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []  # (path, thread name)

    def subfolders(self, folder: bytes) -> list[bytes]:
        with os.scandir(folder) as entries:
            return [e.path for e in entries if e.is_dir(follow_symlinks=False)]

    def limit_reached(self, error: OSError) -> None:
        raise AssertionError(error)

    def overflowed(self) -> None:
        raise AssertionError("overflow")

    def event(self, event: Any) -> None:
        self.events.append((os.fsdecode(event.src_path), threading.current_thread().name))


class Handler:
    """A watchdog handler that keeps whatever the observer's dispatch thread gives it."""

    def __init__(self) -> None:
        self.dispatched: list[Any] = []

    def dispatch(self, event: Any) -> None:
        self.dispatched.append(event)


def test_events_go_from_the_emitter_thread_to_the_watcher(workspace: Path) -> None:
    recorder, handler = Recorder(), Handler()
    observer = PrunedObserver(recorder)
    observer.start()
    try:
        observer.schedule(handler, str(workspace), recursive=True, event_filter=event_filter())
        (workspace / "sub").mkdir()
        target = make(workspace / "sub" / "a.txt", "one\n")
        wait_until(lambda: (str(target), "readkeeper-watch-emitter") in recorder.events, "event")
        assert {thread for _, thread in recorder.events} == {"readkeeper-watch-emitter"}
        assert handler.dispatched == []  # watchdog's queue and dispatch thread stay idle
    finally:
        observer.stop()
        observer.join(5)


@pytest.fixture
def lock_requests(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every path the change notices take the edit lock of."""
    asked: list[str] = []

    def lock_for(path: str) -> Any:
        asked.append(path)
        return locks.lock_for(path)

    monkeypatch.setattr(changes, "lock_for", lock_for)
    return asked


def test_a_write_to_a_file_nobody_read_takes_no_lock(
    workspace: Path, lock_requests: list[str]
) -> None:
    watching = Watching(workspace).start()
    try:
        read = make(workspace / "read.txt", "v1\n")
        unread = make(workspace / "unread.txt", "v1\n")
        watching.read("read.txt")
        unread.write_text("v2\n")
        read.write_text("v2\n")
        watching.wait_notice("read.txt")
        watching.sentinel()
        assert str(read) in lock_requests
        assert str(unread) not in lock_requests
    finally:
        watching.close()
