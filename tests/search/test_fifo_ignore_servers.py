"""A FIFO named like an ignore file, end to end: the real server over LSP and
`readkeeper mcp` (search/stalls.py). The folder holding one is left out of grep and
glob, named in the note, the rest of the tree answered whole (not partial: a ripgrep
that waited would be killed at its deadline and the answer marked partial); one made
while the server runs is left out too; one at the folder searched is refused at once.
asyncio.wait_for is a hang detector, not a speed check."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from glob_trees import make

from mcp_helpers import call, error_kind, mcp_env, private_runtime_dir, stdio_client, text_of
from watch_helpers import serving

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")

FILES = ["a.py", "src/b.py", "sub/d.py", "later/e.py"]
HANG_S = 60


def _tree(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    make(root, FILES)
    os.mkfifo(root / "sub" / ".gitignore")


def _names(root: Path, paths: list[str]) -> set[str]:
    return {os.path.relpath(p, root) for p in paths}


def _whole_but(answer: dict[str, Any], root: Path, paths: list[str], *out: str) -> None:
    assert answer["partial"] is False, answer
    named = ", ".join(sorted(out))
    assert f"Not searched: {named} (an ignore file there is a FIFO" in answer["note"], answer
    assert _names(root, paths) == {f for f in FILES if f.split("/")[0] not in out}


async def test_lsp_a_fifo_ignore_file_leaves_out_only_its_folder(workspace: Path) -> None:
    _tree(workspace)
    async with serving(workspace) as w:
        assert (await w.ready())["state"] == "watching"

        async def request(method: str, params: dict[str, Any]) -> Any:
            return await asyncio.wait_for(w.request(method, params), HANG_S)

        globbed = await request("readkeeper/glob", {"pattern": "**/*.py"})
        _whole_but(globbed, workspace, globbed["paths"], "sub")
        os.mkfifo(workspace / "later" / ".ignore")  # while the server runs
        found = await request("readkeeper/grep", {"pattern": "x", "output": "files"})
        _whole_but(found, workspace, found["files"], "sub", "later")
        found = await request("readkeeper/grep", {"pattern": "x"})
        _whole_but(found, workspace, [m["file_path"] for m in found["matches"]], "sub", "later")
        refused = await asyncio.wait_for(
            w.session.error("readkeeper/grep", {"pattern": "x", "path": "sub"}), HANG_S
        )
        assert refused.data["kind"] == "unsupported"
        assert "Make it a regular file" in refused.message


async def test_mcp_a_fifo_ignore_file_leaves_out_only_its_folder(workspace: Path) -> None:
    _tree(workspace)
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        globbed: dict[str, Any] = {}
        for _ in range(100):  # the watcher's setup, in the background
            globbed = await asyncio.wait_for(call(client, "glob", pattern="**/*.py"), HANG_S)
            if "Not searched" in globbed.get("note", ""):
                break
            await asyncio.sleep(0.1)
        _whole_but(globbed, workspace, globbed["paths"], "sub")
        os.mkfifo(workspace / "later" / ".rgignore")
        found = await asyncio.wait_for(call(client, "grep", pattern="x", output="files"), HANG_S)
        _whole_but(found, workspace, found["files"], "sub", "later")
        refused = await asyncio.wait_for(
            client.call_tool("glob", {"pattern": "*", "path": "sub"}), HANG_S
        )
        assert error_kind(refused) == "unsupported"
        assert "Make it a regular file" in text_of(refused)


def test_cli_a_fifo_ignore_file_of_the_folder_searched_is_refused_at_once(
    workspace: Path,
) -> None:
    """The CLI has no watcher: the folders at and above the one searched are still
    looked at (a few lstats), so a FIFO there is named at once instead of costing the
    deadline. (Beneath, the deadline is the CLI's bound: SECURITY.md.)"""
    _tree(workspace)
    for args in (["grep", "x"], ["glob", "**/*.py"]):
        done = subprocess.run(
            [sys.executable, "-m", "readkeeper", *args],
            cwd=workspace / "sub",
            capture_output=True,
            text=True,
            timeout=HANG_S,
        )
        assert done.returncode == 2, done
        assert "unsupported" in done.stderr
        assert str(workspace / "sub" / ".gitignore") in done.stderr
