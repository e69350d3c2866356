"""A search's snapshots (search/seen.py) have a budget of their own in the store
(state/snapshots.py): a broad grep never evicts the snapshot of a file the agent read,
so an edit of that file after someone else's disjoint change is still merged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.search import grep
from readkeeper.state.snapshots import Snapshots

SEARCHED = 2000


def test_a_broad_grep_never_evicts_a_read_s_snapshot(core: Readkeeper, workspace: Path) -> None:
    target = workspace / "target.py"
    target.write_text("".join(f"line {n}\n" for n in range(1, 21)))
    calls.call(core, "read", {"file_path": str(target)})
    (workspace / "many").mkdir()
    # Room for 2,000 lines each with its file's name as sent (grep_pages.py).
    core.configure({"max_tokens": 200_000})
    for n in range(SEARCHED):
        (workspace / "many" / f"f{n}.txt").write_text(f"needle {n}\n")
    found: dict[str, Any] = calls.call(
        core, "grep", {"pattern": "needle", "max_matches": grep.MAX_MATCHES}
    )
    assert len(found["matches"]) == SEARCHED  # every file's line shown: every one recorded
    core.read_states.later.settle()  # (recorded after the answer: state/later.py)
    assert len(core.snapshots) > Snapshots().max_entries  # (more than the reads' budget)
    # Someone else changes line 1; the agent edits line 15, which it read.
    target.write_text(target.read_text().replace("line 1\n", "line one\n", 1))
    edited: dict[str, Any] = calls.call(
        core,
        "edit",
        {"file_path": str(target), "old_string": "line 15\n", "new_string": "line fifteen\n"},
    )
    assert edited["merged"] is True, edited
    assert target.read_text().startswith("line one\n")
    assert "line fifteen\n" in target.read_text()


def test_a_search_s_snapshots_evict_only_each_other() -> None:
    store = Snapshots(max_entries=2, searched_entries=2)
    store.put("/read", "d", "read text")
    for n in range(10):
        store.put(f"/searched{n}", "d", "searched text", searched=True)
    assert store.get("/read", "d") == "read text"
    assert store.get("/searched9", "d") == "searched text"
    assert store.get("/searched0", "d") is None
    # A read of what a search kept moves it to the reads' budget.
    store.put("/searched9", "d", "searched text")
    for n in range(10, 20):
        store.put(f"/searched{n}", "d", "searched text", searched=True)
    assert store.get("/searched9", "d") == "searched text"
    assert store.get("/read", "d") == "read text"
