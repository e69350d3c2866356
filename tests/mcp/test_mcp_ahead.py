"""Reads made ahead (read/ahead.py) in a real `readkeeper mcp`: `stats` says whether
the worker is on and what it did, counts only, and the setting turns it off. Whether it
runs at a given moment depends on the machine's load, so the making itself is tested
in-process (tests/read/test_ahead.py)."""

from __future__ import annotations

from pathlib import Path

from mcp_helpers import call, mcp_env, private_runtime_dir, stdio_client


async def test_stats_say_whether_reading_ahead_is_on_and_show_no_path(workspace: Path) -> None:
    (workspace / "first.py").write_text("x = 1\n")
    (workspace / "second.py").write_text("y = 2\n")
    runtime = private_runtime_dir()
    for env, on in (
        (mcp_env(runtime), True),
        (mcp_env(runtime, READKEEPER_READ_AHEAD="false"), False),
    ):
        async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
            read = await call(client, "read", file_path=str(workspace / "first.py"))
            assert read["type"] == "text"
            stats = await call(client, "stats")
            shown = stats["ahead"]
            assert shown["on"] is on
            assert isinstance(shown["busy"], bool)
            counts = {"made", "skipped", "stopped_by_call", "triggers", "on", "busy"}
            assert set(shown) == counts | {"state", "failures"}  # its thread's health
            assert shown["failures"] == 0
            assert shown["state"] in ("idle", "running")
            if not on:
                assert shown["made"] == shown["triggers"] == 0
