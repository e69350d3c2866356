"""A read tried on the event loop and handed to a worker when it turned out costly (an
outline, quick reads: mcp/quick.py, read/loop_guard.py) is one call in the session's
history: the attempt left a phantom `internal` error event beside the real read (attack
round 26: `stats` history showed `"error": "internal"` for a read that was answered,
which the error counters did not count)."""

from __future__ import annotations

import shutil
from pathlib import Path

from mcp_helpers import call, core_client, ok


async def test_a_read_handed_to_a_worker_is_one_event_without_an_error(workspace: Path) -> None:
    shutil.copy(shutil.__file__, workspace / "big.py")  # an outline: costly, off the loop
    (workspace / "small.txt").write_text("one\ntwo\n")
    async with core_client(workspace) as client:
        await ok(client, "read", file_path="small.txt")  # quick, on the loop
        assert "outline of" in await ok(client, "read", file_path="big.py")
        stats = await call(client, "stats", history=True)
    events = stats["history"]["events"]
    assert [(e["kind"], Path(e["path"]).name) for e in events] == [
        ("text", "small.txt"),
        ("outline", "big.py"),
    ], events
    assert not any("error" in e for e in events), events
    assert stats["total"]["errors"] == {}
