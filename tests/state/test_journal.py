"""The journal behind the picture of the session: each call (what, when, at what cost,
what readkeeper saved), kept in memory up to a cap, the oldest dropped and counted."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.picture import page
from readkeeper.protocol import (
    AttachmentsParams,
    EditParams,
    ReadParams,
    StatsParams,
    unstructure,
)
from readkeeper.protocol.search import GrepParams
from readkeeper.state.journal import Event, Journal


def read(core: Readkeeper, path: str, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = unstructure(core.read(ReadParams(file_path=path, **params)))
    return result


def history(core: Readkeeper, session: str | None = None) -> dict[str, Any]:
    """The journal, of `session`'s calls only when one is named."""
    result = core.stats_for(StatsParams(history=True))["history"]
    if session is not None:
        result["events"] = [e for e in result["events"] if e["session"] == session]
    return result


def module(lines: int = 300) -> str:
    return "".join(
        f"def handler_{i}(request):\n    return respond(request, {i})\n" for i in range(lines // 2)
    )


def test_each_read_is_an_event_with_its_answer_type_cost_and_saving(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "app.py"
    path.write_text(module())
    first = read(core, "app.py")
    read(core, "app.py")  # the stub
    path.write_text(path.read_text().replace("request, 7)", "request, 70)"))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    delta = read(core, "app.py")
    assert delta["type"] == "file_changed"

    events = history(core)["events"]
    assert [e["kind"] for e in events] == ["text", "file_unchanged", "file_changed"]
    assert {e["path"] for e in events} == {os.path.realpath(path)}
    text, stub, diff = events
    assert text["tokens"] == first["file"]["tokens"]
    assert text["saved"] == 0
    assert stub["tokens"] == 0
    assert stub["saved"] > 0
    assert diff["tokens"] == delta["file"]["tokens"]
    assert diff["saved"] == first["file"]["tokens"] - delta["file"]["tokens"]
    assert all(e["session"] == "" and e["at_ms"] > 0 and e["ms"] >= 0 for e in events)
    assert [e["at_ms"] for e in events] == sorted(e["at_ms"] for e in events)
    # The counters say the same of the diff.
    total = core.stats_for(StatsParams())["total"]
    assert total["tokens_saved_by_diffs"] == diff["saved"]


def test_refusals_searches_and_edits_are_events_too(core: Readkeeper, workspace: Path) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    with contextlib.suppress(ReadkeeperError):
        read(core, "missing.py", session="s")
    core.grep(GrepParams(pattern="x", session="s"))
    read(core, "a.py", session="s")
    core.edit(EditParams(file_path="a.py", old_string="x = 1", new_string="x = 2", session="s"))
    events = history(core, "s")["events"]
    assert [(e["kind"], e.get("error")) for e in events] == [
        ("read", "not_found"),
        ("grep", None),
        ("text", None),
        ("edit", None),
    ]
    assert events[0]["path"] == str(workspace / "missing.py")
    assert events[1]["tokens"] > 0  # the matching line shown
    assert events[3]["path"] == os.path.realpath(workspace / "a.py")


def test_history_is_sent_only_when_asked_with_every_session(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    read(core, "a.py", session="one")
    read(core, "a.py", session="two")
    assert "history" not in core.stats_for(StatsParams())
    asked = core.stats_for(StatsParams(session="one", history=True))["history"]
    assert [e["session"] for e in asked["events"]] == ["one", "two"]


def test_the_journal_keeps_the_newest_events_and_counts_the_dropped() -> None:
    journal = Journal(cap=3)
    for n in range(5):
        journal.add(Event(n, "", "text", f"/w/{n}.py", n, 0, 0.0))
    snapshot = journal.snapshot()
    assert [e["path"] for e in snapshot["events"]] == ["/w/2.py", "/w/3.py", "/w/4.py"]
    assert snapshot["cap"] == 3
    assert snapshot["dropped"] == 2


def test_a_call_that_raises_is_journaled_with_its_kind() -> None:
    journal = Journal()
    try:
        with journal.call("s", "glob", "/w"):
            raise ReadkeeperError("bad_params", "no")
    except ReadkeeperError:
        pass
    (event,) = journal.snapshot()["events"]
    assert event["kind"] == "glob"
    assert event["error"] == "bad_params"


def test_a_mentions_read_is_marked_within_attachments_and_counted_once(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "a.py").write_text("x = 1\n" * 10)
    fitted = core.attachments(AttachmentsParams(mentions=["a.py"], types=["file"]))
    events = history(core)["events"]
    (read_event,) = [e for e in events if e["kind"] == "text"]
    (outer,) = [e for e in events if e["kind"] == "attachments"]
    assert read_event["within"] == "attachments"
    assert "within" not in outer
    assert outer["tokens"] == fitted["used_tokens"]
    html = page({"history": history(core)})
    assert f"{outer['tokens']:,} tokens sent to the agent" in html
