"""Every `.ipynb` readkeeper cannot show as cells, whatever the reason, is read as its
numbered text with a note saying why, and an edit of the lines shown repairs it; the
next read shows its cells (attack round 28, B3). Before, a notebook of a version
nbformat cannot read (`"nbformat": 99`) was refused `unsupported` by every read, and
its edit `not_read` naming that read: a loop. A damaged notebook over `max_size_bytes`
was shown as text, with "Edit those lines", but every edit of it was refused
`too_large` (B4): a notebook's edits are held to the cap its read took,
`max_document_bytes`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Session
from mcp_helpers import core_client, dropin_client, error_kind, ok, text_of

CELL = {"cell_type": "code", "id": "c1", "metadata": {}, "execution_count": None, "outputs": []}
GOOD = json.dumps(
    {"cells": [{**CELL, "source": "print(1)"}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
    indent=1,
)
VERSION = ' "nbformat": 4,'

# Each way a notebook's content keeps it from being shown as cells: the line of GOOD
# the damage replaces, and what replaces it (the repair is the reverse edit).
SIBLINGS = {
    "unknown_version": (VERSION, ' "nbformat": 99,'),
    "negative_version": (VERSION, ' "nbformat": -1,'),
    "version_past_64_bits": (VERSION, ' "nbformat": 1000000000000000000000000000000,'),
    "version_that_does_not_upgrade": (VERSION, ' "nbformat": 3,'),
    "no_version": (VERSION, ' "nbformat_": 4,'),
    "no_cells_list": (' "cells": [', ' "cellz": ['),
    "a_cell_not_a_cell": (' "cells": [', ' "cells": [\n  7,'),
    "merge_conflict": (VERSION, f'<<<<<<< HEAD\n{VERSION}\n=======\n "nbformat": 5,\n>>>>>>> b'),
    "cut_off_save": (' "nbformat_minor": 5\n}', ' "nbformat_minor": 5'),
}


def _damaged(workspace: Path, good: str, damage: str, name: str = "d.ipynb") -> Path:
    assert GOOD.count(good) == 1
    path = workspace / name
    path.write_text(GOOD.replace(good, damage))
    return path


@pytest.mark.parametrize("sibling", sorted(SIBLINGS))
async def test_a_notebook_not_shown_as_cells_is_read_as_text_and_repaired(
    workspace: Path, sibling: str
) -> None:
    good, damage = SIBLINGS[sibling]
    path = str(_damaged(workspace, good, damage))
    async with core_client(workspace) as client:
        said = await ok(client, "read", file_path=path)
        assert "is not a valid notebook (" in said, said
        assert "Edit those lines to repair it" in said, said
        assert damage.splitlines()[-1] in said, said  # the damaged line, numbered
        await ok(client, "edit", file_path=path, old_string=damage, new_string=good)
        repaired = await client.call_tool("read", {"file_path": path})
    assert not repaired.is_error, text_of(repaired)
    assert repaired.structured_content is not None
    assert repaired.structured_content["type"] == "notebook", text_of(repaired)
    assert "print(1)" in text_of(repaired)
    assert Path(path).read_text() == GOOD


async def test_the_note_says_which_version_nbformat_cannot_read(workspace: Path) -> None:
    path = str(_damaged(workspace, *SIBLINGS["unknown_version"]))
    async with core_client(workspace) as client:
        said = await ok(client, "read", file_path=path)
        ranged = await ok(client, "read", file_path=path, offset=1, limit=3)
    assert "nbformat 99" in said, said
    assert "cannot read" in said, said
    assert "Ask the user" not in said, said  # the agent repairs it: no dead end
    assert "is not a valid notebook (" in ranged, ranged


async def test_a_cell_edit_of_an_unknown_version_names_the_text_edit(workspace: Path) -> None:
    good, damage = SIBLINGS["unknown_version"]
    path = str(_damaged(workspace, good, damage))
    async with core_client(workspace) as client:
        await ok(client, "read", file_path=path)
        cell = {"file_path": path, "cell_id": "c1", "new_source": "print(2)"}
        refused = await client.call_tool("edit", cell)
        assert error_kind(refused) == "unsupported"
        said = text_of(refused)
        assert "Change its lines as text instead (old_string/new_string" in said, said
        assert "Jupyter first" not in said, said  # no Jupyter opens a version 99
        await ok(client, "edit", file_path=path, old_string=damage, new_string=good)
        await ok(client, "read", file_path=path)
        await ok(client, "edit", **cell)
    assert "print(2)" in Path(path).read_text()


async def test_the_dropin_repairs_a_notebook_of_an_unknown_version(workspace: Path) -> None:
    good, damage = SIBLINGS["unknown_version"]
    path = str(_damaged(workspace, good, damage))
    async with dropin_client(workspace) as client:
        head = await ok(client, "read_file", path=path, head=20)
        assert damage in head, head
        assert "is not a valid notebook (" in head, head
        edits = [{"oldText": damage, "newText": good}]
        await ok(client, "edit_file", path=path, edits=edits)
        said = await ok(client, "read_text_file", path=path)
    assert "print(1)" in said, said
    assert "not a valid notebook" not in said, said


async def test_lsp_repairs_a_notebook_of_an_unknown_version(lsp: Session, workspace: Path) -> None:
    good, damage = SIBLINGS["unknown_version"]
    path = _damaged(workspace, good, damage)
    shown = await lsp.read(path.name)
    assert shown["type"] == "text"
    assert "is not a valid notebook (" in shown["file"]["note"]
    edit = {"file_path": path.name, "old_string": damage, "new_string": good}
    await lsp.client.request("readkeeper/edit", edit)
    again = await lsp.read(path.name)
    assert again["type"] == "notebook"
    assert again["file"]["cells"][0]["source"] == "print(1)"


# --- a damaged notebook over max_size_bytes (B4) ----------------------------------------

CONFLICT = '<<<<<<< HEAD\n  "id": "c0",\n=======\n  "id": "c0x",\n>>>>>>> b'
KEPT = '  "id": "c0",'


def _big_conflicted(workspace: Path) -> Path:
    """600 cells of 30 lines each, indented as Jupyter saves them (about 350 KB, over
    the 262,144-byte max_size_bytes), with a merge conflict in its first cell."""
    cells = [{**CELL, "id": f"c{i}", "source": [f"v = {i}\n"] * 30} for i in range(600)]
    text = json.dumps(
        {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1
    )
    assert text.count(KEPT) == 1
    path = workspace / "big.ipynb"
    path.write_text(text.replace(KEPT, CONFLICT))
    assert 300_000 < path.stat().st_size < 400_000
    return path


async def test_a_big_damaged_notebook_is_repaired_by_the_edit_its_note_names(
    workspace: Path,
) -> None:
    path = str(_big_conflicted(workspace))
    async with core_client(workspace) as client:
        said = await ok(client, "read", file_path=path, offset=1, limit=12)
        assert "Edit those lines to repair it" in said, said
        await ok(client, "edit", file_path=path, old_string=CONFLICT, new_string=KEPT)
        repaired = await client.call_tool("read", {"file_path": path, "offset": 1, "limit": 2})
    assert not repaired.is_error, text_of(repaired)
    assert repaired.structured_content is not None
    assert repaired.structured_content["type"] == "notebook", text_of(repaired)
    assert "<<<<<<<" not in Path(path).read_text()


async def test_the_dropin_repairs_a_big_damaged_notebook(workspace: Path) -> None:
    path = str(_big_conflicted(workspace))
    async with dropin_client(workspace) as client:
        assert "<<<<<<< HEAD" in await ok(client, "read_text_file", path=path, head=12)
        edits = [{"oldText": CONFLICT, "newText": KEPT}]
        await ok(client, "edit_file", path=path, edits=edits)
        said = await ok(client, "read_text_file", path=path, head=1)
    assert "not a valid notebook" not in said, said
    assert "<<<<<<<" not in Path(path).read_text()


async def test_lsp_repairs_a_big_damaged_notebook(lsp: Session, workspace: Path) -> None:
    path = _big_conflicted(workspace)
    shown = await lsp.read(path.name, offset=1, limit=12)
    assert shown["type"] == "text"
    edit = {"file_path": path.name, "old_string": CONFLICT, "new_string": KEPT}
    await lsp.client.request("readkeeper/edit", edit)
    again = await lsp.read(path.name, offset=1, limit=1)
    assert again["type"] == "notebook"
    assert again["file"]["total_cells"] == 600
