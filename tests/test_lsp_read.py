"""readkeeper/read through the real server, as an editor would call it."""

from __future__ import annotations

from pathlib import Path

from conftest import Session


async def test_read_numbers_lines_like_cat_n(lsp: Session, workspace: Path) -> None:
    (workspace / "a.py").write_text("import os\n\nprint(os.getcwd())\n")
    result = await lsp.read("a.py")
    assert result["type"] == "text"
    file = result["file"]
    assert file["file_path"] == str(workspace / "a.py")
    assert file["content"] == "     1\timport os\n     2\t\n     3\tprint(os.getcwd())"
    assert (file["start_line"], file["num_lines"], file["total_lines"]) == (1, 3, 3)
    assert file["tokens"] > 0
    assert file["partial"] is False


async def test_reread_of_unchanged_file_is_a_small_stub(lsp: Session, workspace: Path) -> None:
    (workspace / "a.txt").write_text("hello\n" * 50)
    first = await lsp.read("a.txt")
    assert first["type"] == "text"
    again = await lsp.read("a.txt")
    assert again == {"type": "file_unchanged", "file": {"file_path": str(workspace / "a.txt")}}
    forced = await lsp.read("a.txt", force=True)
    assert forced["type"] == "text"
    stats = await lsp.client.request("readkeeper/stats", {"session": ""})
    assert stats["session"]["dedup_hits"] == 1
    assert stats["session"]["reads"] == 3
    assert stats["session"]["tokens_saved_by_stubs"] > 0
