"""A merge never counts as seeing the other change (edit/unseen.py): after an edit merged
over another program's change, the session's read-state is what the agent knows (its
earlier view with its own edit applied), so a whole-file write is refused `stale` with
that change, an edit of its lines needs a read, and `changes` reports it."""

from __future__ import annotations

import json
from pathlib import Path

from unseen_work import ORIGINAL, THEIRS, call, refused

from readkeeper import render
from readkeeper.core import Readkeeper
from readkeeper.edit.unseen import known_after


def merged_edit(core: Readkeeper, path: Path) -> None:
    """Read the file, let another program change line 80, edit line 2 (merged)."""
    path.write_text(ORIGINAL)
    call(core, "read", file_path=str(path))
    path.write_text(THEIRS)
    result = call(core, "edit", file_path=str(path), old_string="line 2\n", new_string="line two\n")
    assert result["merged"] is True


def test_a_write_after_a_merged_edit_is_stale_with_the_unseen_change(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "a.txt"
    merged_edit(core, path)
    believed = ORIGINAL.replace("line 2\n", "line two\n").replace("line 3\n", "line three\n")
    error = refused(core, "write", file_path=str(path), content=believed)
    assert error.kind == "stale"
    assert "+line 80 THEIR UNSEEN WORK" in error.message
    assert "THEIR UNSEEN WORK" in path.read_text()


def test_an_edit_of_the_unseen_lines_needs_a_read_and_a_disjoint_one_merges_again(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "a.txt"
    merged_edit(core, path)
    # The agent believes line 80 is as it read it: the edit is refused, nothing lost.
    assert (
        refused(core, "edit", file_path=str(path), old_string="line 80\n", new_string="x\n").kind
        == "stale"
    )
    # An edit elsewhere is merged again, and says the change again.
    again = call(core, "edit", file_path=str(path), old_string="line 10\n", new_string="ten\n")
    assert again["merged"] is True
    assert "+line 80 THEIR UNSEEN WORK" in again["external_change"]["diff"]
    # Still unseen after an edit after an edit after the merge: a write is refused.
    assert refused(core, "write", file_path=str(path), content=ORIGINAL).kind == "stale"
    text = path.read_text()
    assert "line two" in text
    assert "ten\n" in text
    assert "THEIR UNSEEN WORK" in text
    # A read sees it; then the write is the agent's to make.
    call(core, "read", file_path=str(path))
    call(core, "write", file_path=str(path), content="all new\n")
    assert path.read_text() == "all new\n"


def test_a_batch_edit_merged_leaves_the_change_unseen(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text(ORIGINAL)
    call(core, "read", file_path=str(path))
    path.write_text(THEIRS)
    pairs = [{"old_string": "line 2\n", "new_string": "two\n"}]
    assert call(core, "edit", file_path=str(path), edits=pairs)["merged"] is True
    assert refused(core, "write", file_path=str(path), content=ORIGINAL).kind == "stale"


def test_an_undo_after_a_merge_keeps_the_other_change_unseen(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "a.txt"
    merged_edit(core, path)
    call(core, "undo")
    assert path.read_text() == THEIRS  # their work kept, the agent's edit taken back
    assert refused(core, "write", file_path=str(path), content=ORIGINAL).kind == "stale"
    assert path.read_text() == THEIRS


def test_a_write_after_a_merged_notebook_edit_is_stale(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "nb.ipynb"
    cells = [
        {
            "cell_type": "code",
            "id": f"c{i}",
            "metadata": {},
            "source": [f"x = {i}\n"],
            "outputs": [],
            "execution_count": None,
        }
        for i in range(1, 30)
    ]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(notebook, indent=1) + "\n")
    call(core, "read", file_path=str(path))
    cells[25]["source"] = ["x = 'THEIRS'\n"]
    path.write_text(json.dumps(notebook, indent=1) + "\n")
    done = call(core, "edit", file_path=str(path), cell_id="c2", new_source="x = 'mine'\n")
    assert done["merged"] is True
    # Refused: as stale, or (a merged cell edit leaves only that cell seen) as not read.
    error = refused(core, "write", file_path=str(path), content="{}\n")
    assert error.kind in ("stale", "not_read")
    assert "THEIRS" in path.read_text()


def test_known_after_carries_an_edit_over_to_what_the_agent_knew() -> None:
    before = THEIRS
    after = THEIRS.replace("line 2\n", "line two\n")
    assert known_after(ORIGINAL, before, after) == ORIGINAL.replace("line 2\n", "line two\n")
    # An undo: the agent's view back to what it read, the other change still not in it.
    assert known_after(ORIGINAL.replace("line 2\n", "line two\n"), after, before) == ORIGINAL
    # Lines added or removed above the edit shift it; the result stays the agent's view.
    grown = "new top\n" + ORIGINAL.replace("line 5\n", "")
    edited = grown.replace("line 50\n", "line fifty\n")
    assert known_after(ORIGINAL, grown, edited) == ORIGINAL.replace("line 50\n", "line fifty\n")
    # Where the two changes meet, what the agent knows cannot be shown: None.
    assert known_after(ORIGINAL, THEIRS, THEIRS.replace("line 80 THEIR", "x")) is None


def test_a_multi_file_edit_merged_says_the_change_and_leaves_it_unseen(
    core: Readkeeper, workspace: Path
) -> None:
    a, b = workspace / "a.txt", workspace / "b.txt"
    for path in (a, b):
        path.write_text(ORIGINAL)
        call(core, "read", file_path=str(path))
    a.write_text(THEIRS)
    pair = {"old_string": "line 2\n", "new_string": "two\n"}
    done = call(core, "edit", files=[{"file_path": str(a), **pair}, {"file_path": str(b), **pair}])
    assert "+line 80 THEIR UNSEEN WORK" in render.change("edit", done)
    assert refused(core, "write", file_path=str(a), content=ORIGINAL).kind == "stale"
    assert "THEIR UNSEEN WORK" in a.read_text()


def test_an_anchored_edit_merged_leaves_the_change_unseen(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "c.txt"
    path.write_text(ORIGINAL)
    shown = call(core, "read", file_path=str(path), line_format="anchors")["file"]["content"]
    anchor = next(
        row.split("\t")[0].strip() for row in shown.split("\n") if row.endswith("\tline 2")
    )
    path.write_text(THEIRS)
    edits = [{"op": "replace", "start": anchor, "lines": ["two"]}]
    done = call(core, "edit", file_path=str(path), anchor_edits=edits)
    assert done["merged"] is True
    assert "+line 80 THEIR UNSEEN WORK" in render.change("edit", done)
    assert refused(core, "write", file_path=str(path), content=ORIGINAL).kind == "stale"
    assert "THEIR UNSEEN WORK" in path.read_text()
