"""An old_string copied from what a read showed matches every place of the file whose
shown form is that text: a line holding a real CR and a literal `\\r` reads as a line
holding two literal ones, so when both are in the file the edit is `ambiguous_match`
(attack round 24's A9 edited the other line), and a line holding both kinds edits by
copying it as shown (A8 was `no_match`). Through every entry point: one edit, a batch,
several files, and over MCP the core tools and the drop-in's edit_file."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Session
from helpers import text_file
from mcp_helpers import core_client, dropin_client, dropin_edit, error_kind, text_of
from readkeeper.core import Readkeeper
from readkeeper.edit.multi import edit_files
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import EditBatchParams, EditFilesParams, EditParams, FileEdit, PlainEdit

# Line 2: a real CR and a literal `\r`; line 5: two literal `\r`. Shown alike.
MIXED = b"def prod():\n    k = 'a\rb'  # \\r\n\ndef test():\n    k = 'a\\rb'  # \\r\n"
COPIED = "    k = 'a\\rb'  # \\r"
# Line 1: a file's own cut marker (shown `\x5b`) with a literal `\r`; line 3 the same text
# written out literally.
MARKED = b"A [line cut: a\\r b]\nB\nA \\x5bline cut: a\\r b]\n"
MARKED_COPIED = "A \\x5bline cut: a\\r b]"


def shown_rows(core: Readkeeper, path: Path) -> list[str]:
    return [row.split("\t", 1)[1] for row in str(text_file(core, path)["content"]).split("\n")]


@pytest.mark.parametrize(
    ("data", "copied", "lines"), [(MIXED, COPIED, [2, 5]), (MARKED, MARKED_COPIED, [1, 3])]
)
def test_lines_shown_alike_are_ambiguous_whatever_their_mix_of_escapes(
    core: Readkeeper, workspace: Path, data: bytes, copied: str, lines: list[int]
) -> None:
    path = workspace / "m.py"
    path.write_bytes(data)
    rows = shown_rows(core, path)
    assert rows[lines[0] - 1] == rows[lines[1] - 1] == copied
    with pytest.raises(ReadkeeperError) as refused:
        core.edit(EditParams(file_path=str(path), old_string=copied, new_string="CHANGED"))
    assert refused.value.kind == "ambiguous_match"
    assert refused.value.data["lines"] == lines
    assert path.read_bytes() == data


@pytest.mark.parametrize(
    ("data", "copied"),
    [
        (b"k = 'a\rb'  # \\r\n", "k = 'a\\rb'  # \\r"),
        (b"A [line cut: a\\r b]\n", "A \\x5bline cut: a\\r b]"),
        (b"x\x0by \\x0b\n", "x\\x0by \\x0b"),
    ],
)
def test_a_line_holding_both_kinds_edits_by_copying_it_as_shown(
    core: Readkeeper, workspace: Path, data: bytes, copied: str
) -> None:
    path = workspace / "both.txt"
    path.write_bytes(data)
    assert shown_rows(core, path)[0] == copied
    core.edit(EditParams(file_path=str(path), old_string=copied, new_string=copied + " fixed"))
    # What was copied stays as it was in the file; only what was added is new.
    assert path.read_bytes() == data[:-1] + b" fixed\n"


def test_every_entry_point_refuses_lines_shown_alike(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "m.py"
    path.write_bytes(MIXED)
    text_file(core, path)
    pair = PlainEdit(old_string=COPIED, new_string="CHANGED")
    with pytest.raises(ReadkeeperError) as batch:
        core.edit_batch(EditBatchParams(file_path=str(path), edits=[pair]))
    assert batch.value.kind == "ambiguous_match"
    one = FileEdit(file_path=str(path), old_string=COPIED, new_string="CHANGED")
    with pytest.raises(ReadkeeperError) as files:
        core.change("", edit_files, EditFilesParams(files=[one]))
    assert files.value.kind == "ambiguous_match"
    assert path.read_bytes() == MIXED


async def test_over_mcp_the_edit_and_the_drop_in_refuse_lines_shown_alike(
    workspace: Path,
) -> None:
    path = workspace / "m.py"
    path.write_bytes(MIXED)
    async with core_client(workspace) as client:
        shown = text_of(await client.call_tool("read", {"file_path": "m.py"}))
        assert shown.count(COPIED) == 2
        edit = {"file_path": "m.py", "old_string": COPIED, "new_string": "CHANGED"}
        result = await client.call_tool("edit", edit)
        assert error_kind(result) == "ambiguous_match", text_of(result)
        assert "2, 5" in text_of(result)
        pairs = {"file_path": "m.py", "edits": [{"old_string": COPIED, "new_string": "X"}]}
        assert error_kind(await client.call_tool("edit", pairs)) == "ambiguous_match"
    async with dropin_client(workspace) as client:
        result = await dropin_edit(client, "m.py", COPIED, "CHANGED")
        assert error_kind(result) == "ambiguous_match", text_of(result)
    assert path.read_bytes() == MIXED


def test_what_new_string_keeps_of_an_escape_it_changes_is_never_half_an_escape(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "half.txt"
    path.write_bytes(b"x\x0by \\x0b\n")
    text_file(core, path)
    # old and new share `x\x0` and ` \x0b`: the escape they differ in is replaced whole.
    core.edit(
        EditParams(file_path=str(path), old_string="x\\x0by \\x0b", new_string="x\\x0cy \\x0b")
    )
    assert path.read_bytes() == b"x\x0cy \\x0b\n"


async def test_over_lsp_an_edit_and_a_batch_refuse_lines_shown_alike(
    lsp: Session, workspace: Path
) -> None:
    path = workspace / "m.py"
    path.write_bytes(MIXED)
    await lsp.read(path)
    for params in (
        {"file_path": str(path), "old_string": COPIED, "new_string": "CHANGED"},
        {"file_path": str(path), "edits": [{"old_string": COPIED, "new_string": "X"}]},
    ):
        error = await lsp.error("readkeeper/edit", params)
        assert error.data["kind"] == "ambiguous_match"
        assert error.data["lines"] == [2, 5]
    assert path.read_bytes() == MIXED
