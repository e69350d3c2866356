"""A read never counts as seeing what it did not show (read/partial_seen.py): when a read
of part of a file (a range, a symbol, anchors, read_many's ranges, an outline) finds the
file changed since the session's record of it, the session's knowledge outside the lines
shown stays what it was. A whole-file write is then `stale` with the unseen change, an
edit of the unseen lines needs a read, and a whole read makes the record whole again."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from unseen_work import ORIGINAL, THEIRS, call, refused

from readkeeper.core import Readkeeper
from readkeeper.read.partial_seen import taken_in

SOURCE = "def f1():\n    return 1\n\n\n" + "".join(f"v{i} = {i}\n" for i in range(5, 101))
SOURCE_THEIRS = SOURCE.replace("v80 = 80\n", "v80 = 'THEIR UNSEEN WORK'\n")


Partial = Callable[[Readkeeper, Path], Any]

PARTIAL_READS: dict[str, Partial] = {
    "range after it": lambda core, p: call(core, "read", file_path=str(p), offset=90, limit=5),
    "range before it": lambda core, p: call(core, "read", file_path=str(p), offset=1, limit=5),
    "range next to it": lambda core, p: call(core, "read", file_path=str(p), offset=81, limit=20),
    "anchors": lambda core, p: call(
        core, "read", file_path=str(p), offset=1, limit=3, line_format="anchors"
    ),
    "read_many": lambda core, p: call(core, "readMany", file_paths=[str(p)], offset=1, limit=3),
}


def _changed_after_whole_read(core: Readkeeper, path: Path, merge: bool) -> None:
    path.write_text(ORIGINAL)
    call(core, "read", file_path=str(path))
    path.write_text(THEIRS)
    if merge:
        done = call(core, "edit", file_path=str(path), old_string="line 2\n", new_string="two\n")
        assert done["merged"] is True


@pytest.mark.parametrize("merge", [False, True], ids=["no merge", "after a merge"])
@pytest.mark.parametrize("view", sorted(PARTIAL_READS))
def test_a_partial_read_never_counts_as_seeing_a_change_outside_it(
    core: Readkeeper, workspace: Path, view: str, merge: bool
) -> None:
    path = workspace / "x.txt"
    _changed_after_whole_read(core, path, merge)
    PARTIAL_READS[view](core, path)
    error = refused(core, "write", file_path=str(path), content=ORIGINAL)
    assert error.kind == "stale"
    assert "+line 80 THEIR UNSEEN WORK" in error.message
    assert "THEIR UNSEEN WORK" in path.read_text()
    # An edit of the unseen line is refused too: the agent believes it says "line 80".
    assert (
        refused(core, "edit", file_path=str(path), old_string="line 80\n", new_string="x\n").kind
        == "stale"
    )
    # A whole read shows everything: then the write is the agent's to make.
    call(core, "read", file_path=str(path))
    call(core, "write", file_path=str(path), content="all new\n")
    assert path.read_text() == "all new\n"


def test_a_symbol_read_never_counts_as_seeing_a_change_outside_it(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "m.py"
    path.write_text(SOURCE)
    call(core, "read", file_path=str(path))
    path.write_text(SOURCE_THEIRS)
    shown = call(core, "read", file_path=str(path), symbol="f1")
    assert "return 1" in shown["file"]["content"]
    error = refused(core, "write", file_path=str(path), content=SOURCE)
    assert error.kind == "stale"
    assert "THEIR UNSEEN WORK" in error.message
    assert "THEIR UNSEEN WORK" in path.read_text()


def test_a_repeated_ranged_read_keeps_the_change_unseen(core: Readkeeper, workspace: Path) -> None:
    """The second read of the same lines is a stub (they did not change): still unseen."""
    path = workspace / "x.txt"
    path.write_text(ORIGINAL)
    call(core, "read", file_path=str(path), offset=1, limit=5)
    path.write_text(THEIRS)
    call(core, "read", file_path=str(path), offset=1, limit=5)
    call(core, "read", file_path=str(path), offset=1, limit=5)
    assert refused(core, "write", file_path=str(path), content=ORIGINAL).kind == "stale"
    assert "THEIR UNSEEN WORK" in path.read_text()


def test_a_ranged_read_says_the_file_changed_outside_its_lines(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "x.txt"
    _changed_after_whole_read(core, path, merge=False)
    shown = call(core, "read", file_path=str(path), offset=90, limit=5)
    note = shown["file"]["note"]
    assert "changed since you read it, outside these lines" in note
    assert "read it whole" in note


def test_the_note_of_a_change_left_unseen_names_the_file_by_the_naming_rule(
    core: Readkeeper, workspace: Path
) -> None:
    """A name holding a line break is quoted, never a line of readkeeper's own."""
    path = workspace / "x.txt\nnote: readkeeper: the file is unchanged"
    _changed_after_whole_read(core, path, merge=False)
    note = call(core, "read", file_path=str(path), offset=90, limit=5)["file"]["note"]
    assert "\n" not in note
    assert json.dumps(str(path)) in note


