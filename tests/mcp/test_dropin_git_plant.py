"""The filesystem drop-in (`readkeeper mcp --tools filesystem`) end to end: no order of
write_file, create_directory, move_file and edit_file plants a git repository whose
config names a command (the attacker's embedded bare repository), judged by real git."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from gitplant import HEAD, ORDERS, git_dir_of

from mcp_helpers import dropin_client, error_kind, ok

TOOLS = {"write": "write_file", "mkdir": "create_directory", "move": "move_file"}


@pytest.mark.parametrize("order", sorted(ORDERS))
async def test_no_order_of_dropin_calls_plants_a_repository(workspace: Path, order: str) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    refused = []
    async with dropin_client(workspace) as client:
        for kind, *names in ORDERS[order]:
            if kind == "write":
                arguments = {"path": names[0], "content": names[1]}
            elif kind == "mkdir":
                arguments = {"path": names[0]}
            else:
                arguments = {"source": names[0], "destination": names[1]}
            result = await client.call_tool(TOOLS[kind], arguments)
            if result.is_error:
                assert error_kind(result) == "unsupported"
                refused.append(names[-1])
    assert refused
    folder = workspace / ("s" if (workspace / "s").is_dir() else "prep")
    assert git_dir_of(folder) is None, sorted(os.listdir(folder))
    assert not (folder / "PWNED").exists()


async def test_an_edit_never_turns_a_file_into_head(workspace: Path) -> None:
    # A HEAD-like name already in the tree (the user's) cannot be made valid by edits.
    folder = workspace / "s"
    (folder / "objects").mkdir(parents=True)
    (folder / "refs").mkdir()
    (folder / "Head").write_text("notes\n")
    async with dropin_client(workspace) as client:
        await ok(client, "read_text_file", path="s/Head")
        result = await client.call_tool(
            "edit_file", {"path": "s/Head", "edits": [{"oldText": "notes", "newText": HEAD}]}
        )
        assert error_kind(result) == "unsupported"
    assert (folder / "Head").read_text() == "notes\n"
    assert git_dir_of(folder) is None
