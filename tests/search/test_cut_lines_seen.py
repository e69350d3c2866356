"""A line a search showed cut is seen only up to the cut: an edit reaching past it is
refused `not_read` with the read that shows the line, in-process and over LSP."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import Session
from mcp_helpers import mcp_env, private_runtime_dir, stdio_client, text_of
from readkeeper import calls, hints
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.search.grep import MAX_LINE_CHARS

HEAD = "shown_head "
LONG = HEAD + "q" * 5000 + "NEEDLE" + "z" * 5000 + "HIDDEN_TAIL"
TEXT = f"start\n{LONG}\nend\n"


def call(core: Readkeeper, method: str, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = calls.call(core, method, params)
    return result


def refused(core: Readkeeper, method: str, **params: Any) -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as caught:
        calls.call(core, method, params)
    return caught.value


def test_an_edit_past_where_a_search_cut_the_line_needs_a_read(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "g2.txt"
    path.write_text(TEXT)
    found = call(core, "grep", pattern="NEEDLE", path="g2.txt")
    assert "HIDDEN_TAIL" not in str(found)
    for old in ("HIDDEN_TAIL", "NEEDLE", HEAD + "q" * MAX_LINE_CHARS, LONG[:600]):
        error = refused(core, "edit", file_path=str(path), old_string=old, new_string="X")
        assert error.kind == "not_read", old[:20]
        assert "line 2 cut short" in error.message
        assert '"offset": ' in error.message
    assert path.read_text() == TEXT
    # What the search did show stays editable without a read.
    assert (
        call(core, "edit", file_path=str(path), old_string=HEAD, new_string="head ")["replacements"]
        == 1
    )
    call(core, "read", file_path=str(path), offset=2, limit=1)
    edited = call(core, "edit", file_path=str(path), old_string="HIDDEN_TAIL", new_string="X")
    assert edited["replacements"] == 1


def test_two_searches_showing_one_line_count_the_longer_view(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "two.txt"
    path.write_text("short NEEDLE line\n" + "y" * 600 + "\n")
    call(core, "grep", pattern="NEEDLE", path="two.txt")
    call(core, "grep", pattern="^y", path="two.txt")
    error = refused(core, "edit", file_path=str(path), old_string="y" * 600, new_string="z")
    assert error.kind == "not_read"
    assert (
        call(core, "edit", file_path=str(path), old_string="short", new_string="s")["replacements"]
        == 1
    )


async def test_lsp_an_edit_of_the_hidden_tail_is_refused(lsp: Session, workspace: Path) -> None:
    (workspace / "g2.txt").write_text(TEXT)
    found = await lsp.client.request(
        "readkeeper/grep", {"pattern": "NEEDLE", "path": "g2.txt", "session": "s2"}
    )
    assert "HIDDEN_TAIL" not in str(found)
    error = await lsp.error(
        "readkeeper/edit",
        {"file_path": "g2.txt", "old_string": "HIDDEN_TAIL", "new_string": "X", "session": "s2"},
    )
    assert error.data["kind"] == "not_read"
    assert error.data["lines"] == [2, 2]
    assert (workspace / "g2.txt").read_text() == TEXT


def test_a_line_two_searches_showed_stays_editable(core: Readkeeper, workspace: Path) -> None:
    # Both views are kept (one shows lines 1 and 3, the other line 1 only): line 1 is in both.
    path = workspace / "both.txt"
    path.write_text("needle one\nsecret\nneedle two other\n")
    call(core, "grep", pattern="needle", path="both.txt")
    call(core, "grep", pattern="one", path="both.txt")
    assert refused(core, "edit", file_path=str(path), old_string="secret", new_string="s").kind == (
        "not_read"
    )
    edited = call(core, "edit", file_path=str(path), old_string="needle one", new_string="n1")
    assert edited["replacements"] == 1


def test_the_refusal_names_the_file_the_lines_and_the_read_that_shows_them(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "m.py"
    path.write_text("needle = 1\nsecret = 2\nmore = 3\n")
    call(core, "grep", pattern="needle", path="m.py")
    error = refused(core, "edit", file_path=str(path), old_string="secret = 2\nmore", new_string="")
    assert error.kind == "not_read"
    assert f"seen {path} only through search, which did not show line 2," in error.message
    assert "the edit changes lines 2-3." in error.message
    assert hints.call("read", file_path=str(path), offset=2, limit=2) in error.message
    assert error.data["lines"] == [2, 3]


def test_an_edit_from_a_line_shown_whole_into_past_a_cut_needs_a_read(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "span.txt"
    path.write_text(TEXT)
    call(core, "grep", pattern="start|NEEDLE", path="span.txt")  # line 1 whole, 2 cut
    old = "start\n" + HEAD + "q" * MAX_LINE_CHARS
    error = refused(core, "edit", file_path=str(path), old_string=old, new_string="X")
    assert error.kind == "not_read"
    assert "line 2 cut short" in error.message
    assert path.read_text() == TEXT


def test_a_cut_line_further_down_is_seen_only_up_to_its_cut(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "down.txt"
    path.write_text("a\nb\n" + TEXT)  # the cut line is line 4
    call(core, "grep", pattern="NEEDLE", path="down.txt")
    past = HEAD + "q" * MAX_LINE_CHARS
    error = refused(core, "edit", file_path=str(path), old_string=past, new_string="X")
    assert "line 4 cut short" in error.message
    assert call(core, "edit", file_path=str(path), old_string=HEAD, new_string="h")["lines"] == [4]


def test_a_cut_last_line_without_a_newline_is_seen_only_up_to_its_cut(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "last.txt"
    path.write_text("start\n" + LONG)
    call(core, "grep", pattern="NEEDLE", path="last.txt")
    error = refused(core, "edit", file_path=str(path), old_string="HIDDEN_TAIL", new_string="X")
    assert "line 2 cut short" in error.message
    assert path.read_text() == "start\n" + LONG


def test_an_edit_may_reach_the_last_character_shown_and_not_one_more(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "edge.txt"
    before = "x" * 600 + "\n"  # the cut line starts far into the file
    path.write_text(before + LONG + "\n")
    call(core, "grep", pattern="NEEDLE", path="edge.txt")
    one_more = LONG[: MAX_LINE_CHARS + 1]
    error = refused(core, "edit", file_path=str(path), old_string=one_more, new_string="X")
    assert "line 2 cut short" in error.message
    shown = LONG[:MAX_LINE_CHARS]
    assert call(core, "edit", file_path=str(path), old_string=shown, new_string="X")["lines"] == [2]
    assert path.read_text() == before + "X" + LONG[MAX_LINE_CHARS:] + "\n"


def test_after_an_edit_backed_by_search_the_rest_still_needs_a_read(
    core: Readkeeper, workspace: Path
) -> None:
    # The edit's own record must not lift the rule: the agent has still seen only the
    # lines the search showed (moved by the edit) and the lines it wrote.
    path = workspace / "m.py"
    body = "".join(f"line{n} = {n}\n" for n in range(2, 100))
    path.write_text("needle = 1\n" + body + "needle = 100\n")
    call(core, "grep", pattern="needle", path="m.py")
    call(core, "edit", file_path=str(path), old_string="needle = 1\n", new_string="a = 1\nb = 1\n")
    error = refused(core, "edit", file_path=str(path), old_string="line50 = 50", new_string="x")
    assert error.kind == "not_read"
    assert "line50 = 50" in path.read_text()
    # What it wrote, and the other line the search showed (now one lower), stay editable.
    call(core, "edit", file_path=str(path), old_string="b = 1", new_string="b = 2")
    call(core, "edit", file_path=str(path), old_string="needle = 100", new_string="c = 100")
    assert refused(
        core, "edit", file_path=str(path), old_string="line2 = 2", new_string="y"
    ).kind == ("not_read")
    # A read of the file lifts the rule, as before.
    call(core, "read", file_path=str(path))
    call(core, "edit", file_path=str(path), old_string="line50 = 50", new_string="x")


async def test_the_note_of_a_line_shown_cut_names_the_read_of_it_in_each_front_ends_words(
    core: Readkeeper, workspace: Path
) -> None:
    """The note's way on is a call of its own (hints.call), said by each front end as its
    own call: the MCP read tool, the CLI's `readkeeper read` (its words were `read NAME
    with offset=2 limit=1`, which only the CLI's regexes reworded)."""
    path = workspace / "g2.txt"
    path.write_text(f"start\n{'y' * 1200} NEEDLE\nend\n")  # longer than a match shows
    found = call(core, "grep", pattern="NEEDLE", path="g2.txt")
    shows = hints.call("read", file_path=str(path), offset=2, limit=1)
    assert f"; {shows} shows the first whole" in found["note"], found["note"]
    assert "offset=" not in found["note"]
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        said = text_of(await client.call_tool("grep", {"pattern": "NEEDLE", "path": "g2.txt"}))
    told = json.dumps({"file_path": str(path), "offset": 2, "limit": 1})
    assert f"the read tool with {told} shows the first whole" in said, said
    done = subprocess.run(
        [sys.executable, "-m", "readkeeper", "grep", "NEEDLE", "g2.txt"],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    command = f"`readkeeper read {shlex.quote(str(path))} --offset 2 --limit 1`"
    assert f"{command} shows the first whole" in done.stderr, done.stderr


def test_a_line_over_max_line_chars_is_not_promised_whole(
    core: Readkeeper, workspace: Path
) -> None:
    """A 9,000-character line: the note said the read of it showed it whole, and that
    read cut it at max_line_chars, naming no way to the rest (round 35, B1)."""
    (workspace / "wide.txt").write_text("start " + "x" * 9000 + " NEEDLE end\n")
    found = call(core, "grep", pattern="NEEDLE", path="wide.txt")
    note = found["note"]
    assert "shows the first whole" not in note, note
    most = core.settings.max_line_chars
    assert f"one is over max_line_chars ({most:,} characters), which every read cuts" in note
    assert "search with a pattern that matches the part you need" in note, note
    shown = call(core, "read", file_path="wide.txt", offset=1, limit=1)["file"]
    assert shown["truncated_lines"] == 1  # the read it names shows what the note says


def test_each_long_line_is_judged_against_max_line_chars(core: Readkeeper, workspace: Path) -> None:
    """Only the first cut line was judged: a second over max_line_chars was promised
    whole as "the same for the others" (round 36, B5)."""
    most = core.settings.max_line_chars
    (workspace / "two.txt").write_text(
        "NEEDLE1 " + "x" * (most - 8) + "\nmid\nNEEDLE3 " + "y" * (most - 6) + "\n"
    )
    note = call(core, "grep", pattern="NEEDLE[13]", path="two.txt")["note"]
    assert "shows the first whole" in note, note
    assert "the same for the others" not in note, note
    assert "one is over max_line_chars" in note, note
    assert '"offset": 3' in note or "offset=3" in note, note


def test_a_long_line_of_a_notebook_names_the_read_of_its_cells(
    core: Readkeeper, workspace: Path
) -> None:
    # grep numbers a notebook's JSON lines, its read shows cells: the note named
    # `offset=14 limit=1`, refused as past the last of 5 cells (round 37, A7).
    cells = [
        {
            "cell_type": "code",
            "execution_count": None,
            "metadata": {},
            "outputs": [],
            "source": [f"qqqq_{index} = '{'z' * 900}'\n"],
        }
        for index in range(5)
    ]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = workspace / "n.ipynb"
    path.write_text(json.dumps(notebook, indent=1))
    note = call(core, "grep", pattern="qqqq", path="n.ipynb")["note"]
    read = hints.call("read", file_path=str(path))
    assert f"those of a notebook are whole in its cells ({read} shows them)" in note, note
    assert "offset" not in note, note
    shown = call(core, "read", file_path=str(path))
    assert "z" * 900 in json.dumps(shown), "the cells show the lines whole"
