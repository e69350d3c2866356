"""An old_string copied from a view as a fragment whose edge cuts an escape (`a \\` of
`a \\x5bline cut: 3]`, `rhere` of `cr\\rhere`, `u2028v` of `u\\u2028v`) edits nothing at
the escaped place, but it may have been copied from there: with another place that holds
it, `ambiguous_match` naming both lines; alone, `no_match` saying to copy whole escapes
(attack round 26's A02b edited the other line). Through every entry point: one edit, a
batch, several files, a patch, and over MCP the core edit and the drop-in's edit_file."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import text_file
from mcp_helpers import core_client, dropin_client, dropin_edit, error_kind, text_of
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.edit.multi import edit_files
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import EditBatchParams, EditFilesParams, EditParams, FileEdit, PlainEdit

# Line 1 holds the literal text `\x5b`, line 2 a real `[` a read shows as `\x5b`.
MARKS = b"a \\x5bline cut: 3]\na [line cut: 3]\n"
# (file, fragment, the line holding it as written, the line a view shows it on by a cut)
CASES = [
    (MARKS, "a \\", 1, 2),
    (MARKS, "x5bline cut: 3]", 1, 2),
    (MARKS, "a \\x5", 1, 2),
    (b"cr\rhere\nlit rhere\n", "rhere", 2, 1),
    (b"u\xe2\x80\xa8v\nthe u2028v\n", "u2028v", 2, 1),
]


def refused(core: Readkeeper, path: Path, old: str) -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as caught:
        core.edit(EditParams(file_path=str(path), old_string=old, new_string="@"))
    return caught.value


@pytest.mark.parametrize(("data", "old", "literal", "cut"), CASES)
def test_a_fragment_cutting_an_escape_is_ambiguous_with_the_literal_place(
    core: Readkeeper, workspace: Path, data: bytes, old: str, literal: int, cut: int
) -> None:
    path = workspace / "f.txt"
    path.write_bytes(data)
    rows = [r.split("\t", 1)[1] for r in str(text_file(core, path)["content"]).split("\n")]
    assert old in rows[literal - 1]  # the view shows it on both lines
    assert old in rows[cut - 1]
    error = refused(core, path, old)
    assert error.kind == "ambiguous_match"
    assert error.data["lines"] == sorted({literal, cut})
    assert error.data["cut_lines"] == [cut]
    assert "cutting through an escape" in error.message
    assert path.read_bytes() == data


@pytest.mark.parametrize("old", ["5bline", "\\", "only \\x"])
def test_a_fragment_only_shown_by_a_cut_is_no_match_saying_why(
    core: Readkeeper, workspace: Path, old: str
) -> None:
    path = workspace / "g.txt"
    data = b"only [line cut: 3]\nnothing here\n"
    path.write_bytes(data)
    text_file(core, path)
    error = refused(core, path, old)
    assert error.kind == "no_match"
    assert error.data["cut_lines"] == [1]
    assert "escape whole" in error.message
    assert path.read_bytes() == data


def test_whole_escapes_still_edit(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "h.txt"
    path.write_bytes(b"only [line cut: 3]\nnothing x5b here\ncr\rhere\n")
    text_file(core, path)
    core.edit(EditParams(file_path=str(path), old_string="\\x5bline", new_string="(line"))
    core.edit(EditParams(file_path=str(path), old_string="\\rhere", new_string=" there"))
    core.edit(EditParams(file_path=str(path), old_string="x5b here", new_string="y"))
    assert path.read_bytes() == b"only (line cut: 3]\nnothing y\ncr there\n"


def test_every_entry_point_refuses_a_fragment_cutting_an_escape(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "f.txt"
    path.write_bytes(MARKS)
    text_file(core, path)
    with pytest.raises(ReadkeeperError) as batch:
        core.edit_batch(
            EditBatchParams(
                file_path=str(path), edits=[PlainEdit(old_string="a \\", new_string="@")]
            )
        )
    assert batch.value.kind == "ambiguous_match"
    one = FileEdit(file_path=str(path), old_string="a \\", new_string="@")
    with pytest.raises(ReadkeeperError) as files:
        core.change("", edit_files, EditFilesParams(files=[one]))
    assert files.value.kind == "ambiguous_match"
    edits = [{"old_string": "a \\", "new_string": "@"}]
    with pytest.raises(ReadkeeperError) as patch:
        calls.call(core, "patch", {"file_path": str(path), "edits": edits, "session": ""})
    assert patch.value.kind == "ambiguous_match"
    assert path.read_bytes() == MARKS


async def test_over_mcp_the_edit_and_the_drop_in_refuse_a_fragment_cutting_an_escape(
    workspace: Path,
) -> None:
    path = workspace / "f.txt"
    path.write_bytes(MARKS)
    async with core_client(workspace) as client:
        await client.call_tool("read", {"file_path": "f.txt"})
        edit = {"file_path": "f.txt", "old_string": "a \\", "new_string": "@"}
        result = await client.call_tool("edit", edit)
        assert error_kind(result) == "ambiguous_match", text_of(result)
    alone = workspace / "g.txt"
    alone.write_bytes(b"only [line cut: 3]\n")
    async with dropin_client(workspace) as client:
        for name, old, kind in (
            ("f.txt", "a \\", "ambiguous_match"),
            ("g.txt", "5bline", "no_match"),
        ):
            result = await dropin_edit(client, name, old, "@")
            assert error_kind(result) == kind, text_of(result)
    assert path.read_bytes() == MARKS
    assert alone.read_bytes() == b"only [line cut: 3]\n"


@pytest.mark.parametrize(
    "data",
    [
        b"def f():\n    return x\nprint('a\rb')\ndef g():\n    return x\n",
        b"return x\r\nfoo\rbar\r\nreturn x\r\n",  # CRLF lines and a lone CR
        b"return x\nx\rreturn x\n",  # the CR right before a whole `return x`
        b"return x\nreturn x\na\r",  # the lone CR last
    ],
)
def test_replace_all_of_a_word_starting_with_r_edits_beside_a_lone_cr(
    core: Readkeeper, workspace: Path, data: bytes
) -> None:
    """`return x` may cut the shown `\\r` (shown.may_cut: its `r` could be the escape's
    tail), so the views are made; but a place counts as cut only where the view shows it
    by cutting one (a CR followed by `eturn x`): a lone CR elsewhere, or before a whole
    `return x`, leaves replace_all replacing every return."""
    path = workspace / "m.py"
    path.write_bytes(data)
    text_file(core, path)
    core.edit(
        EditParams(
            file_path=str(path), old_string="return x", new_string="return y", replace_all=True
        )
    )
    assert path.read_bytes() == data.replace(b"return x", b"return y")


def test_replace_all_still_refuses_where_the_view_shows_old_only_by_a_cut(
    core: Readkeeper, workspace: Path
) -> None:
    """`x<CR>eturn x` is shown `x\\return x`: the agent sees `return x` there too, which no
    edit of `return x` can change; replacing only line 2 would leave a place it saw, so
    replace_all is refused too, naming the cut line."""
    path = workspace / "m.py"
    path.write_bytes(b"x\return x\nreturn x\n")
    text_file(core, path)
    with pytest.raises(ReadkeeperError) as caught:
        core.edit(
            EditParams(file_path=str(path), old_string="return x", new_string="y", replace_all=True)
        )
    assert caught.value.kind == "ambiguous_match"
    assert caught.value.data["cut_lines"] == [1]
    # The way on that fits replace_all: no surrounding text makes line 1 editable by it.
    assert "replace_all cannot edit line 1" in caught.value.message
    assert "adding surrounding text" not in caught.value.message
    assert path.read_bytes() == b"x\return x\nreturn x\n"
