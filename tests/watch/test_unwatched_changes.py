"""A file a session read that no live watch covers is checked when `changes` is asked.

The watcher skips what the ignore rules skip (a gitignored folder), and Watchman skips
what the repository's own `.watchmanconfig` tells it to (`ignore_dirs`): a change there
makes no event. `readkeeper/changes` (MCP `changes`, the change notices among
attachments) never rests on a watch that does not cover the file: each such file is
looked at when the answer is made (its stat, then its content), so "No changes" is
never said of a file nobody watched (watch/unwatched.py).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from mcp_helpers import mcp_env, private_runtime_dir, stdio_client, text_of
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.watch import unwatched
from watch_helpers import Watched, make, serving, until, watchman_missing
from watchman_service import PrivateWatchman

INOTIFY = {"watcher": "inotify"}


async def watching(w: Watched, backend: str) -> None:
    async def now() -> bool:
        watcher = await w.watcher()
        return (watcher.get("backend"), watcher["state"]) == (backend, "watching")

    await until(now, f"the watcher to watch with {backend}")


async def test_lsp_a_read_file_in_a_gitignored_folder_that_changed_is_reported(
    workspace: Path,
) -> None:
    make(workspace / ".gitignore", "build/\n")
    config = make(workspace / "build" / "config.txt", "debug=false\n")
    async with serving(workspace, INOTIFY) as w:
        await watching(w, "inotify")
        await w.read("build/config.txt")
        assert (await w.request("readkeeper/changes", {})) == {"changes": []}
        config.write_text("debug=true\n")
        await w.sentinel()  # every event is looked at: none came of build/
        assert w.pushed("build/config.txt") == []
        [change] = await w.changes()
        assert (change["file_path"], change["kind"]) == (str(config), "modified")
        assert "+debug=true" in change["diff"]
        assert await w.changes() == []  # reported once


async def test_lsp_a_folder_made_under_a_skipped_one_after_the_watch_began(
    workspace: Path,
) -> None:
    make(workspace / ".gitignore", "out/\n")
    (workspace / "out").mkdir()
    async with serving(workspace, INOTIFY) as w:
        await watching(w, "inotify")
        late = make(workspace / "out" / "late" / "x.txt", "1\n")
        await w.read("out/late/x.txt")
        late.write_text("2\n")
        [change] = await w.changes()
        assert change["file_path"] == str(late)
        assert "+2" in change["diff"]


async def test_lsp_a_gitignored_file_in_a_watched_folder_is_reported(workspace: Path) -> None:
    make(workspace / ".gitignore", "*.log\n")
    log = make(workspace / "run.log", "ok\n")
    async with serving(workspace, INOTIFY) as w:
        await watching(w, "inotify")
        await w.read("run.log")
        log.write_text("failed\n")
        [change] = await w.changes()
        assert change["file_path"] == str(log)
        assert "+failed" in change["diff"]


@pytest.mark.ci_required
async def test_lsp_watchman_ignore_dirs_of_the_repository_does_not_blind_changes(
    workspace: Path,
) -> None:
    why = watchman_missing()
    if why is not None:
        pytest.skip(why)
    make(workspace / ".watchmanconfig", json.dumps({"ignore_dirs": ["src"]}))
    main = make(workspace / "src" / "main.py", "SAFE = True\n")
    with PrivateWatchman() as service:
        async with serving(workspace, {"watcher": "watchman"}, env=service.env) as w:
            await watching(w, "watchman")
            await w.read("src/main.py")
            main.write_text("SAFE = False\n")
            await w.sentinel()  # Watchman told everything before: nothing of src/
            assert w.pushed("src/main.py") == []
            [change] = await w.changes()
            assert (change["file_path"], change["kind"]) == (str(main), "modified")
            assert "+SAFE = False" in change["diff"]


async def mcp_changed(workspace: Path, name: str, after: str, tool: str) -> str:
    """Over MCP: read `name` (no change yet: "No changes"), rewrite it, ask `tool`."""
    args = ["--standalone", "--root", str(workspace)]
    env = mcp_env(private_runtime_dir(), READKEEPER_WATCHER="inotify")
    async with stdio_client(args, env) as client:
        for _ in range(600):
            stats = json.loads(text_of(await client.call_tool("stats", {})))
            if stats["watcher"]["state"] == "watching":
                break
            await asyncio.sleep(0.05)
        path = workspace / name
        assert not (await client.call_tool("read", {"file_path": str(path)})).is_error
        unchanged = text_of(await client.call_tool("changes", {}))
        assert unchanged == "No changes to the files you read."
        path.write_text(after)
        arguments: dict[str, Any] = {"types": ["changes"]} if tool == "attachments" else {}
        result = await client.call_tool(tool, arguments)
        assert not result.is_error
        return text_of(result)


@pytest.mark.parametrize("tool", ["changes", "attachments"])
def test_mcp_a_read_file_in_a_gitignored_folder_that_changed_is_reported(
    workspace: Path, tool: str
) -> None:
    make(workspace / ".gitignore", "build/\n")
    make(workspace / "build" / "config.txt", "debug=false\n")
    text = asyncio.run(mcp_changed(workspace, "build/config.txt", "debug=true\n", tool))
    assert "No changes" not in text
    assert str(workspace / "build" / "config.txt") in text
    assert "+debug=true" in text


def test_the_files_looked_at_are_bounded_and_the_rest_are_said(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No watcher covers anything here (`watch` off): every read file is looked at when
    asked, at most MAX_FILES a call, those looked at longest ago first; the rest are
    counted in the note and come in the next call."""
    monkeypatch.setattr(unwatched, "MAX_FILES", 2)
    core = Readkeeper(roots=[str(workspace)], client_settings={"watch": False})
    names = ["a.txt", "b.txt", "c.txt"]
    for name in names:
        make(workspace / name, "1\n")
        calls.call(core, "read", {"file_path": str(workspace / name)})
    assert calls.call(core, "changes", {})["changes"] == []  # two looked at
    for name in names:
        (workspace / name).write_text("2\n")
    first = calls.call(core, "changes", {})
    assert "1 file you read lies where no watch hears changes" in first["note"]
    assert "call changes again" in first["note"]
    second = calls.call(core, "changes", {})
    seen = [c["file_path"] for c in first["changes"] + second["changes"]]
    assert sorted(seen) == [str(workspace / n) for n in names]  # each once
    third = calls.call(core, "changes", {})  # the one stat left over is said again
    assert third["changes"] == []
    assert "1 file you read lies where no watch hears changes and was not" in third["note"]


