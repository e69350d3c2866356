"""A move that changes how a file is read carries no read-state (attack round 31, B1 and
B3), through the drop-in as a subprocess. What the session read of a file counts at its
new path only when a read there reads it the same way (a notebook stays a notebook, text
stays text). Before, a notebook read as cells 1-2 and renamed to .txt was told "you may
edit there without reading again"; then every edit was refused `not_read` in notebook
words, naming a read of every cell that, past max_size_bytes, was refused `too_large`,
and a cell edit the drop-in lacks; and a text view of the renamed file never lifted it.
A text file renamed to .ipynb kept its text view as a license for text edits of the
notebook's JSON."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from pathlib import Path

from mcp import Client
from notebook_cells import numbered_notebook

from mcp_helpers import (
    error_kind,
    mcp_env,
    named_call,
    ok,
    private_runtime_dir,
    stdio_client,
    text_of,
)

NOTEBOOK = numbered_notebook(60)
NOTEBOOK += "\n"  # 10,063 bytes
FIRST = [{"oldText": '"SECRET0\\n"', "newText": '"CHANGED0\\n"'}]
PROMISE = "you may edit there without reading again"


def _dropin(workspace: Path, **caps: str) -> AbstractAsyncContextManager[Client]:
    args = ["--tools", "filesystem", "--standalone", "--root", str(workspace)]
    return stdio_client(args, mcp_env(private_runtime_dir(), **caps))


async def _edit(client: Client, path: Path) -> str:
    result = await client.call_tool("edit_file", {"path": str(path), "edits": FIRST})
    return error_kind(result) if result.is_error else ""


async def test_a_notebook_renamed_txt_past_the_text_cap_is_promised_no_edit(
    workspace: Path,
) -> None:
    notebook, text = workspace / "nb.ipynb", workspace / "nb.txt"
    notebook.write_text(NOTEBOOK)
    async with _dropin(workspace, READKEEPER_MAX_SIZE_BYTES="4096") as client:
        said = await ok(client, "read_text_file", path=str(notebook), head=2)
        assert "cells 1-2 of 60" in said, said
        moved = await ok(client, "move_file", source=str(notebook), destination=str(text))
        assert PROMISE not in moved, moved
        assert "(as text, not as a notebook)" in moved, moved
        assert "over the 4,096-byte limit" in moved, moved
        # No read is named (it would be refused too_large): the way on is the move back.
        assert "read_text_file" not in moved, moved
        back = named_call(moved, "move_file")
        assert back == {"source": str(text), "destination": str(notebook)}, moved
        # Every change is refused as too large, never not_read naming a refused read.
        result = await client.call_tool("edit_file", {"path": str(text), "edits": FIRST})
        assert error_kind(result) == "too_large", text_of(result)
        assert "cell_id" not in text_of(result)
        result = await client.call_tool("write_file", {"path": str(text), "content": "x\n"})
        assert error_kind(result) == "too_large", text_of(result)
        # The way on works: moved back and read as a notebook, it is edited.
        moved_back = await ok(client, "move_file", **back)
        assert "(as a notebook, not as text): read it before" in moved_back, moved_back
        await ok(client, "read_text_file", path=str(notebook))
        assert await _edit(client, notebook) == ""
    assert '"CHANGED0\\n"' in notebook.read_text()


async def test_a_notebook_renamed_txt_is_read_again_as_text_and_its_lines_license(
    workspace: Path,
) -> None:
    notebook, text = workspace / "nb.ipynb", workspace / "nb.txt"
    notebook.write_text(NOTEBOOK)
    async with _dropin(workspace) as client:
        await ok(client, "read_text_file", path=str(notebook), head=2)
        moved = await ok(client, "move_file", source=str(notebook), destination=str(text))
        assert PROMISE not in moved, moved
        assert "read it again before editing it" in moved, moved
        assert named_call(moved, "read_text_file") == {"path": str(text)}, moved
        # Unread at its new path: refused as any file never read, in no notebook's words.
        result = await client.call_tool("edit_file", {"path": str(text), "edits": FIRST})
        assert error_kind(result) == "not_read", text_of(result)
        assert "as a notebook" not in text_of(result), text_of(result)
        assert "cell_id" not in text_of(result), text_of(result)
        # The text lines read there license an edit of them (B3: they did not).
        shown = await ok(client, "read_text_file", path=str(text), head=30)
        assert '"SECRET0\\n"' in shown, shown
        assert await _edit(client, text) == ""
    assert '"CHANGED0\\n"' in text.read_text()


async def test_a_text_file_renamed_ipynb_past_the_notebook_cap_is_promised_no_edit(
    workspace: Path,
) -> None:
    plain, notebook = workspace / "t.txt", workspace / "t.ipynb"
    plain.write_text("line\n" * 1200)  # 6,000 bytes
    async with _dropin(workspace, READKEEPER_MAX_DOCUMENT_BYTES="4096") as client:
        await ok(client, "read_text_file", path=str(plain))
        moved = await ok(client, "move_file", source=str(plain), destination=str(notebook))
        assert PROMISE not in moved, moved
        assert "(as a notebook, not as text)" in moved, moved
        assert "over the 4,096-byte limit" in moved, moved
        assert "read_text_file" not in moved, moved
        assert named_call(moved, "move_file") == {
            "source": str(notebook),
            "destination": str(plain),
        }, moved
        result = await client.call_tool("read_text_file", {"path": str(notebook)})
        assert error_kind(result) == "too_large", text_of(result)
        edit = {"path": str(notebook), "edits": [{"oldText": "line\nline", "newText": "x"}]}
        result = await client.call_tool("edit_file", edit)
        assert error_kind(result) == "too_large", text_of(result)


async def test_a_text_view_renamed_ipynb_licenses_no_edit_of_the_notebook(
    workspace: Path,
) -> None:
    plain, notebook = workspace / "t.txt", workspace / "t.ipynb"
    plain.write_text(NOTEBOOK)
    async with _dropin(workspace) as client:
        shown = await ok(client, "read_text_file", path=str(plain), head=30)
        assert '"SECRET0\\n"' in shown, shown
        moved = await ok(client, "move_file", source=str(plain), destination=str(notebook))
        assert PROMISE not in moved, moved
        assert "(as a notebook, not as text)" in moved, moved
        assert named_call(moved, "read_text_file") == {"path": str(notebook)}, moved
        # 30 lines of its JSON are not its cells: the text edit waits for a read of them.
        assert await _edit(client, notebook) == "not_read"
        await ok(client, "read_text_file", path=str(notebook))
        assert await _edit(client, notebook) == ""
    assert '"CHANGED0\\n"' in notebook.read_text()


async def test_a_folder_move_keeps_what_was_read_of_every_file_in_it(workspace: Path) -> None:
    folder = workspace / "d"
    folder.mkdir()
    (folder / "nb.ipynb").write_text(NOTEBOOK)
    (folder / "a.txt").write_text("one\ntwo\n")
    async with _dropin(workspace) as client:
        await ok(client, "read_text_file", path=str(folder / "nb.ipynb"))
        await ok(client, "read_text_file", path=str(folder / "a.txt"))
        moved = await ok(client, "move_file", source=str(folder), destination=str(workspace / "e"))
        assert "What this session read of 2 moved files counts at the new path" in moved, moved
        assert "read it again" not in moved, moved
        assert await _edit(client, workspace / "e" / "nb.ipynb") == ""
        edit = {
            "path": str(workspace / "e" / "a.txt"),
            "edits": [{"oldText": "two", "newText": "2"}],
        }
        await ok(client, "edit_file", **edit)
    assert (workspace / "e" / "a.txt").read_text() == "one\n2\n"