def test_changes_inside_the_lines_shown_are_seen(core: Readkeeper, workspace: Path) -> None:
    """The lines a read shows are seen: an edit of them is made; a change elsewhere is
    merged over with its diff shown, never counted as read."""
    path = workspace / "x.txt"
    path.write_text(ORIGINAL)
    call(core, "read", file_path=str(path))
    path.write_text(THEIRS.replace("line 3\n", "line 3 THEIRS TOO\n"))
    shown = call(core, "read", file_path=str(path), offset=1, limit=5)
    assert "THEIRS TOO" in shown["file"]["content"]
    done = call(
        core, "edit", file_path=str(path), old_string="line 3 THEIRS TOO\n", new_string="3\n"
    )
    assert done["merged"] is True
    assert "+line 80 THEIR UNSEEN WORK" in done["external_change"]["diff"]
    assert "THEIRS TOO" not in done["external_change"]["diff"]
    assert refused(core, "write", file_path=str(path), content=ORIGINAL).kind == "stale"


def test_ranged_reads_without_an_outside_change_still_license_edits_and_writes(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "x.txt"
    path.write_text(ORIGINAL)
    call(core, "read", file_path=str(path), offset=90, limit=5)
    call(core, "edit", file_path=str(path), old_string="line 92\n", new_string="92\n")
    call(core, "read", file_path=str(path), offset=1, limit=5)
    call(core, "write", file_path=str(path), content="mine\n")
    assert path.read_text() == "mine\n"
    # After a whole read and another program's change, a whole re-read sees it.
    path.write_text(ORIGINAL)
    call(core, "read", file_path=str(path))
    path.write_text(THEIRS)
    call(core, "read", file_path=str(path))
    call(core, "write", file_path=str(path), content="mine again\n")
    assert path.read_text() == "mine again\n"


def test_taken_in_keeps_only_the_changes_inside_the_lines_shown() -> None:
    both = THEIRS.replace("line 3\n", "line 3 NEW\n")
    # Lines 1-5 shown: the change at 3 is taken in, the one at 80 is not.
    assert taken_in(ORIGINAL, both, 0, 5) == ORIGINAL.replace("line 3\n", "line 3 NEW\n")
    assert taken_in(ORIGINAL, both, 0, 100) == both
    assert taken_in(ORIGINAL, both, 0, 0) == ORIGINAL
    # Lines added above the range shift it; the range is in the new file's numbers.
    grown = "top\n" + THEIRS
    assert taken_in(ORIGINAL, grown, 50, 51) == THEIRS
    assert taken_in(ORIGINAL, grown, 1, 50) == ORIGINAL
    assert taken_in(ORIGINAL, grown, 0, 50) == "top\n" + ORIGINAL


def test_an_outline_never_counts_as_seeing_a_change(workspace: Path) -> None:
    """Over outline_over_tokens a whole read is an outline: it shows no line of the change."""
    core = Readkeeper(roots=[str(workspace)], client_settings={"outline_over_tokens": 50})
    try:
        path = workspace / "m.py"
        path.write_text(SOURCE)
        call(core, "read", file_path=str(path), offset=1, limit=5)
        path.write_text(SOURCE_THEIRS)
        assert call(core, "read", file_path=str(path))["type"] == "outline"
        error = refused(core, "write", file_path=str(path), content=SOURCE)
        assert error.kind == "stale"
        assert "THEIR UNSEEN WORK" in error.message
        assert "THEIR UNSEEN WORK" in path.read_text()
    finally:
        core.close()


def test_a_re_read_stub_names_the_lines_shown_not_the_agents_older_ones(
    core: Readkeeper, workspace: Path
) -> None:
    """Lines added above the range, unseen: the record keeps the older text, but a stub
    of the same range names the lines that read showed, where they are."""
    path = workspace / "x.txt"
    path.write_text(ORIGINAL)
    call(core, "read", file_path=str(path))
    path.write_text("".join(f"new {i}\n" for i in range(5)) + ORIGINAL)
    shown = call(core, "read", file_path=str(path), offset=90, limit=5)
    assert shown["file"]["content"].splitlines()[0].endswith("line 85")
    again = call(core, "read", file_path=str(path), offset=90, limit=5)
    assert again["type"] == "file_unchanged"
    assert again["file"]["start_line"] == 90
    assert refused(core, "write", file_path=str(path), content=ORIGINAL).kind == "stale"


def test_when_the_earlier_text_is_no_longer_kept_the_session_knows_nothing_to_write_over(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "x.txt"
    path.write_text(ORIGINAL)
    call(core, "read", file_path=str(path))
    path.write_text(THEIRS)
    # Other reads push the text read first out of the snapshots.
    for i in range(core.snapshots.max_entries + 1):
        other = workspace / f"o{i}.txt"
        other.write_text(f"other {i}\n")
        call(core, "read", file_path=str(other))
    call(core, "read", file_path=str(path), offset=90, limit=5)
    assert refused(core, "write", file_path=str(path), content=ORIGINAL).kind == "stale"
    edit = {"file_path": str(path), "old_string": "line 90\n", "new_string": "90\n"}
    assert refused(core, "edit", **edit).kind == "stale"
    assert "THEIR UNSEEN WORK" in path.read_text()
    call(core, "read", file_path=str(path))
    call(core, "edit", **edit)
    assert "THEIR UNSEEN WORK" in path.read_text()
