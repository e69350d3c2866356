"""Work a call leaves for after its answer (state/later.py): a search's proof runs after
the search answers, and every later look at the session's read-state waits for it. The
worker is held here by a job of the test's own (another session's, so the search itself
does not wait for it), queued first, so what runs between the answer and the proof is
chosen, not raced."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import pytest

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.state.later import Later, answered

WAIT_S = 30.0  # a bound on waits that end by themselves long before: never reached


@contextmanager
def held(later: Later, session: str = "") -> Iterator[threading.Event]:
    """The worker busy with a job of `session` until the block ends (or the event is set)."""
    release, running = threading.Event(), threading.Event()
    later.defer(session, lambda: (running.set(), release.wait(WAIT_S)))
    later.release()
    assert running.wait(WAIT_S)
    try:
        yield release
    finally:
        release.set()


def wait_for_waiter(later: Later, before: int) -> None:
    """Until a settle has begun waiting (its count moves past `before`)."""
    deadline = time.monotonic() + WAIT_S
    while later.counts["waits"] == before:
        assert time.monotonic() < deadline, "nothing waited"
        time.sleep(0.001)


def test_settle_waits_for_its_session_only() -> None:
    later = Later()
    done: list[str] = []
    with held(later, "a") as release:
        later.defer("a", lambda: done.append("a"))
        assert later.settle("b")  # another session's work never holds this one
        assert done == []
        before = later.counts["waits"]
        waiter = threading.Thread(target=later.settle, args=("a",))
        waiter.start()
        wait_for_waiter(later, before)
        assert waiter.is_alive()
        assert done == []
        release.set()
        waiter.join(WAIT_S)
    assert done == ["a"]
    later.close()


def test_work_waits_for_the_answer_or_a_settle() -> None:
    later = Later()
    ran = threading.Event()
    later.defer("s", ran.set)
    assert not ran.wait(0.05)  # held: the call's answer is not out yet
    answered()  # a front end wrote it
    assert ran.wait(WAIT_S)
    ran.clear()
    later.defer("s", ran.set)
    assert later.settle("s")  # a look at the session's state runs it without an answer
    assert ran.is_set()
    later.close()


def test_work_runs_in_order_in_the_callers_context_and_a_failure_stops_nothing() -> None:
    later = Later()
    where: ContextVar[str] = ContextVar("where", default="none")
    seen: list[str] = []
    token = where.set("the call's")
    later.defer("s", lambda: seen.append(where.get()))
    later.defer("s", lambda: 1 / 0)
    later.defer("s", lambda: seen.append("after the failure"))
    where.reset(token)
    assert later.settle("s")
    assert seen == ["the call's", "after the failure"]
    assert later.counts["failed"] == 1
    later.close()


def test_a_closed_queue_drops_what_waits_and_runs_new_work_at_once() -> None:
    later = Later()
    ran: list[int] = []
    with held(later):
        later.defer("", lambda: ran.append(1))
        closing = threading.Thread(target=later.close)
        closing.start()
    closing.join(WAIT_S)
    assert ran == []  # queued behind the held job: dropped with the core
    later.defer("", lambda: ran.append(2))
    assert ran == [2]
    assert later.settle()


def _grep(core: Readkeeper, pattern: str) -> dict[str, Any]:
    result: dict[str, Any] = calls.call(core, "grep", {"pattern": pattern})
    return result


def _edit(core: Readkeeper, path: Path, old: str, new: str) -> dict[str, Any]:
    result: dict[str, Any] = calls.call(
        core, "edit", {"file_path": str(path), "old_string": old, "new_string": new}
    )
    return result


def test_an_edit_sent_before_the_proof_ends_waits_for_it(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "m.py"
    path.write_text("needle = 1\nother = 2\n")
    later = core.read_states.later
    with held(later, "another") as release:
        assert _grep(core, "needle")["num_matches"] == 1  # answered, its proof queued
        before = later.counts["waits"]
        edited: list[dict[str, Any]] = []
        editing = threading.Thread(
            target=lambda: edited.append(_edit(core, path, "needle = 1", "needle = 3"))
        )
        editing.start()
        wait_for_waiter(later, before)
        assert editing.is_alive()
        assert not edited  # not refused for want of a read
        release.set()
        editing.join(WAIT_S)
    assert len(edited) == 1
    assert edited[0]["replacements"] == 1
    assert path.read_text() == "needle = 3\nother = 2\n"


def test_a_change_landing_between_the_answer_and_the_proof_is_never_edited_blind(
    core: Readkeeper, workspace: Path
) -> None:
    """The window the proof's move opens: the lines shown change before the proof looks,
    so nothing is recorded and the edit needs a read (as when the change lands between
    ripgrep's look and the proof); a change elsewhere is recorded as the version proved,
    and the edit keeps it."""
    shown = workspace / "shown.py"
    shown.write_text("needle = 1\n")
    elsewhere = workspace / "elsewhere.py"
    elsewhere.write_text("header\nhaystack = 1\n")
    with held(core.read_states.later, "another"):
        assert _grep(core, "needle|haystack")["num_matches"] == 2
        shown.write_text("needle = 2\n")
        elsewhere.write_text("new header\nhaystack = 1\n")
    with pytest.raises(ReadkeeperError) as caught:
        _edit(core, shown, "needle = 2", "needle = 3")
    assert caught.value.kind == "not_read"
    assert shown.read_text() == "needle = 2\n"
    _edit(core, elsewhere, "haystack = 1", "haystack = 2")
    assert elsewhere.read_text() == "new header\nhaystack = 2\n"
