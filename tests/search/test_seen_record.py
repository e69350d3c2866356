"""What a search records as seen (search/seen.py), called as grep calls it: the file a
printed path names, at its real path, and nothing for a file of which no line was shown."""

from __future__ import annotations

from pathlib import Path

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.search.seen import record_shown
from watch_core_helpers import Watching


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


def test_a_file_that_lost_the_lines_shown_is_left_unrecorded(
    core: Readkeeper, workspace: Path
) -> None:
    # The file was cut short between ripgrep's look and this one: its line 3 is gone.
    path = workspace / "m.py"
    path.write_text("needle\n")
    assert record_shown(core, "", {str(path): {1: "needle", 3: "x"}}) == []
    assert record_shown(core, "", {str(path): {20: "a needle further down"}}) == []
    assert core.read_states.get("", str(path)) is None


def test_a_searched_file_moved_as_a_copy_and_a_delete_is_reported_moved(
    workspace: Path,
) -> None:
    # The watcher pairs a delete with a file that appeared holding the same content, of
    # the same size, as the session saw (as after a read: test_watch_core.py).
    watching = Watching(workspace).start()
    try:
        path = workspace / "orig.txt"
        path.write_text("some needle content\nand more\n")
        calls.call(watching.core, "grep", {"pattern": "needle"})
        watching.core.read_states.later.settle()  # its proof, after the answer
        copy = workspace / "elsewhere" / "copy.txt"
        copy.parent.mkdir()
        copy.write_bytes(path.read_bytes())
        path.unlink()
        [notice] = watching.wait_notice("orig.txt")
        assert (notice.kind, notice.new_path) == ("moved", str(copy))
    finally:
        watching.close()


def test_a_file_of_exactly_the_size_cap_counts_as_seen(core: Readkeeper, workspace: Path) -> None:
    # A read holds a file of max_size_bytes whole, so a search's lines of it are seen.
    path = workspace / "m.py"
    path.write_text("needle = 1\n" + "x" * 20 + "\n")
    core.configure({"max_size_bytes": path.stat().st_size})
    calls.call(core, "grep", {"pattern": "needle"})
    edited = calls.call(
        core, "edit", {"file_path": str(path), "old_string": "= 1", "new_string": "= 2"}
    )
    assert edited["replacements"] == 1


def test_files_gone_outside_or_not_text_are_left_unrecorded(
    core: Readkeeper, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("needle\n")
    binary = workspace / "b.bin"
    binary.write_bytes(b"needle\n\x00\xff\xfe")
    for path in (outside, workspace / "gone.py", binary, workspace):
        assert record_shown(core, "", {str(path): {1: "needle"}}) == [], path
        assert core.read_states.get("", str(path)) is None


def test_a_file_allowed_by_name_does_not_open_its_folder_to_the_proof(
    workspace: Path, tmp_path: Path
) -> None:
    """The proof locates a folder once for all its files (a root or an allowed folder
    permits whole folders), but a file allowed by its own name permits only itself: its
    sibling is left unrecorded, whichever of the two comes first."""
    other = tmp_path / "other"
    other.mkdir()
    allowed, sibling = other / "allowed.py", other / "sibling.py"
    allowed.write_text("needle\n")
    sibling.write_text("needle\n")
    settings = {"allowed_paths": [str(allowed)]}
    for order in ((allowed, sibling), (sibling, allowed)):
        core = Readkeeper(roots=[str(workspace)], client_settings=settings)
        try:
            shown = {str(path): {1: "needle"} for path in order}
            assert record_shown(core, "", shown) == [str(allowed)], order
            assert core.read_states.get("", str(sibling)) is None
        finally:
            core.close()
    in_root = workspace / "a.py", workspace / "b.py"  # a root's folder: both, located once
    for path in in_root:
        path.write_text("needle\n")
    core = Readkeeper(roots=[str(workspace)])
    try:
        assert record_shown(core, "", {str(p): {1: "needle"} for p in in_root}) == [
            str(p) for p in in_root
        ]
    finally:
        core.close()


def test_the_lines_kept_are_those_of_the_very_text_proved() -> None:
    """The proof finds a line by where it starts, kept per file and digest across
    searches; a text of the same name and digest decoded otherwise (or any other text)
    gets its own starts, never the ones kept."""
    from readkeeper.search.seen import _STARTS

    first, other = "x\r\ny\n", "a longer line\ny\nz"
    assert list(_STARTS.of("/p.txt", "d1", first)) == [0, 3, 5]
    assert list(_STARTS.of("/p.txt", "d1", other)) == [0, 14, 16]
    assert list(_STARTS.of("/p.txt", "d1", first)) == [0, 3, 5]
    assert list(_STARTS.of("/p.txt", "d2", "")) == [0]


def test_the_line_starts_kept_stay_within_their_memory_cap() -> None:
    """The starts of many or huge texts are not all kept: the cache holds at most
    `_STARTS_HELD` starts in all, whatever it was given."""
    from readkeeper.search import seen

    text = "\n" * 100_000
    for n in range(40):
        assert len(seen._STARTS.of(f"/big{n}.txt", "d", text)) == 100_001
    assert seen._STARTS._held <= seen._STARTS_HELD
    huge = "\n" * (seen._STARTS_HELD // 2)
    assert len(seen._STARTS.of("/huge.txt", "d", huge)) == seen._STARTS_HELD // 2 + 1
    assert ("/huge.txt", "d") not in seen._STARTS._kept
