"""Stubs that say what the agent holds (issue 30): the range, how it was obtained (a read,
an outline, a symbol read, its own write or edit), and what changed around it. A re-read
of lines that are byte-identical to the ones the session holds is a stub also when the
file changed outside them, or only moved them; `force` still sends the text."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from readkeeper import render
from readkeeper.core import Readkeeper
from readkeeper.protocol import EditParams, ReadParams, WriteParams, unstructure
from readkeeper.state.snapshots import Snapshots


def read(core: Readkeeper, path: str, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = unstructure(core.read(ReadParams(file_path=path, **params)))
    return result


def numbered(count: int, start: int = 1) -> str:
    return "".join(f"v{i}\n" for i in range(start, start + count))


def rewrite(path: Path, text: str) -> None:
    """Another program's change, with an mtime that surely differs."""
    path.write_text(text)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


def test_a_stub_names_the_lines_it_stands_for_and_how_they_were_got(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "big.txt").write_text(numbered(3000))
    first = read(core, "big.txt")
    assert first["file"]["num_lines"] == 2000  # cut at the line default
    stub = read(core, "big.txt")
    assert stub["type"] == "file_unchanged"
    file = stub["file"]
    assert (file["start_line"], file["num_lines"], file["total_lines"]) == (1, 2000, 3000)
    assert file["obtained_by"] == "read"
    words = render.read(stub).lower()
    assert "lines 1-2000 of 3,000" in words
    assert "offset=2001" in words  # where the rest starts


def test_a_stub_of_a_whole_read_says_it_holds_every_line(core: Readkeeper, workspace: Path) -> None:
    (workspace / "small.txt").write_text(numbered(12))
    read(core, "small.txt")
    stub = read(core, "small.txt")
    file = stub["file"]
    assert (file["start_line"], file["num_lines"], file["total_lines"]) == (1, 12, 12)
    assert "all 12 lines" in render.read(stub).lower()


def test_a_reread_after_a_write_says_the_content_is_what_the_session_wrote(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "mod.py").write_text("old = 1\n")
    read(core, "mod.py")
    core.write(WriteParams(file_path="mod.py", content="new = 2\nmore = 3\n"))
    again = read(core, "mod.py")
    assert again["type"] == "file_unchanged"
    file = again["file"]
    assert file["obtained_by"] == "write"
    assert file["obtained_at"].endswith("Z")
    assert (file["start_line"], file["num_lines"], file["total_lines"]) == (1, 2, 2)
    words = render.read(again)
    assert "you wrote" in words
    assert "since your last read" not in words  # never points at the pre-write read


def test_a_reread_after_an_edit_says_the_content_is_what_the_edit_left(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "mod.py").write_text(numbered(5))
    read(core, "mod.py")
    core.edit(EditParams(file_path="mod.py", old_string="v3", new_string="v33"))
    again = read(core, "mod.py")
    assert again["type"] == "file_unchanged"
    assert again["file"]["obtained_by"] == "edit"
    words = render.read(again)
    assert "your edit" in words
    assert "since your last read" not in words


def test_the_edit_and_write_results_say_what_the_next_read_returns(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "mod.py").write_text(numbered(5))
    read(core, "mod.py")
    edited = unstructure(core.edit(EditParams(file_path="mod.py", old_string="v3", new_string="v")))
    assert "next read" in render.change("edit", edited)
    written = unstructure(core.write(WriteParams(file_path="new.py", content="x = 1\n")))
    assert "next read" in render.change("write", written)


