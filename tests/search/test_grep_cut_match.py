"""A search that shows less than it found says so: a multiline match (or its context)
cut by the token budget is `partial`, its note names the lines left out and the read that
shows them, no line after the cut is shown as if it followed on, and paging with `next`
never skips what the cut left out. Lines not shown are never counted as seen."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import Session
from mcp_helpers import call, mcp_env, private_runtime_dir, stdio_client, text_of
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.search import grep as grep_module

SPAN = "BEGIN[\\s\\S]*END"
LONG = "BEGIN\n" + "".join(f"secret{i} = {i}\n" for i in range(3000)) + "END\n"


def grep(core: Readkeeper, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = calls.call(core, "grep", params)
    core.read_states.later.settle()
    return result


def contiguous(result: dict[str, Any]) -> bool:
    numbers = [m["line"] for m in result["matches"]]
    return numbers == list(range(numbers[0], numbers[0] + len(numbers)))


def read_named(note: str) -> tuple[int, int]:
    """The offset and limit of the read a cut note names, a call of its own (hints.call)
    with the file's whole path, never options named in a sentence."""
    found = re.search(r"readkeeper/read (\{[^}]*\})", note)
    assert found, note
    params = json.loads(found[1])
    assert os.path.isabs(params["file_path"]), note
    assert f"left out; {found[0]} shows them" in note, note
    return int(params["offset"]), int(params["limit"])


@pytest.mark.parametrize("max_tokens", [5000, None])
def test_a_cut_multiline_match_is_partial_and_names_the_read_for_the_rest(
    core: Readkeeper, workspace: Path, max_tokens: int | None
) -> None:
    (workspace / "m.py").write_text(LONG)
    if max_tokens:
        core.configure({"max_tokens": max_tokens})
    result = grep(core, pattern=SPAN, multiline=True, path="m.py")
    shown = [m["line"] for m in result["matches"]]
    assert shown[0] == 1
    assert shown[-1] < 3002
    assert contiguous(result)  # no line after the cut shown as if it followed on
    assert result["partial"] is True
    offset, limit = read_named(result["note"])
    assert offset == shown[-1] + 1
    assert "3002" in result["note"]
    assert "m.py" in result["note"]
    assert read_to(core, offset, limit) == 3002


def read_to(core: Readkeeper, offset: int, limit: int) -> int:
    """Follow the read a cut note names, each time by the same limit; the last line read."""
    while True:
        rest = calls.call(core, "read", {"file_path": "m.py", "offset": offset, "limit": limit})
        file = rest["file"]
        assert file["start_line"] == offset
        if file["content"].rstrip("\n").endswith("END") or file["num_lines"] < limit:
            return int(file["start_line"] + file["num_lines"] - 1)
        offset += limit


def test_two_matches_the_first_cut_the_note_says_so_and_next_reaches_the_second(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "m.py").write_text(LONG + "mid\nBEGIN\nsecond = 1\nEND\n")
    core.configure({"max_tokens": 5000})
    first = grep(core, pattern="BEGIN[\\s\\S]*?END", multiline=True, path="m.py")
    assert first["partial"] is True
    assert contiguous(first)
    assert "match 1" in first["note"]
    offset, _limit = read_named(first["note"])
    assert offset == first["matches"][-1]["line"] + 1
    second = grep(core, **first["next"])
    assert [m["text"] for m in second["matches"]] == ["BEGIN", "second = 1", "END"]
    assert second["partial"] is False


def test_context_cut_by_the_budget_is_partial_and_leaves_no_gap(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "c.txt").write_text(
        "needle\n" + "".join(f"line {i} of context\n" for i in range(20))
    )
    core.configure({"max_tokens": 60})
    result = grep(core, pattern="needle", context=20)
    assert result["matches"][0]["text"] == "needle"
    assert len(result["matches"]) < 21
    assert contiguous(result)
    assert result["partial"] is True
    assert "context" in result["note"]


