"""progress.py: when a call's steps are sent (begun once past the threshold, reported,
ended once), with the threshold at 0 or far beyond the work, never by the clock."""

from __future__ import annotations

import threading
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest

from readkeeper import calls, progress
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError


def recorder() -> tuple[list[tuple[str, str, int | None]], progress.Send]:
    sent: list[tuple[str, str, int | None]] = []
    return sent, lambda stage, message, percentage: sent.append((stage, message, percentage))


def test_at_zero_the_first_step_begins_the_rest_report_and_the_end_ends() -> None:
    sent, send = recorder()
    with progress.reporting(send, "readkeeper: searching", 0):
        progress.step("one", 1, 4)
        progress.step("two", 2, 4)
        progress.step("three")
    assert sent == [
        ("begin", "one", 25),
        ("report", "two", 50),
        ("report", "three", None),
        ("end", "done", None),
    ]


def test_work_within_the_threshold_or_without_steps_sends_nothing() -> None:
    sent, send = recorder()
    with progress.reporting(send, "readkeeper: searching", 3_600_000):
        progress.step("one")
    with progress.reporting(send, "readkeeper: reading", 0):
        pass
    progress.step("outside any call")  # nobody asked: nothing, and no error
    assert sent == []


def test_no_sender_means_no_progress_and_the_work_still_runs() -> None:
    with progress.reporting(None, "readkeeper: listing", 0) as reporter:
        progress.step("one")
    assert reporter is None
    assert progress.within(None, "t", 0, lambda a, b: a + b, 2, 3) == 5


def test_steps_from_another_thread_of_the_call_are_reported_once_each() -> None:
    sent, send = recorder()
    with progress.reporting(send, "readkeeper: gathering context", 0) as reporter:
        assert reporter is not None
        workers = [threading.Thread(target=reporter.step, args=(f"part {n}",)) for n in range(8)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    stages = [stage for stage, _, _ in sent]
    assert stages == ["begin"] + ["report"] * 7 + ["end"]


def test_the_timer_begins_a_call_without_steps_once_and_it_ends_once() -> None:
    sent, send = recorder()
    with progress.reporting(send, "readkeeper: reading", 3_600_000) as reporter:
        assert reporter is not None
        reporter.late()  # what the timer calls when the threshold passes
        reporter.late()
        progress.step("after")
    reporter.end()  # a second end: nothing more
    assert sent == [
        ("begin", "readkeeper: reading", None),
        ("report", "after", None),
        ("end", "done", None),
    ]


HOSTILE = "f\n2026-01-01 00:00:00,000 ERROR readkeeper: FORGED\r\x1b[2K\u202eX.py"


def _printable_and_bounded(sent: list[tuple[str, str, int | None]]) -> None:
    for _, message, _ in sent:
        assert message.isprintable(), message
        assert len(message) <= progress.MAX_MESSAGE_CHARS


def test_a_step_is_one_printable_line_of_bounded_length() -> None:
    """Round 44: a name's line breaks, ESC and bidi marks went out raw; a pattern of
    16,000 characters made a message of 16,020."""
    sent, send = recorder()
    with progress.reporting(send, "readkeeper: searching", 0):
        progress.step(f"outlining {HOSTILE}")
        progress.step("searching . for " + "b" * 16_000)
    _printable_and_bounded(sent)
    assert "\\u000a2026-01-01" in sent[0][1]


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("read", {"file_path": HOSTILE}),
        ("grep", {"pattern": "(a|" + "b" * 16_000 + ")"}),
        ("grep", {"pattern": HOSTILE}),
        ("glob", {"pattern": HOSTILE + "*"}),
        ("readMany", {"file_paths": [HOSTILE]}),
    ],
    ids=["read", "grep-long", "grep-hostile", "glob", "readMany"],
)
def test_every_call_s_steps_quote_what_it_was_given(
    workspace: Path, method: str, params: dict[str, Any]
) -> None:
    (workspace / HOSTILE).write_text("def f():\n    return 1\n" * 3000)
    core = Readkeeper(roots=[str(workspace)])
    sent, send = recorder()
    try:
        with progress.reporting(send, "readkeeper: working", 0), suppress(ReadkeeperError):
            calls.call(core, method, params)
    finally:
        core.close()
    assert sent
    _printable_and_bounded(sent)
    if "FORGED" in str(params):  # the name quoted whole, its breaks escaped in it
        assert any(
            "\\n2026-01-01 00:00:00,000 ERROR readkeeper: FORGED\\r" in m for _, m, _ in sent
        )
