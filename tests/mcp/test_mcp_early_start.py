"""`readkeeper mcp --root` makes its core when the handshake ends, not at the first tool
call (mcp/early_start.py), and that changes no answer: a file written after the start
and before the first glob is listed, newest first, with every other file git lists.
Without `--root` (the roots may come from the client) the first call makes it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from glob_trees import git_listed, make

from mcp_helpers import call, mcp_env, private_runtime_dir, stdio_client

BASE_NS = 1_700_000_000 * 10**9


def _tree(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("*.log\n")
    make(root, ["a.py", "sub/b.py", "sub/c.log", "other/d.md"])
    for age, name in enumerate(["a.py", "sub/b.py", "sub/c.log", "other/d.md", ".gitignore"]):
        when = BASE_NS - age * 10**9
        os.utime(root / name, ns=(when, when))


async def test_the_core_made_at_the_handshake_lists_a_file_written_after_it(
    workspace: Path,
) -> None:
    _tree(workspace)
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        await client.list_tools()  # the handshake's `initialized` was sent before this
        make(workspace, ["sub/new.py"])  # after the core's start, before any call
        result = await call(client, "glob", pattern="**/*")
        got = [os.path.relpath(path, workspace) for path in result["paths"]]
        assert got[0] == "sub/new.py"
        assert set(got) == git_listed(workspace)
        assert (await call(client, "stats"))["core_started"] == "handshake"


async def test_with_no_root_the_first_call_makes_the_core(workspace: Path) -> None:
    _tree(workspace)
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--standalone"], env, cwd=workspace) as client:
        await client.list_tools()
        result = await call(client, "glob", pattern="**/*.py")
        assert [os.path.relpath(p, workspace) for p in result["paths"]] == ["a.py", "sub/b.py"]
        assert (await call(client, "stats"))["core_started"] == "first_call"