def test_lines_a_cut_left_out_are_not_counted_as_seen(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "m.py"
    path.write_text(LONG)
    core.configure({"max_tokens": 5000})
    result = grep(core, pattern=SPAN, multiline=True, path="m.py")
    last = result["matches"][-1]["line"]
    for old in (f"secret{last - 1} = {last - 1}\n", "secret2000 = 2000\n", "END\n"):
        kind = ""
        try:
            calls.call(
                core, "edit", {"file_path": str(path), "old_string": old, "new_string": "x\n"}
            )
        except ReadkeeperError as error:
            kind = error.kind
        assert kind == "not_read", old


async def test_mcp_and_lsp_say_the_cut_of_a_long_match(lsp: Session, workspace: Path) -> None:
    (workspace / "m.py").write_text(LONG)
    over_lsp = await lsp.client.request(
        "readkeeper/grep", {"pattern": SPAN, "multiline": True, "path": "m.py"}
    )
    assert over_lsp["partial"] is True
    offset, limit = read_named(over_lsp["note"])
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        found = await call(client, "grep", pattern=SPAN, multiline=True, path="m.py")
        assert found["partial"] is True
        text = text_of(
            await client.call_tool("grep", {"pattern": SPAN, "multiline": True, "path": "m.py"})
        )
        told = text.splitlines()[-1]
        assert "the read tool with {" in told, told
        assert f'"offset": {offset}, "limit": {limit}}}' in told, told


def test_the_cli_says_the_cut_on_stderr(workspace: Path) -> None:
    (workspace / "m.py").write_text(LONG)
    env = {**os.environ, "READKEEPER_MAX_TOKENS": "5000"}
    done = subprocess.run(
        [sys.executable, "-m", "readkeeper", "grep", "-U", SPAN, "m.py"],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    shown = [int(line.split(":")[1]) for line in done.stdout.splitlines()]
    assert shown == list(range(1, len(shown) + 1))
    assert len(shown) < 3002
    assert f"--offset {len(shown) + 1} --limit " in done.stderr  # the CLI's flags
    assert "`readkeeper read " in done.stderr  # the command that reads the lines left out
    assert "offset=" not in done.stderr
    assert "left out" in done.stderr


@pytest.mark.parametrize("output", ["files", "counts"])
def test_names_and_counts_of_a_stopped_run_say_it_did_not_look_everywhere(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch, output: str
) -> None:
    for i in range(30):
        (workspace / f"f{i:02}.txt").write_text("needle\n")
    monkeypatch.setattr(grep_module, "COLLECT_CAP", 5)
    result = grep(core, pattern="needle", output=output, max_matches=1000)
    assert result["partial"] is True
    assert "did not look everywhere" in result["note"]


def test_the_cli_parts_context_groups_that_do_not_follow_on(workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\nneedle\nthree\nfour\nfive\nneedle\nseven\n")
    done = subprocess.run(
        [sys.executable, "-m", "readkeeper", "grep", "-C", "1", "needle"],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stdout.splitlines() == [
        "a.txt-1-one",
        "a.txt:2:needle",
        "a.txt-3-three",
        "--",
        "a.txt-5-five",
        "a.txt:6:needle",
        "a.txt-7-seven",
    ]


def test_a_cut_note_names_the_file_by_the_naming_rule(core: Readkeeper, workspace: Path) -> None:
    """The file a cut note sends the agent to read is named as every name in readkeeper's
    words: a name with a line break cannot add a line of its own to the note."""
    (workspace / "a\nkind: ok").write_text("needle " + "x" * 600 + "\n")
    found = calls.call(core, "grep", {"pattern": "needle"})
    assert found["partial"] is True
    assert "\n" not in found["note"], found["note"]
    assert '"' in found["note"]


def _notebook_of(source: str) -> str:
    """A notebook of one code cell of `source`, as Jupyter writes it (a JSON line for
    each source line, grep's lines)."""
    cell = {
        "cell_type": "code",
        "execution_count": None,
        "metadata": {},
        "outputs": [],
        "source": source.splitlines(keepends=True),
    }
    return json.dumps(
        {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1
    )


def test_a_cut_match_in_a_notebook_names_its_cells_not_a_range_of_its_json(
    core: Readkeeper, workspace: Path
) -> None:
    # grep numbers a notebook's JSON lines; its read shows cells: a range of the JSON's
    # lines named as a read's offset was refused as past the last cell (round 37, A7).
    path = workspace / "n.ipynb"
    path.write_text(_notebook_of(LONG))
    core.configure({"max_tokens": 5000})
    result = grep(core, pattern=SPAN, multiline=True, path="n.ipynb")
    note = result["note"]
    read = 'readkeeper/read {"file_path": ' + json.dumps(str(path)) + "}"
    assert f"left out; the notebook's cells ({read}) shows them." in note, note
    assert "offset" not in note, note
    shown = calls.call(core, "read", {"file_path": str(path)})
    assert shown["type"] == "notebook", shown
