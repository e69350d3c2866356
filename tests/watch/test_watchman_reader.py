"""A Watchman subscription whose reader thread ends on an error is reported lost
(watchman.py), so the watcher leaves Watchman, warns and falls back, never a dead
reader behind a watcher that says it watches. Against a Watchman service of the
test's own."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import wait_until
from readkeeper.watch import watchman
from watch_helpers import watchman_missing
from watchman_service import PrivateWatchman


@pytest.fixture
def service(monkeypatch: pytest.MonkeyPatch) -> Iterator[PrivateWatchman]:
    why = watchman_missing()
    if why is not None:
        pytest.skip(why)
    with PrivateWatchman() as started:
        monkeypatch.setenv("WATCHMAN_SOCK", started.sock)
        yield started


class FailingSink:
    """The watcher's side of a subscription, with a bug in its handling of changes."""

    def __init__(self) -> None:
        self.lost_reasons: list[str] = []

    def changed(self, root: str, changes: list[watchman.Change]) -> None:
        raise RuntimeError(f"a bug in the sink {object()!r}")

    def fresh(self, root: str) -> None:
        pass

    def lost(self, root: str, reason: str) -> None:
        self.lost_reasons.append(reason)


def test_a_reader_that_ends_on_an_error_reports_the_subscription_lost(
    workspace: Path, service: PrivateWatchman
) -> None:
    sink = FailingSink()
    subscription = watchman.Subscription(str(workspace), sink, rewatch=True)
    subscription.start(spawn=False)
    written = iter(range(10**6))
    last = [0.0]

    def lost_after_a_write() -> list[str]:
        # Written until a report of changes comes (the first one may be a fresh
        # instance's, which a write before it folds into), at most every 0.2 s:
        # Watchman reports once the tree is quiet for its settle time (20 ms), so a
        # write at each of wait_until's polls (10 ms apart) kept it from ever reporting.
        if time.monotonic() - last[0] > 0.2:
            (workspace / "a.txt").write_text(f"{next(written)}\n")
            last[0] = time.monotonic()
        return sink.lost_reasons

    try:
        wait_until(lost_after_a_write, "the subscription to be reported lost")
        assert sink.lost_reasons == [
            # The exception's words as every library's reach the user (no repr, no
            # heap address: errors.library_detail).
            "readkeeper's Watchman reader stopped on an unexpected error: "
            'RuntimeError: "a bug in the sink"'
        ]
    finally:
        subscription.stop()
