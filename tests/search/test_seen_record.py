"""What a search records as seen (search/seen.py), called as grep calls it: the file a
printed path names, at its real path, and nothing for a file of which no line was shown."""

from __future__ import annotations

from pathlib import Path

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.search.seen import record_shown


def test_a_path_printed_through_a_symlinked_folder_records_the_real_file(
    core: Readkeeper, workspace: Path
) -> None:
    # ripgrep's walk printed the path before a folder on its way became a link (or a
    # caller names it so): what is recorded is the file the link leads to, so an edit
    # of that file by its own path needs no read.
    (workspace / "real").mkdir()
    path = workspace / "real" / "m.py"
    path.write_text("needle = 1\n")
    (workspace / "link").symlink_to("real")
    printed = str(workspace / "link" / "m.py")
    assert record_shown(core, "", {printed: {1: "needle = 1"}}) == [printed]
    assert core.read_states.get("", str(path)) is not None
    edited = calls.call(
        core, "edit", {"file_path": str(path), "old_string": "= 1", "new_string": "= 2"}
    )
    assert edited["replacements"] == 1
    assert path.read_text() == "needle = 2\n"


def test_a_file_with_no_line_shown_is_not_recorded(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "m.py"
    path.write_text("needle\n")
    assert record_shown(core, "", {str(path): {}}) == []
    assert core.read_states.get("", str(path)) is None
