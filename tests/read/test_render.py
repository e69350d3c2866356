"""Results as text (render.py), the one rendering the MCP tools and the CLI share: every
read result type says what it is and carries what the agent needs to go on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from readkeeper import render
from readkeeper.core import Readkeeper
from readkeeper.protocol import ReadParams, unstructure


def read(core: Readkeeper, path: str, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = unstructure(core.read(ReadParams(file_path=path, **params)))
    return result


def test_an_outline_renders_its_symbols_and_first_lines(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"outline_over_tokens": 200})
    (workspace / "shop.py").write_text(
        "class Shop:\n"
        + "".join(f"    def item_{i}(self):\n        return {i}\n" for i in range(80))
    )
    result = read(core, "shop.py")
    assert result["type"] == "outline"
    shown = render.read(result)
    assert shown.startswith(f"{workspace / 'shop.py'}: outline of 161 lines (Python)")
    assert "class Shop" in shown
    assert "method item_79" in shown
    assert "     1\tclass Shop:" in shown
    assert "note: " in shown
    assert "symbol=" in shown


def test_a_changed_file_renders_its_diff_and_an_estimate_its_cost(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "a.txt"
    path.write_text("".join(f"line {i}\n" for i in range(200)))
    read(core, "a.txt")
    path.write_text(path.read_text().replace("line 7\n", "line seven\n"))
    changed = render.read(read(core, "a.txt"))
    assert changed.startswith(f"file_changed: {path}, ")
    assert "+line seven" in changed
    estimate = render.read(read(core, "a.txt", estimate=True))
    assert estimate.startswith(f"estimate: {path}, ")
    assert "would send 200 lines" in estimate


def test_a_stub_of_a_cut_view_keeps_its_note(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"default_limit": 5})
    (workspace / "n.txt").write_text("x\n" * 12)
    read(core, "n.txt")
    shown = render.read(read(core, "n.txt"))
    assert shown.startswith("file_unchanged: ")
    assert "Lines 1-5 of 12" in shown


def test_changes_render_each_file_with_its_note_and_what_was_held_back() -> None:
    result = {
        "changes": [
            {"file_path": "/w/a.py", "kind": "moved", "diff": "", "truncated": False,
             "new_path": "/w/b.py"},
            {"file_path": "/w/big.log", "kind": "modified", "diff": "", "truncated": True,
             "note": "the file is over max_size_bytes: read the lines you need"},
        ],
        "remaining": 3,
    }  # fmt: skip
    assert render.changes(result).split("\n") == [
        "moved: /w/a.py -> /w/b.py",
        "modified: /w/big.log",  # no diff was made (the note says why): none was cut
        "note: the file is over max_size_bytes: read the lines you need",
        "3 more: call changes again.",
    ]
    cut = {"file_path": "/w/c.py", "kind": "modified", "diff": "-a\n+b", "truncated": True}
    bare = {"file_path": "/w/d.py", "kind": "modified", "diff": "", "truncated": True}
    assert render.changes({"changes": [cut, bare]}).split("\n") == [
        "modified: /w/c.py (diff truncated: re-read the file)",
        "  -a",
        "  +b",
        "modified: /w/d.py (no diff: re-read the file)",
    ]
    assert render.changes({"changes": []}) == "No changes to the files you read."
