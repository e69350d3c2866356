"""A file with a BOM keeps exactly one: a U+FEFF the agent's new text starts with stands
for that BOM (edit/commit.py `encode`). Writing "\\ufeffnew" to a UTF-8 file with a BOM
wrote EF BB BF EF BB BF: a second BOM, which every other tool shows as a stray
character. A file whose text itself starts with U+FEFF after its BOM keeps both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from notebook_cells import code_cell
from notebook_cells import edit as edit_cell

from conftest import Session
from mcp_helpers import mcp_env, private_runtime_dir, stdio_client, text_of
from readkeeper.core import Readkeeper
from readkeeper.protocol import EditParams, ReadParams, WriteParams

CODECS = [
    ("utf-8", b"\xef\xbb\xbf"),
    ("utf-16-le", b"\xff\xfe"),
    ("utf-16-be", b"\xfe\xff"),
    ("utf-32-le", b"\xff\xfe\x00\x00"),
]


@pytest.mark.parametrize(("codec", "bom"), CODECS)
def test_a_write_starting_with_the_bom_character_keeps_one_bom(
    core: Readkeeper, workspace: Path, codec: str, bom: bytes
) -> None:
    path = workspace / "b.txt"
    path.write_bytes(bom + "old\r\n".encode(codec))
    core.read(ReadParams(str(path)))
    core.write(WriteParams(str(path), "\ufeffnew\ncontent\n"))
    assert path.read_bytes() == bom + "new\r\ncontent\r\n".encode(codec)


@pytest.mark.parametrize(("codec", "bom"), CODECS)
def test_an_edit_at_offset_0_starting_with_the_bom_character_keeps_one_bom(
    core: Readkeeper, workspace: Path, codec: str, bom: bytes
) -> None:
    path = workspace / "b.txt"
    path.write_bytes(bom + "first\nsecond\n".encode(codec))
    core.read(ReadParams(str(path)))
    core.edit(EditParams(str(path), old_string="first", new_string="\ufeffFIRST"))
    assert path.read_bytes() == bom + "FIRST\nsecond\n".encode(codec)


def test_a_text_that_starts_with_the_character_after_its_bom_keeps_it(
    core: Readkeeper, workspace: Path
) -> None:
    """EF BB BF EF BB BF: the second is the file's own text, shown to the agent; an edit
    elsewhere, or a write of what it read, changes no byte of it."""
    path = workspace / "two.txt"
    data = b"\xef\xbb\xbf\xef\xbb\xbfone\ntwo\n"
    path.write_bytes(data)
    core.read(ReadParams(str(path)))
    core.edit(EditParams(str(path), old_string="two", new_string="TWO"))
    assert path.read_bytes() == data.replace(b"two", b"TWO")
    core.read(ReadParams(str(path)))
    core.write(WriteParams(str(path), "\ufeffone\nTWO\nthree\n"))
    assert path.read_bytes() == b"\xef\xbb\xbf\xef\xbb\xbfone\nTWO\nthree\n"


def test_a_file_without_a_bom_is_written_as_the_agent_wrote_it(
    core: Readkeeper, workspace: Path
) -> None:
    """No BOM to stand for: the character is the agent's own (how it adds a BOM)."""
    path = workspace / "plain.txt"
    path.write_bytes(b"old\n")
    core.read(ReadParams(str(path)))
    core.write(WriteParams(str(path), "\ufeffnew\n"))
    assert path.read_bytes() == b"\xef\xbb\xbfnew\n"
    created = workspace / "created.txt"
    core.write(WriteParams(str(created), "\ufeffx\n"))
    assert created.read_bytes() == b"\xef\xbb\xbfx\n"


def test_a_notebook_with_a_bom_keeps_one_and_the_cell_keeps_its_text(
    core: Readkeeper, workspace: Path
) -> None:
    """A cell's text sits inside the JSON, never at the file's start: the file keeps its
    one BOM, and the cell holds what the agent gave it."""
    path = workspace / "n.ipynb"
    notebook = {"cells": [code_cell("1", "c1")], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(notebook).encode())
    core.read(ReadParams(str(path)))
    edit_cell(core, path, cell_id="c1", new_source="\ufeffx = 2")
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf{")
    assert json.loads(data.decode("utf-8-sig"))["cells"][0]["source"] in (
        "\ufeffx = 2",
        ["\ufeffx = 2"],
    )


async def test_over_lsp_a_write_keeps_one_bom(lsp: Session, workspace: Path) -> None:
    path = workspace / "b.txt"
    path.write_bytes(b"\xef\xbb\xbfold\n")
    await lsp.read(path.name)
    await lsp.client.request("readkeeper/write", {"file_path": path.name, "content": "\ufeffnew\n"})
    assert path.read_bytes() == b"\xef\xbb\xbfnew\n"


async def test_over_the_drop_in_write_file_and_edit_file_keep_one_bom(workspace: Path) -> None:
    path = workspace / "b.txt"
    path.write_bytes(b"\xff\xfe" + "old\r\nline\r\n".encode("utf-16-le"))
    args = ["--tools", "filesystem", "--standalone", "--root", str(workspace)]
    async with stdio_client(args, mcp_env(private_runtime_dir())) as client:
        read = await client.call_tool("read_text_file", {"path": str(path)})
        assert not read.is_error, text_of(read)
        wrote = await client.call_tool(
            "write_file", {"path": str(path), "content": "\ufeffnew\nline\n"}
        )
        assert not wrote.is_error, text_of(wrote)
        assert path.read_bytes() == b"\xff\xfe" + "new\r\nline\r\n".encode("utf-16-le")
        read = await client.call_tool("read_text_file", {"path": str(path)})
        assert not read.is_error, text_of(read)
        edited = await client.call_tool(
            "edit_file",
            {"path": str(path), "edits": [{"oldText": "new", "newText": "\ufeffNEW"}]},
        )
        assert not edited.is_error, text_of(edited)
    assert path.read_bytes() == b"\xff\xfe" + "NEW\r\nline\r\n".encode("utf-16-le")
