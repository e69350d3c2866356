"""The selection attachment says what is true of a selection an editor sends reversed
or past the file's end (attack round 13, d12)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from readkeeper.core import Readkeeper
from readkeeper.protocol import ActiveEditor, AttachmentsParams, Position, Range


def selection(core: Readkeeper, start: Position, end: Position) -> str:
    editor = ActiveEditor("a.md", Range(start, end))
    result: dict[str, Any] = core.attachments(
        AttachmentsParams(types=["selection"], active_editor=editor)
    )
    [item] = [a for a in result["attachments"] if a["type"] == "selection"]
    return str(item["content"])


def test_a_reversed_selection_is_shown_in_order(core: Readkeeper, workspace: Path) -> None:
    (workspace / "a.md").write_text("".join(f"line {i}\n" for i in range(1, 9)))
    said = selection(core, Position(5, 0), Position(0, 0))
    assert said.startswith(f"The user's active editor: {workspace / 'a.md'}, lines 1-5 selected:")
    assert "     1\tline 1" in said
    assert "     6\tline 6" not in said


def test_a_selection_past_the_end_says_so(core: Readkeeper, workspace: Path) -> None:
    (workspace / "a.md").write_text("only\n")
    said = selection(core, Position(2_147_483_647, 0), Position(2_147_483_647, 0))
    assert "2147483648" not in said
    assert "past its last line (the file has 1 line)" in said


def test_a_selection_running_past_the_end_stops_at_the_last_line(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "a.md").write_text("one\ntwo\n")
    said = selection(core, Position(1, 0), Position(90, 0))
    assert "lines 2-91" not in said
    assert "line 2 selected" in said


def test_a_negative_selection_starts_at_the_first_line(core: Readkeeper, workspace: Path) -> None:
    # Attack round 8, finding 12(c)'s sibling: never "lines -4-2".
    (workspace / "a.md").write_text("".join(f"line {i}\n" for i in range(1, 9)))
    said = selection(core, Position(-5, -1), Position(2, 0))
    assert said.startswith(f"The user's active editor: {workspace / 'a.md'}, lines 1-2 selected:")
    assert "-4" not in said.replace(str(workspace), "")  # the temporary path may hold it
