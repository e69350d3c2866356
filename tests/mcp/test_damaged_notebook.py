"""A damaged notebook (a merge conflict, a cut-off save) can be repaired: a read shows it
as its text, numbered by line, with a note saying it is not a valid notebook, so an edit
of those lines (under the same read and stale checks as any text file's) repairs it and
the next read shows its cells. Before, the read was refused `corrupt` and the edit or
write that could repair it `not_read`, whose next step was that refused read: a loop in
every front end (attack round 25, A6)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Session
from mcp_helpers import core_client, dropin_client, error_kind, ok, text_of

CELL = {"cell_type": "code", "id": "c1", "metadata": {}, "execution_count": None, "outputs": []}
OURS = '   "source": "print(1)"'
THEIRS = '   "source": "print(2)"'
REPAIR = (f"<<<<<<< HEAD\n{OURS}\n=======\n{THEIRS}\n>>>>>>> other\n", f"{OURS}\n")


def _conflicted(workspace: Path) -> Path:
    """A notebook of one cell whose source two branches changed, as git leaves it."""
    notebook = {"cells": [{**CELL, "source": "@"}], "metadata": {}}
    notebook.update(nbformat=4, nbformat_minor=5)
    text = json.dumps(notebook, indent=1).replace('  "source": "@"', REPAIR[0].rstrip("\n"))
    path = workspace / "m.ipynb"
    path.write_text(text + "\n")
    return path


async def test_a_conflicted_notebook_is_read_as_text_repaired_by_an_edit_and_read_again(
    workspace: Path,
) -> None:
    path = str(_conflicted(workspace))
    async with core_client(workspace) as client:
        said = await ok(client, "read", file_path=path)
        assert "<<<<<<< HEAD" in said, said
        assert "is not a valid notebook (" in said, said
        assert "Edit those lines to repair it" in said, said
        await ok(client, "edit", file_path=path, old_string=REPAIR[0], new_string=REPAIR[1])
        repaired = await client.call_tool("read", {"file_path": path})
    assert not repaired.is_error, text_of(repaired)
    assert repaired.structured_content is not None
    assert repaired.structured_content["type"] == "notebook"
    assert "notebook, 1 cell" in text_of(repaired)
    assert "print(1)" in text_of(repaired)


async def test_the_dropin_repairs_a_conflicted_notebook_with_edit_file(workspace: Path) -> None:
    path = str(_conflicted(workspace))
    async with dropin_client(workspace) as client:
        assert "<<<<<<< HEAD" in await ok(client, "read_text_file", path=path)
        edits = [{"oldText": REPAIR[0], "newText": REPAIR[1]}]
        await ok(client, "edit_file", path=path, edits=edits)
        said = await ok(client, "read_text_file", path=path)
    assert "print(1)" in said, said
    assert "<<<<<<<" not in said, said
    assert "not a valid notebook" not in said, said


async def test_lsp_repairs_a_conflicted_notebook(lsp: Session, workspace: Path) -> None:
    path = _conflicted(workspace)
    shown = await lsp.read(path.name)
    assert shown["type"] == "text"
    assert "is not a valid notebook (" in shown["file"]["note"]
    old, new = REPAIR
    edit = {"file_path": path.name, "old_string": old, "new_string": new}
    await lsp.client.request("readkeeper/edit", edit)
    again = await lsp.read(path.name)
    assert again["type"] == "notebook"
    assert again["file"]["cells"][0]["source"] == "print(1)"


async def test_an_edit_of_a_damaged_notebook_keeps_the_stale_check(workspace: Path) -> None:
    file = _conflicted(workspace)
    path = str(file)
    async with core_client(workspace) as client:
        await ok(client, "read", file_path=path)
        theirs = file.read_text().replace("print(2)", "print(3)")  # another program
        file.write_text(theirs)
        refused = await client.call_tool(
            "edit", {"file_path": path, "old_string": REPAIR[0], "new_string": REPAIR[1]}
        )
        assert error_kind(refused) == "stale", text_of(refused)
        assert file.read_text() == theirs  # nothing written over what it was not shown
        # Lines changed since a partial read, past what it showed, are not written either.
        other = workspace / "n.ipynb"
        other.write_text(theirs)
        await ok(client, "read", file_path=str(other), offset=1, limit=2)
        changed = theirs.replace("print(3)", "print(4)")  # another program, past line 2
        other.write_text(changed)
        unseen = await client.call_tool(
            "edit", {"file_path": str(other), "old_string": "print(4)", "new_string": "x"}
        )
        assert error_kind(unseen) == "stale", text_of(unseen)
        assert other.read_text() == changed
    assert file.read_text() == theirs