def test_an_unchanged_stat_is_not_read_again(workspace: Path) -> None:
    """A file whose stat is what it was last looked at is not read again: a rewrite
    that keeps size, mtime, inode and ctime is impossible without a clock set back, so
    the stat is the cheap check and the content the sure one."""
    core = Readkeeper(roots=[str(workspace)], client_settings={"watch": False})
    path = make(workspace / "a.txt", "1\n")
    calls.call(core, "read", {"file_path": str(path)})
    notices = core.notices
    [record] = core.read_states.records("")
    due, left = notices.unwatched.due("", [record])
    assert (len(due), left) == (1, 0)  # never looked at since the read
    assert notices.unwatched.due("", [record]) == ([], 0)
    path.write_text("22\n")
    assert notices.unwatched.due("", [record]) == ([record], 0)


def test_a_file_whose_folder_became_a_link_out_is_told_without_a_read_or_a_cut(
    workspace: Path, tmp_path: Path
) -> None:
    """Round 46 R7: the notice for a read file whose folder was replaced by a link out of
    the workspace called it a race ("changed while readkeeper opened it"), said "Read it
    again to see it" (a read refused `outside_workspace`) and that its diff was cut
    (there was none to cut)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("secret\n")
    (workspace / "dir").mkdir()
    (workspace / "dir" / "f.txt").write_text("one\n")
    core = Readkeeper(roots=[str(workspace)])
    try:
        calls.call(core, "read", {"file_path": "dir/f.txt"})
        (workspace / "dir").rename(workspace / "dir.real")
        (workspace / "dir").symlink_to(outside)
        [change] = calls.call(core, "changes", {})["changes"]
    finally:
        core.close()
    assert change["diff"] == "", change
    assert change["truncated"] is False, change
    assert "Read it again" not in change["note"], change
    assert "while readkeeper opened it" not in change["note"], change
    assert "secret" not in json.dumps(change)
