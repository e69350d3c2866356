"""A read never counts as seeing what it did not show, over MCP (`readkeeper mcp`, core
tools and the filesystem drop-in, each a subprocess): after another program's change, a
read of other lines (a range, head or tail, a symbol, read_many's ranges) says the file
changed outside them, and a whole-file write is refused stale until a whole read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from unseen_work import ORIGINAL, THEIRS

from mcp_helpers import (
    dropin_client,
    error_kind,
    mcp_env,
    ok,
    private_runtime_dir,
    stdio_client,
    text_of,
)

BELIEVED = ORIGINAL.replace("line 3\n", "line three\n")
NOTE = "changed since you read it, outside these lines"

CORE_READS: list[tuple[str, dict[str, Any]]] = [
    ("read", {"file_path": "x.txt", "offset": 90, "limit": 5}),
    ("read", {"file_path": "x.txt", "offset": 1, "limit": 5}),
    ("read", {"file_path": "x.txt", "offset": 1, "limit": 3, "line_format": "anchors"}),
    ("read_many", {"file_paths": ["x.txt"], "offset": 1, "limit": 3}),
]


@pytest.mark.parametrize("merge", [False, True], ids=["no merge", "after a merge"])
@pytest.mark.parametrize(("tool", "arguments"), CORE_READS)
async def test_core_tools_refuse_a_write_over_a_change_a_partial_read_did_not_show(
    workspace: Path, tool: str, arguments: dict[str, Any], merge: bool
) -> None:
    path = workspace / "x.txt"
    path.write_text(ORIGINAL)
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        await ok(client, "read", file_path="x.txt")
        path.write_text(THEIRS)
        if merge:
            await ok(client, "edit", file_path="x.txt", old_string="line 2\n", new_string="2\n")
        said = await ok(client, tool, **arguments)
        if tool == "read":
            assert NOTE in said
        write = await client.call_tool("write", {"file_path": "x.txt", "content": BELIEVED})
        assert error_kind(write) == "stale"
        assert "+line 80 THEIR UNSEEN WORK" in text_of(write)
        assert "THEIR UNSEEN WORK" in path.read_text()
        await ok(client, "read", file_path="x.txt")
        await ok(client, "write", file_path="x.txt", content="mine\n")
        assert path.read_text() == "mine\n"


async def test_core_tools_a_symbol_read_leaves_the_rest_unseen(workspace: Path) -> None:
    source = "def f1():\n    return 1\n\n\n" + "".join(f"v{i} = {i}\n" for i in range(5, 101))
    path = workspace / "m.py"
    path.write_text(source)
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        await ok(client, "read", file_path="m.py")
        path.write_text(source.replace("v80 = 80", "v80 = 'THEIRS'"))
        assert NOTE in await ok(client, "read", file_path="m.py", symbol="f1")
        write = await client.call_tool("write", {"file_path": "m.py", "content": source})
        assert error_kind(write) == "stale"
        assert "THEIRS" in path.read_text()


@pytest.mark.parametrize("merge", [False, True], ids=["no merge", "after a merge"])
@pytest.mark.parametrize("view", [{"tail": 3}, {"head": 3}])
async def test_the_dropin_refuses_a_write_after_head_or_tail(
    workspace: Path, view: dict[str, int], merge: bool
) -> None:
    path = workspace / "x.txt"
    path.write_text(ORIGINAL)
    async with dropin_client(workspace) as client:
        await ok(client, "read_text_file", path="x.txt")
        path.write_text(THEIRS)
        if merge:
            edits = [{"oldText": "line 2\n", "newText": "two\n"}]
            await ok(client, "edit_file", path="x.txt", edits=edits)
        assert NOTE in await ok(client, "read_text_file", path="x.txt", **view)
        write = await client.call_tool("write_file", {"path": "x.txt", "content": BELIEVED})
        assert error_kind(write) == "stale"
        assert "THEIR UNSEEN WORK" in path.read_text()
        await ok(client, "read_text_file", path="x.txt")
        await ok(client, "write_file", path="x.txt", content="mine\n")
        assert path.read_text() == "mine\n"


async def test_the_dropin_ranged_reads_without_a_change_still_license_a_write(
    workspace: Path,
) -> None:
    path = workspace / "x.txt"
    path.write_text(ORIGINAL)
    async with dropin_client(workspace) as client:
        await ok(client, "read_text_file", path="x.txt", tail=3)
        await ok(client, "write_file", path="x.txt", content="mine\n")
        assert path.read_text() == "mine\n"
