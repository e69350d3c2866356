"""Anchored reads, anchor edits and batches through the real server over LSP: the new
fields and their refusals travel as the core gives them."""

from __future__ import annotations

from pathlib import Path

from conftest import Session
from readkeeper.read.anchors import anchor

SOURCE = "a = 1\nb = 2\nc = 3\n"


async def test_anchor_edits_over_lsp(lsp: Session, workspace: Path) -> None:
    path = workspace / "a.py"
    path.write_text(SOURCE)
    read = await lsp.read(path, line_format="anchors")
    assert read["file"]["content"].split("\n")[1] == f"{anchor(2, 'b = 2')}\tb = 2"
    edited = await lsp.client.request(
        "readkeeper/edit",
        {
            "file_path": str(path),
            "anchor_edits": [
                {"op": "replace", "start": anchor(2, "b = 2"), "lines": ["b = 20"]},
                {"op": "insert_after", "start": anchor(3, "c = 3"), "lines": ["d = 4"]},
            ],
        },
    )
    assert path.read_text() == "a = 1\nb = 20\nc = 3\nd = 4\n"
    assert edited["lines"] == [2, 4]
    before = path.read_bytes()
    stale = await lsp.error(
        "readkeeper/edit",
        {"file_path": str(path), "anchor_edits": [{"op": "delete", "start": anchor(2, "b = 2")}]},
    )
    assert stale.data["kind"] == "stale"
    assert f"{anchor(2, 'b = 20')}\tb = 20" in stale.message
    mixed = await lsp.error(
        "readkeeper/edit",
        {
            "file_path": str(path),
            "old_string": "a",
            "new_string": "b",
            "edits": [{"old_string": "a", "new_string": "b"}],
        },
    )
    assert mixed.data["kind"] == "bad_params"
    batch = await lsp.client.request(
        "readkeeper/edit",
        {
            "file_path": str(path),
            "edits": [
                {"old_string": "a = 1", "new_string": "a = 10"},
                {"old_string": "d = 4", "new_string": "d = 40"},
            ],
        },
    )
    assert batch["replacements"] == 2
    assert before != path.read_bytes() == b"a = 10\nb = 20\nc = 3\nd = 40\n"
