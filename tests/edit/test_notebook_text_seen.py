"""A text edit or write of a file read as a notebook needs every cell shown first: its
old_string is matched against the whole JSON, so a read of one cell must not let it
change another (edit/notebook_seen.py, `check_text_change`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import Session
from mcp_helpers import error_kind, mcp_env, private_runtime_dir, stdio_client, text_of
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.hints import call as hint

SECRET = "UNSEEN_SECRET_CELL"


def save(path: Path) -> Path:
    cells = [
        {"cell_type": "code", "id": name, "metadata": {}, "execution_count": None,
         "outputs": [], "source": source}
        for name, source in (("a", "SEEN = 1\n"), ("b", f"{SECRET} = 2\n"), ("c", "third = 3\n"))
    ]  # fmt: skip
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(notebook, indent=1) + "\n")
    return path


def changes(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """Each text change of the notebook that would reach cell b, never shown."""
    name = str(path)
    swapped = path.read_text().replace(SECRET, "PWNED")
    return [
        ("edit", {"file_path": name, "old_string": SECRET, "new_string": "PWNED"}),
        (
            "edit",
            {
                "file_path": name,
                "edits": [
                    {"old_string": "SEEN = 1", "new_string": "SEEN = 11"},
                    {"old_string": SECRET, "new_string": "PWNED"},
                ],
            },
        ),
        ("edit", {"files": [{"file_path": name, "old_string": SECRET, "new_string": "PWNED"}]}),
        ("patch", {"file_path": name, "edits": [{"old_string": SECRET, "new_string": "PWNED"}]}),
        ("write", {"file_path": name, "content": swapped}),
    ]


def call(core: Readkeeper, name: str, params: dict[str, Any]) -> Any:
    return calls.call(core, name, params)


@pytest.mark.parametrize("which", range(5))
def test_a_text_change_after_a_read_of_one_cell_is_refused(
    core: Readkeeper, workspace: Path, which: int
) -> None:
    path = save(workspace / "nb.ipynb")
    call(core, "read", {"file_path": str(path), "offset": 1, "limit": 1})
    before = path.read_bytes()
    name, params = changes(path)[which]
    with pytest.raises(ReadkeeperError) as caught:
        call(core, name, params)
    assert caught.value.kind == "not_read"
    assert "cells 1-1 of 3" in caught.value.message
    assert hint("read", file_path=str(path)) in caught.value.message  # the read of it all
    assert path.read_bytes() == before


@pytest.mark.parametrize("which", range(5))
def test_a_text_change_after_every_cell_was_shown_is_made(
    core: Readkeeper, workspace: Path, which: int
) -> None:
    path = save(workspace / "nb.ipynb")
    call(core, "read", {"file_path": str(path)})
    name, params = changes(path)[which]
    call(core, name, params)
    assert SECRET not in path.read_text()


def test_ranged_reads_that_add_up_to_every_cell_count(core: Readkeeper, workspace: Path) -> None:
    path = save(workspace / "nb.ipynb")
    call(core, "read", {"file_path": str(path), "offset": 1, "limit": 1})
    call(core, "read", {"file_path": str(path), "offset": 3, "limit": 1})
    name, params = changes(path)[0]
    with pytest.raises(ReadkeeperError) as caught:
        call(core, name, params)
    assert "cells 2" in caught.value.message  # the one not shown
    call(core, "read", {"file_path": str(path), "offset": 2, "limit": 1})
    call(core, name, params)
    assert SECRET not in path.read_text()


def test_the_cut_cell_refusal_says_what_works(core: Readkeeper, workspace: Path) -> None:
    core.configure({"max_tokens": 2000})
    path = workspace / "big.ipynb"
    big = {"cell_type": "code", "id": "big", "metadata": {}, "execution_count": None,
           "outputs": [], "source": "x = 1\n" * 5000}  # fmt: skip
    path.write_text(json.dumps({"cells": [big], "metadata": {}, "nbformat": 4,
                                "nbformat_minor": 5}))  # fmt: skip
    call(core, "read", {"file_path": str(path), "offset": 1, "limit": 1})
    with pytest.raises(ReadkeeperError) as caught:
        call(core, "edit", {"file_path": str(path), "cell_id": "big", "new_source": "y = 2"})
    assert "Once every cell has been shown" in caught.value.message


async def test_over_mcp_a_text_edit_of_an_unseen_cell_is_refused(workspace: Path) -> None:
    path = save(workspace / "nb.ipynb")
    before = path.read_bytes()
    async with stdio_client(["--root", str(workspace)], mcp_env(private_runtime_dir())) as client:
        await client.call_tool("read", {"file_path": str(path), "offset": 1, "limit": 1})
        for name, params in changes(path):
            if name == "patch":
                continue  # the drop-in's tool: no MCP tool of its own
            answer = await client.call_tool(name, params)
            assert error_kind(answer) == "not_read", text_of(answer)
        assert path.read_bytes() == before


async def test_over_lsp_a_text_edit_of_an_unseen_cell_is_refused(
    lsp: Session, workspace: Path
) -> None:
    path = save(workspace / "nb.ipynb")
    before = path.read_bytes()
    await lsp.read(path, offset=1, limit=1)
    for name, params in changes(path):
        error = await lsp.error(f"readkeeper/{name}", params)
        assert error.data["kind"] == "not_read", error.message
    assert path.read_bytes() == before


def test_a_dry_run_patch_says_the_real_one_would_be_refused(
    core: Readkeeper, workspace: Path
) -> None:
    path = save(workspace / "nb.ipynb")
    call(core, "read", {"file_path": str(path), "offset": 1, "limit": 1})
    edits = [{"old_string": "SEEN = 1", "new_string": "SEEN = 11"}]
    said = call(core, "patch", {"file_path": str(path), "edits": edits, "dry_run": True})
    assert "will be refused" in said["note"]
    assert "cells 1-1 of 3" in said["note"]
