"""A damaged notebook's text view licenses edits only while the file stays no notebook
readkeeper shows as cells (attack round 29, B5). Before, a read of lines 1-5 of a
damaged notebook, then its repair (by the session's edit or by another program), let a
text edit of a cell never shown, or a whole write, through, while a cell edit of that
same cell was refused `not_read`. Now both are refused until the session reads it as a
notebook; the repair edit itself, made while the file is damaged, still applies."""

from __future__ import annotations

from pathlib import Path

from notebook_cells import numbered_notebook

from conftest import Session
from mcp_helpers import core_client, error_kind, ok, text_of

GOOD = numbered_notebook(200)
GOOD += "\n"
MARKER = "<<<<<<< garbage\n"
BAD = GOOD + MARKER
UNSEEN = {"old_string": "SECRET150", "new_string": "HACKED150"}


def _damaged(workspace: Path) -> str:
    path = workspace / "nb.ipynb"
    path.write_text(BAD)
    return str(path)


async def test_the_repair_edit_after_a_partial_text_view_still_applies(workspace: Path) -> None:
    path = _damaged(workspace)
    async with core_client(workspace) as client:
        said = await ok(client, "read", file_path=path, limit=5)
        assert "is not a valid notebook (" in said, said
        await ok(client, "edit", file_path=path, old_string=MARKER, new_string="")
        cells = await client.call_tool("read", {"file_path": path, "limit": 1})
    assert Path(path).read_text() == GOOD
    assert cells.structured_content is not None
    assert cells.structured_content["type"] == "notebook", text_of(cells)


async def test_a_text_edit_of_an_unseen_cell_after_the_repair_is_refused(workspace: Path) -> None:
    path = _damaged(workspace)
    async with core_client(workspace) as client:
        await ok(client, "read", file_path=path, limit=5)
        await ok(client, "edit", file_path=path, old_string=MARKER, new_string="")
        refused = await client.call_tool("edit", {"file_path": path, **UNSEEN})
        assert error_kind(refused) == "not_read", text_of(refused)
        said = text_of(refused)
        assert "it is a notebook again" in said, said
        assert "Read it as a notebook (" in said, said  # the read that lifts it
        # The same edit as a cell edit is refused too: the two paths agree.
        cell = await client.call_tool(
            "edit", {"file_path": path, "cell_id": "c150", "new_source": "HACK2"}
        )
        assert error_kind(cell) == "not_read", text_of(cell)
        # Read as a notebook, every cell: the text edit is licensed again.
        await ok(client, "read", file_path=path, limit=1000)
        await ok(client, "edit", file_path=path, **UNSEEN)
    assert "HACKED150" in Path(path).read_text()


async def test_a_text_edit_after_another_programs_repair_is_refused(workspace: Path) -> None:
    path = _damaged(workspace)
    async with core_client(workspace) as client:
        await ok(client, "read", file_path=path, limit=5)
        Path(path).write_text(GOOD)  # another program repairs it
        refused = await client.call_tool("edit", {"file_path": path, **UNSEEN})
        assert error_kind(refused) == "not_read", text_of(refused)
        # Lines the text view showed are no exception once it is a notebook again.
        shown = await client.call_tool(
            "edit", {"file_path": path, "old_string": '"cells": [', "new_string": '"cells":['}
        )
        assert error_kind(shown) == "not_read", text_of(shown)
    assert Path(path).read_text() == GOOD


async def test_a_write_after_the_repair_is_refused(workspace: Path) -> None:
    path = _damaged(workspace)
    async with core_client(workspace) as client:
        await ok(client, "read", file_path=path, limit=5)
        await ok(client, "edit", file_path=path, old_string=MARKER, new_string="")
        content = GOOD.replace("SECRET199", "W")
        refused = await client.call_tool("write", {"file_path": path, "content": content})
        assert error_kind(refused) == "not_read", text_of(refused)
        batch = await client.call_tool("edit", {"file_path": path, "edits": [UNSEEN]})
        assert error_kind(batch) == "not_read", text_of(batch)
    assert Path(path).read_text() == GOOD


async def test_a_whole_text_view_still_licenses_edits_after_the_repair(workspace: Path) -> None:
    path = _damaged(workspace)
    async with core_client(workspace) as client:
        await ok(client, "read", file_path=path, limit=100_000)
        await ok(client, "edit", file_path=path, old_string=MARKER, new_string="")
        await ok(client, "edit", file_path=path, **UNSEEN)
    assert "HACKED150" in Path(path).read_text()


async def test_text_edits_of_a_notebook_read_whole_as_cells_go_on(workspace: Path) -> None:
    path = workspace / "nb.ipynb"
    path.write_text(GOOD)
    async with core_client(workspace) as client:
        await ok(client, "read", file_path=str(path), limit=1000)
        await ok(client, "edit", file_path=str(path), **UNSEEN)
        again = {"old_string": "SECRET149", "new_string": "HACKED149"}
        await ok(client, "edit", file_path=str(path), **again)
    assert "HACKED149" in path.read_text()


async def test_lsp_refuses_a_text_edit_after_the_repair(lsp: Session, workspace: Path) -> None:
    path = Path(_damaged(workspace))
    shown = await lsp.read(path.name, limit=5)
    assert shown["type"] == "text"
    repair = {"file_path": path.name, "old_string": MARKER, "new_string": ""}
    await lsp.client.request("readkeeper/edit", repair)
    error = await lsp.error("readkeeper/edit", {"file_path": path.name, **UNSEEN})
    assert error.data["kind"] == "not_read", error.message
    assert path.read_text() == GOOD
