"""A background thread that ends is never reported as running (state/health.py): the
watcher says `failed` and why, and warns once that change notices stopped; the work left
for after an answer and the reads ahead say why theirs ended and start another; a glob
build that fails is counted and said. Each is ended here by what ends such a thread
for real: a wait the platform cannot make, or a BaseException a step lets through."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.search.deferred import Builds
from readkeeper.settings import Settings
from readkeeper.state.later import Later
from readkeeper.watch.watcher import WatchCallbacks, Watcher
from watch_core_helpers import wait_for, wait_for_ahead


class Ended(BaseException):
    """What no `except Exception` of a step catches."""


def test_a_watcher_whose_worker_ended_says_failed_and_why_and_warns_once(
    workspace: Path,
) -> None:
    # A Settings built in-process skips the ranges resolve_settings holds (test_setting_
    # ranges.py): a poll interval past the platform's time_t ends the worker's wait.
    warnings: list[str] = []
    callbacks = WatchCallbacks(changed=lambda batch: None, read_files=dict, warn=warnings.append)
    watcher = Watcher([str(workspace)], Settings(watch_poll_interval_ms=10**13), callbacks)
    watcher.start()
    try:
        status = wait_for(lambda: (s := watcher.status())["state"] == "failed" and s, "failed")
        assert status["failure"].startswith(
            "the watcher's worker stopped on an unexpected error: OverflowError"
        )
        wait_for(lambda: warnings, "the warning")  # said just after the state is set
        assert len(warnings) == 1
        assert "Change notices have stopped" in warnings[0]
        assert "restart the server" in warnings[0]
    finally:
        watcher.stop()
    assert watcher.status()["state"] == "stopped"


def test_the_work_left_for_after_an_answer_starts_again_after_its_thread_ended() -> None:
    later = Later()
    ran: list[str] = []

    def ends() -> None:
        raise Ended("a step let it through")

    try:
        later.defer("s", ends)
        later.release()
        wait_for(lambda: later.status()["state"] == "failed", "the thread to end")
        status: dict[str, Any] = later.status()
        assert status["failure"] == (
            "the work left for after an answer stopped on an unexpected error: "
            'Ended: "a step let it through"'
        )
        # The next job runs, on a thread started again, and a settle does not stall.
        later.defer("s", lambda: ran.append("after"))
        assert later.settle("s")
        assert ran == ["after"]
        status = later.status()
        assert (status["restarts"], status["failures"]) == (1, 1)
        assert status["state"] == "running"
    finally:
        later.close()


def test_reading_ahead_says_why_its_thread_ended_and_starts_again(workspace: Path) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    core = Readkeeper(roots=[str(workspace)])
    core.ahead.busy = lambda: False  # the shared test machine's load must not decide
    jobs: list[str] = []

    def job(interrupted: object) -> None:
        jobs.append("ran")
        if len(jobs) == 1:
            raise Ended("the first trigger's job")

    core.ahead.jobs.append(job)
    try:
        calls.call(core, "readkeeper/read", {"file_path": "a.py"})
        wait_for_ahead(lambda: core.ahead.status()["state"] == "failed", "the thread to end")
        assert (
            "reading ahead stopped on an unexpected error: Ended" in core.ahead.status()["failure"]
        )
        stats = calls.call(core, "readkeeper/stats", {})
        assert stats["ahead"]["state"] in ("failed", "running")
        calls.call(core, "readkeeper/read", {"file_path": "a.py", "force": True})
        wait_for(lambda: len(jobs) >= 2, "a trigger on a thread started again")
        status = core.ahead.status()
        assert (status["restarts"], status["failures"], status["state"]) == (1, 1, "running")
    finally:
        core.close()


def test_a_glob_build_that_failed_is_counted_and_said() -> None:
    builds = Builds()

    def build(stop: object) -> None:
        raise OSError("the listing could not be read")

    assert builds.start(b"/root", build)
    builds.wait()
    status = builds.status()
    assert (status["state"], status["failures"], status["started"]) == ("idle", 1, 1)
    assert status["failure"] == (
        "a glob's listing built after its answer stopped on an unexpected error: "
        'OSError: "the listing could not be read"'
    )
    builds.close()


def test_stats_show_every_background_worker(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)])
    try:
        stats = calls.call(core, "readkeeper/stats", {})
        assert set(stats["workers"]) == {"later", "glob_builds"}
        assert stats["workers"]["later"]["state"] == "idle"
        assert stats["ahead"]["state"] in ("idle", "running")
    finally:
        core.close()
