"""An answer about changed files says when the watcher cannot hear them all.

`readkeeper/changes` (MCP's `changes`, the change notices among attachments) lists
what the watcher heard; with no watcher watching, `{"changes": []}` would read as
"nothing changed" where readkeeper cannot know. So the answer carries a `note` saying
why, in the words `stats` uses, and what to do (re-read, a forced read); a polled root
is said to be late; a watcher watching every root gives no note (watch/blind.py).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from raw_lsp import RawServer

from helpers import wait_until
from mcp_helpers import mcp_env, private_runtime_dir, stdio_client, text_of
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.settings import Settings
from readkeeper.watch import blind
from readkeeper.watch.watcher import WatchCallbacks, Watcher

RE_READ = "a forced read shows each as it is now"


def changes(core: Readkeeper) -> dict[str, Any]:
    result: dict[str, Any] = calls.call(core, "changes", {})
    return result


def test_a_failed_watcher_is_named_with_why() -> None:
    """Failed for real: a poll interval past the platform's time_t ends the worker's
    wait (as tests/state/test_worker_health.py does it)."""
    callbacks = WatchCallbacks(changed=lambda batch: None, read_files=dict, warn=lambda w: None)
    root = Path.cwd()
    watcher = Watcher([str(root)], Settings(watch_poll_interval_ms=10**13), callbacks)
    watcher.start()
    try:
        status = wait_until(lambda: (s := watcher.status())["state"] == "failed" and s, "failed")
        said = blind.note(status, 1000)
        assert said is not None
        assert "readkeeper's watcher failed (the watcher's worker stopped" in said
        assert "OverflowError" in said
        assert "an empty list does not mean nothing changed" in said
        assert RE_READ in said
    finally:
        watcher.stop()
    stopped = blind.note(watcher.status(), 1000)
    assert stopped is not None
    assert stopped.startswith("readkeeper's watcher was stopped")


def test_no_watcher_is_said(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"watch": False})
    core.start_watching()
    answer = changes(core)
    assert answer["changes"] == []
    assert answer["note"].startswith("readkeeper is not watching files (the `watch` setting")
    assert RE_READ in answer["note"]


def test_a_watcher_watching_every_root_gives_no_note(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"watcher": "inotify"})
    core.start_watching()
    try:
        wait_until(lambda: core.watcher_status()["state"] == "watching", "watching")
        assert changes(core) == {"changes": []}
    finally:
        core.close()


def test_a_polled_root_is_said_to_be_late(workspace: Path) -> None:
    settings = {"watch_force_polling": True, "watch_poll_interval_ms": 500}
    core = Readkeeper(roots=[str(workspace)], client_settings=settings)
    core.start_watching()
    try:
        wait_until(lambda: core.watcher_status()["state"] == "polling", "polling")
        note = changes(core)["note"]
        assert f"changes under {workspace} (" in note
        assert "by looking every 500 ms, so one may be listed late" in note
    finally:
        core.close()


def test_a_state_not_known_here_is_never_taken_for_watching() -> None:
    said = blind.note({"state": "something new"}, 1000)
    assert said is not None
    assert "'something new'" in said


def test_the_attachments_change_notices_carry_the_note(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"watch": False})
    result = calls.call(core, "attachments", {"types": ["changes"]})
    items = [a for a in result["attachments"] if a["type"] == "changes"]
    assert len(items) == 1, result
    assert "readkeeper is not watching files" in items[0]["content"]
    assert RE_READ in items[0]["content"]


def lsp_changes(workspace: Path, options: dict[str, Any]) -> dict[str, Any]:
    server = RawServer()
    try:
        server.initialize(workspace, initializationOptions=options)
        if options.get("watch", True):
            wait_until(
                lambda: (
                    server.request("s", "readkeeper/stats", {})["result"]["watcher"]["state"]
                    == "watching"
                ),
                "the watcher to watch",
            )
        answer: dict[str, Any] = server.request("c", "readkeeper/changes", {})
        return answer
    finally:
        server.close()


def test_lsp_says_the_watcher_is_off(workspace: Path) -> None:
    answer = lsp_changes(workspace, {"watch": False})
    assert answer["result"]["changes"] == []
    assert "readkeeper is not watching files" in answer["result"]["note"]


def test_lsp_healthy_has_no_note(workspace: Path) -> None:
    answer = lsp_changes(workspace, {"watcher": "inotify"})
    assert answer["result"] == {"changes": []}


async def mcp_changes(workspace: Path, **env: str) -> tuple[str, dict[str, Any]]:
    args = ["--standalone", "--root", str(workspace)]
    async with stdio_client(args, mcp_env(private_runtime_dir(), **env)) as client:
        if env.get("READKEEPER_WATCH") != "0":
            for _ in range(600):
                stats = json.loads(text_of(await client.call_tool("stats", {})))
                if stats["watcher"]["state"] == "watching":
                    break
                await asyncio.sleep(0.05)
        result = await client.call_tool("changes", {})
        assert not result.is_error
        assert result.structured_content is not None
        return text_of(result), result.structured_content


def test_mcp_says_the_watcher_is_off(workspace: Path) -> None:
    text, structured = asyncio.run(mcp_changes(workspace, READKEEPER_WATCH="0"))
    assert "readkeeper is not watching files" in structured["note"]
    assert text.startswith("note: readkeeper is not watching files")


def test_mcp_healthy_has_no_note(workspace: Path) -> None:
    text, structured = asyncio.run(mcp_changes(workspace, READKEEPER_WATCHER="inotify"))
    assert "note" not in structured
    assert text == "No changes to the files you read."
