"""`readkeeper/undo` through the real server over LSP: the last change taken back, and
a change made since refused as `stale`."""

from __future__ import annotations

from pathlib import Path

from conftest import Session


async def test_undo_over_lsp(lsp: Session, workspace: Path) -> None:
    path = workspace / "a.py"
    path.write_text("a = 1\nb = 2\n")
    await lsp.read(path)
    await lsp.client.request(
        "readkeeper/edit", {"file_path": str(path), "old_string": "b = 2", "new_string": "b = 3"}
    )
    undone = await lsp.client.request("readkeeper/undo", {})
    assert undone["undone"] == "edit"
    assert path.read_text() == "a = 1\nb = 2\n"
    nothing = await lsp.error("readkeeper/undo", {})
    assert nothing.data["kind"] == "no_change"
    await lsp.client.request(
        "readkeeper/edit", {"file_path": str(path), "old_string": "a = 1", "new_string": "a = 0"}
    )
    path.write_text("a = 0\nb = 2\nc = 3\n")
    stale = await lsp.error("readkeeper/undo", {})
    assert stale.data["kind"] == "stale"
    assert path.read_text() == "a = 0\nb = 2\nc = 3\n"


async def test_multi_file_edit_and_its_undo_over_lsp(lsp: Session, workspace: Path) -> None:
    a, b = workspace / "a.py", workspace / "b.py"
    a.write_text("a = 1\n")
    b.write_text("b = 1\n")
    await lsp.read(a)
    await lsp.read(b)
    edited = await lsp.client.request(
        "readkeeper/edit",
        {
            "files": [
                {"file_path": str(a), "old_string": "a = 1", "new_string": "a = 2"},
                {"file_path": str(b), "old_string": "b = 1", "new_string": "b = 2"},
            ]
        },
    )
    assert [f["file_path"] for f in edited["files"]] == [str(a), str(b)]
    assert (a.read_text(), b.read_text()) == ("a = 2\n", "b = 2\n")
    twice = await lsp.error(
        "readkeeper/edit",
        {
            "files": [
                {"file_path": str(a), "old_string": "a = 2", "new_string": "a = 3"},
                {"file_path": "a.py", "old_string": "a = 2", "new_string": "a = 4"},
            ]
        },
    )
    assert twice.data["kind"] == "bad_params"
    await lsp.client.request("readkeeper/undo", {})
    assert (a.read_text(), b.read_text()) == ("a = 1\n", "b = 1\n")