def test_an_unchanged_range_is_a_stub_when_the_file_changed_after_it(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "big.py"
    path.write_text(numbered(3000))
    first = read(core, "big.py", offset=1, limit=2000)
    rewrite(path, numbered(3001))
    again = read(core, "big.py", offset=1, limit=2000)
    assert again["type"] == "file_unchanged"
    file = again["file"]
    assert (file["start_line"], file["num_lines"], file["total_lines"]) == (1, 2000, 3001)
    assert file["changed_outside"] == "after"
    words = render.read(again)
    assert "changed after line 2000" in words
    assert "3,001 lines" in words
    assert core.tokens.count(words) * 100 < first["file"]["tokens"]
    # force still sends the text; and then the same read stubs as usual.
    assert read(core, "big.py", offset=1, limit=2000, force=True)["type"] == "text"


def test_a_default_read_cut_at_the_line_limit_stubs_after_an_append(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "log.txt"
    path.write_text(numbered(2500))
    read(core, "log.txt")
    rewrite(path, numbered(2600))
    again = read(core, "log.txt")
    assert again["type"] == "file_unchanged"
    assert again["file"]["total_lines"] == 2600
    assert "offset=2001" in render.read(again)


def test_a_range_moved_by_a_change_before_it_is_a_stub_with_its_new_numbers(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "big.txt"
    path.write_text(numbered(400))
    read(core, "big.txt", offset=100, limit=50)
    rewrite(path, "one\ntwo\nthree\n" + numbered(400))
    again = read(core, "big.txt", offset=100, limit=50)
    assert again["type"] == "file_unchanged"
    file = again["file"]
    assert (file["start_line"], file["num_lines"], file["previous_start_line"]) == (103, 50, 100)
    assert file["changed_outside"] == "before"
    words = render.read(again)
    assert "now lines 103-152" in words
    assert "100-149" in words


def test_a_symbol_moved_by_a_change_before_it_is_a_stub(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "mod.py"
    body = "def first():\n    return 1\n\n\ndef second():\n    return 2\n"
    path.write_text(body)
    read(core, "mod.py", symbol="second")
    rewrite(path, "import os\nimport sys\n\n" + body)
    again = read(core, "mod.py", symbol="second")
    assert again["type"] == "file_unchanged"
    assert again["file"]["obtained_by"] == "symbol"
    assert again["file"]["start_line"] == 8


def test_a_symbol_read_whole_has_no_rest_to_read(core: Readkeeper, workspace: Path) -> None:
    # The agent holds all of the symbol: "the rest starts at" would say it was cut.
    (workspace / "mod.py").write_text(
        "def first():\n    return 1\n\n\ndef second():\n    return 2\n"
    )
    read(core, "mod.py", symbol="first")
    again = read(core, "mod.py", symbol="first")
    assert again["type"] == "file_unchanged"
    assert "next_offset" not in again["file"]
    assert "rest" not in again["file"]["note"]
    assert again["file"]["note"].startswith("first (lines 1-2 of 6) unchanged since your read.")


def test_a_range_is_found_unchanged_also_when_the_text_read_is_no_longer_kept(
    workspace: Path,
) -> None:
    # Without the text the agent read (its snapshot evicted), the held lines are found
    # by the digest of the lines shown: those of the range, not of the file's start.
    core = Readkeeper(roots=[str(workspace)])
    core.snapshots = Snapshots(max_entries=1)
    path = workspace / "big.txt"
    path.write_text(numbered(400))
    read(core, "big.txt", offset=100, limit=50)
    (workspace / "other.txt").write_text("other\n")
    read(core, "other.txt")  # evicts big.txt's snapshot
    rewrite(path, numbered(400) + "appended\n")
    again = read(core, "big.txt", offset=100, limit=50)
    assert again["type"] == "file_unchanged"
    assert (again["file"]["start_line"], again["file"]["num_lines"]) == (100, 50)
    assert again["file"]["changed_outside"] == "outside"
    rewrite(path, numbered(400).replace("v120", "v120 changed"))
    changed = read(core, "big.txt", offset=100, limit=50)
    assert changed["type"] == "text"
    assert "v120 changed" in changed["file"]["content"]


def test_a_change_inside_the_range_sends_the_lines(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "big.txt"
    path.write_text(numbered(400))
    read(core, "big.txt", offset=100, limit=50)
    rewrite(path, numbered(400).replace("v120", "v120 changed"))
    again = read(core, "big.txt", offset=100, limit=50)
    assert again["type"] == "text"
    assert "v120 changed" in again["file"]["content"]


def test_a_change_on_both_sides_of_a_range_is_a_stub(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "big.txt"
    path.write_text(numbered(400))
    read(core, "big.txt", offset=100, limit=50)
    rewrite(path, "top\n" + numbered(400) + "bottom\n")
    again = read(core, "big.txt", offset=100, limit=50)
    assert again["type"] == "file_unchanged"
    assert again["file"]["start_line"] == 101
    assert again["file"]["changed_outside"] == "before and after"


def test_a_range_from_line_one_does_not_stand_for_the_whole_file(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "mod.txt").write_text(numbered(100))
    read(core, "mod.txt", offset=1, limit=10)
    whole = read(core, "mod.txt")
    assert (whole["type"], whole["file"]["num_lines"]) == ("text", 100)


def test_a_range_the_sessions_own_edits_did_not_touch_is_a_stub(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "mod.txt").write_text(numbered(400))
    read(core, "mod.txt", offset=300, limit=20)
    read(core, "mod.txt", offset=1, limit=10)
    core.edit(EditParams(file_path="mod.txt", old_string="v5\n", new_string="v5\nextra\n"))
    core.edit(EditParams(file_path="mod.txt", old_string="v7\n", new_string="v7\nmore\n"))
    again = read(core, "mod.txt", offset=300, limit=20)
    assert again["type"] == "file_unchanged"
    assert (again["file"]["start_line"], again["file"]["previous_start_line"]) == (302, 300)
    edited = read(core, "mod.txt", offset=1, limit=10)
    assert edited["type"] == "text"


def test_a_symbol_stub_keeps_the_symbols_name_as_written(core: Readkeeper, workspace: Path) -> None:
    (workspace / "mod.py").write_text("def handler():\n    return 1\n")
    read(core, "mod.py", symbol="handler")
    again = read(core, "mod.py", symbol="handler")
    assert again["file"]["note"].startswith("handler (all 2 lines)")
