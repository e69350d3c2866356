"""Notebook cell edits through `readkeeper mcp`: only a cell the session was shown is
changed, no two cells share a name, and no byte outside the edit is lost."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from notebook_cells import code_cell as code

from mcp_helpers import call, error_kind, mcp_env, private_runtime_dir, stdio_client, text_of


def notebook(cells: list[dict[str, Any]]) -> str:
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, indent=1) + "\n"


def sources(path: Path) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(path.read_text())["cells"]]


async def test_a_cell_edit_needs_the_cell_shown_by_a_read(workspace: Path) -> None:
    path = workspace / "nb.ipynb"
    path.write_text(notebook([code(f"cell_{i} = {i}", f"c{i}") for i in (1, 2, 3)]))
    args, env = ["--root", str(workspace)], mcp_env(private_runtime_dir())
    async with stdio_client(args, env) as client:
        await call(client, "grep", pattern="nbformat_minor", path="nb.ipynb")
        for arguments in (
            {"cell_id": "c1", "new_source": "pwned = 1"},
            {"cell_id": "c2", "edit_mode": "delete"},
        ):
            refused = await client.call_tool("edit", {"file_path": "nb.ipynb", **arguments})
            assert error_kind(refused) == "not_read"
            assert "only through search" in text_of(refused)
        await call(client, "read", file_path="nb.ipynb", offset=1, limit=1)
        refused = await client.call_tool(
            "edit", {"file_path": "nb.ipynb", "cell_id": "c3", "new_source": "unseen = 1"}
        )
        assert error_kind(refused) == "not_read"
        assert '"offset": 3' in text_of(refused)
        assert sources(path) == ["cell_1 = 1", "cell_2 = 2", "cell_3 = 3"]
        await call(client, "edit", file_path="nb.ipynb", cell_id="c1", new_source="one = 1")
        assert sources(path) == ["one = 1", "cell_2 = 2", "cell_3 = 3"]


async def test_two_cells_of_one_name_are_named_apart_and_edited_by_position(
    workspace: Path,
) -> None:
    path = workspace / "dup.ipynb"
    path.write_text(notebook([code("first = 1", "same"), code("second = 2", "same")]))
    args, env = ["--root", str(workspace)], mcp_env(private_runtime_dir())
    async with stdio_client(args, env) as client:
        shown = text_of(await client.call_tool("read", {"file_path": "dup.ipynb"}))
        assert "--- cell @0 (code) ---" in shown
        assert "--- cell @1 (code) ---" in shown
        refused = await client.call_tool(
            "edit", {"file_path": "dup.ipynb", "cell_id": "same", "new_source": "x"}
        )
        assert error_kind(refused) == "ambiguous_match"
        assert '"@0" or "@1"' in text_of(refused)
        await call(client, "edit", file_path="dup.ipynb", cell_id="@1", new_source="x")
        assert sources(path) == ["first = 1", "x"]


async def test_a_cell_edit_keeps_the_bom_crlf_and_odd_numbers(workspace: Path) -> None:
    path = workspace / "odd.ipynb"
    text = notebook([code("print('hi')", "a"), code("b = 2", "b")])
    text = text.replace(
        '"metadata": {},\n "nbformat"', '"metadata": {"x": 1.10, "y": 1e400},\n "nbformat"'
    )
    before = b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode()
    path.write_bytes(before)
    args, env = ["--root", str(workspace)], mcp_env(private_runtime_dir())
    async with stdio_client(args, env) as client:
        await call(client, "read", file_path="odd.ipynb")
        await call(client, "edit", file_path="odd.ipynb", cell_id="a", new_source="print('bye')")
    assert path.read_bytes() == before.replace(b"print('hi')", b"print('bye')")
