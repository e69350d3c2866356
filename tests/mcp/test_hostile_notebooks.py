"""Notebooks no parser of readkeeper's takes, over MCP (attack round 27): a notebook
holding an integer of 4,301+ digits (past Python's limit for json.loads) failed every
read `internal` and a whole read_many with it; one holding a NUL byte was refused naming
the very read just refused, with the raw NUL in the refusal; a cp1252 notebook's note
said to edit lines no edit can make UTF-8; a cell edit after another program repaired
a notebook said it "is not valid JSON now"."""

from __future__ import annotations

import json
from pathlib import Path

from mcp_helpers import core_client, dropin_client, error_kind, ok, text_of

CELL = {"cell_type": "code", "id": "c1", "metadata": {}, "execution_count": None, "outputs": []}


def _notebook(source: str = "x=1\n", **extra: object) -> str:
    cells = [{**CELL, "source": [source]}]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5, **extra})


def _conflicted(workspace: Path) -> Path:
    """A notebook a conflict marker made invalid JSON."""
    path = workspace / "c.ipynb"
    path.write_text(_notebook().replace('"cells"', '<<<<<<< HEAD\n"cells"', 1))
    return path


def _big_integer(workspace: Path) -> Path:
    path = workspace / "big.ipynb"
    path.write_text(
        _notebook().replace(
            '"metadata": {}, "nbformat"', '"metadata": {"n": 9' + "9" * 4400 + '}, "nbformat"'
        )
    )
    return path


def _nul(workspace: Path) -> Path:
    path = workspace / "nul.ipynb"
    path.write_text(_notebook().replace("x=1", "x=\x001"))
    return path


async def test_a_notebook_with_a_huge_integer_is_read_as_its_text(workspace: Path) -> None:
    big = str(_big_integer(workspace))
    (workspace / "good.ipynb").write_text(_notebook("good=1\n"))
    async with core_client(workspace) as client:
        said = await ok(client, "read", file_path=big)
        assert "is not a valid notebook (Python's JSON parser cannot take it" in said, said
        many = await client.call_tool("read_many", {"file_paths": [big, "good.ipynb"]})
    assert not many.is_error, text_of(many)
    assert "good=1" in text_of(many), text_of(many)


async def test_the_dropin_reads_a_batch_holding_a_huge_integer_notebook(workspace: Path) -> None:
    big = str(_big_integer(workspace))
    (workspace / "good.ipynb").write_text(_notebook("good=1\n"))
    async with dropin_client(workspace) as client:
        said = await ok(client, "read_multiple_files", paths=[big, "good.ipynb"])
    assert "good=1" in said, said
    assert "internal" not in said, said


async def test_a_notebook_with_a_nul_byte_is_refused_naming_no_read_nor_edit(
    workspace: Path,
) -> None:
    path = str(_nul(workspace))
    async with core_client(workspace) as client:
        refused = await client.call_tool("read", {"file_path": path})
    said = text_of(refused)
    assert error_kind(refused) == "corrupt", said
    assert "Ask the user to repair it" in said, said
    assert "A read (" not in said, said
    assert "edit those lines" not in said, said
    assert "\x00" not in said, said
    assert "\\u0000" in said, said
    assert "at at" not in said, said


async def test_the_dropin_refuses_a_nul_notebook_naming_no_read(workspace: Path) -> None:
    path = str(_nul(workspace))
    async with dropin_client(workspace) as client:
        refused = await client.call_tool("read_text_file", {"path": path})
    said = text_of(refused)
    assert error_kind(refused) == "corrupt", said
    assert "read_text_file" not in said, said
    assert "edit_file" not in said, said
    assert "\x00" not in said, said


async def test_a_cp1252_notebook_is_not_said_to_be_repaired_by_an_edit(workspace: Path) -> None:
    path = workspace / "latin.ipynb"
    path.write_bytes(_notebook().replace("x=1", "caf\xe9").encode("cp1252"))
    async with core_client(workspace) as client:
        said = await ok(client, "read", file_path=str(path))
    assert "not UTF-8" in said, said
    assert "Edit those lines" not in said, said
    assert "ask the user to convert it to UTF-8" in said, said


async def test_a_cell_edit_after_another_program_repaired_the_notebook_says_so(
    workspace: Path,
) -> None:
    path = _conflicted(workspace)
    async with core_client(workspace) as client:
        await ok(client, "read", file_path=str(path))
        path.write_text(_notebook())  # another program repaired it
        refused = await client.call_tool(
            "edit", {"file_path": str(path), "cell_id": "c1", "new_source": "y=2"}
        )
    said = text_of(refused)
    assert error_kind(refused) == "stale", said
    assert "not valid JSON now" not in said, said
    assert "it was not a valid notebook when it was read" in said, said


async def test_the_dropin_note_of_a_damaged_notebook_names_no_line_numbers(
    workspace: Path,
) -> None:
    path = _conflicted(workspace)
    async with dropin_client(workspace) as client:
        said = await ok(client, "read_text_file", path=str(path))
    assert "is not a valid notebook" in said, said
    assert "numbered" not in said, said


async def test_a_cell_edit_of_a_nul_notebook_never_names_the_read(workspace: Path) -> None:
    path = str(_nul(workspace))
    async with core_client(workspace) as client:
        refused = await client.call_tool(
            "edit", {"file_path": path, "cell_id": "c1", "new_source": "y=2"}
        )
    said = text_of(refused)
    assert error_kind(refused) == "binary", said
    assert "the read tool" not in said, said
