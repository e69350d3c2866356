"""What keeps a burst of writes cheap (issue 16): a write to a file no session has read
costs no more than a look-up (never the wait for an edit's lock). That inotify's
records go from the reader's thread straight to the intake: test_inotify.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from readkeeper.files import locks
from readkeeper.watch import changes
from watch_core_helpers import Watching
from watch_helpers import make


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
