"""Filters before caps, one cut note, and pages past the end (glob, list, grep), in
process.

An `exclude` applied after the 1000-entry cut let a folder of excluded files fill the
page, and the answer then said "No matches found" of a tree that held matches; a page
the token cap cut short said it held "the first 1000 entries"; an offset past the last
match was answered "No matches." as though the search found nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_helpers import error_kind, mcp_env, private_runtime_dir, stdio_client, text_of
from readkeeper import calls, hints
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.search.exclude import Exclude


def call(core: Readkeeper, method: str, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = calls.call(core, method, params)
    return result


def refused(core: Readkeeper, method: str, **params: Any) -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as caught:
        calls.call(core, method, params)
    return caught.value


def crowded(workspace: Path, crowd: str = "vendor", many: int = 1200) -> Path:
    """`many` new files in `crowd` and one old src file that sorts and ages last."""
    (workspace / crowd).mkdir()
    for index in range(many):
        (workspace / crowd / f"v{index}.py").write_text("")
    (workspace / "zsrc").mkdir()
    kept = workspace / "zsrc" / "main.py"
    kept.write_text("print(1)\n")
    os.utime(kept, (1e9, 1e9))  # older than every crowded file
    return kept


def test_glob_excludes_before_the_cap(core: Readkeeper, workspace: Path) -> None:
    kept = crowded(workspace)
    for pattern in ("*.py", "**/*.py", "zsrc/*.py"):
        result = call(core, "glob", pattern=pattern, exclude=["vendor"])
        assert result["paths"] == [str(kept)], pattern
        assert result["partial"] is False
        assert "next" not in result


def test_list_excludes_before_the_cap_and_never_enters(core: Readkeeper, workspace: Path) -> None:
    crowded(workspace, "node_modules")
    result = call(core, "list", path=".", depth=6, exclude=["node_modules"])
    assert [e["name"] for e in result["entries"]] == ["zsrc", "zsrc/main.py"]
    assert result["partial"] is False


def test_exclude_of_a_folder_pattern_leaves_files_of_that_name(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "build").mkdir()
    (workspace / "build" / "x.py").write_text("")
    (workspace / "src").mkdir()
    (workspace / "src" / "build").write_text("")  # a file named build: kept by "build/"
    listed = call(core, "list", path=".", depth=3, exclude=["build/"])
    assert [e["name"] for e in listed["entries"]] == ["src", "src/build"]
    globbed = call(core, "glob", pattern="**/*", exclude=["build/"])
    assert globbed["paths"] == [str(workspace / "src" / "build")]


def test_a_crowd_past_the_cap_without_exclude_is_cut_and_says_so(
    core: Readkeeper, workspace: Path
) -> None:
    crowded(workspace)
    listed = call(core, "list", path="vendor")
    assert len(listed["entries"]) == 1000
    assert listed["partial"] is True
    assert "Showing 1000 entries (1-1000), cut by the cap of 1000 entries" in listed["note"]
    assert listed["next"]["offset"] == 1000
    globbed = call(core, "glob", pattern="*.py")  # full paths: the token cap may cut first
    shown = len(globbed["paths"])
    cap = "the cap of 1000 files" if shown == 1000 else "the token cap"
    assert f"Showing {shown} files (1-{shown}), cut by {cap}" in globbed["note"]
    assert globbed["next"]["offset"] == shown


def test_next_keeps_the_exclude(core: Readkeeper, workspace: Path) -> None:
    crowded(workspace)
    (workspace / "skip").mkdir()
    (workspace / "skip" / "s.py").write_text("")
    result = call(core, "glob", pattern="*.py", exclude=["skip"])
    assert result["next"]["exclude"] == ["skip"]
    rest = call(core, "glob", **result["next"])
    assert str(workspace / "skip" / "s.py") not in rest["paths"]


@pytest.mark.parametrize("bad", [["a" * 5000], ["x\x00y"], ["*a*a*a*b"], ["x"] * 300])
def test_a_bad_exclude_is_refused_naming_the_field(
    core: Readkeeper, workspace: Path, bad: list[str]
) -> None:
    for method, params in (("glob", {"pattern": "*"}), ("list", {"path": "."})):
        error = refused(core, method, exclude=bad, **params)
        assert error.kind == "bad_params"
        assert error.data["field"] == "exclude"


def test_exclude_matches_paths_relative_to_the_folder_asked() -> None:
    exclude = Exclude(["vendor", "/top.txt", "*.log"])
    assert exclude.excludes("vendor/a.py")
    assert exclude.excludes("x/vendor", is_dir=True)
    assert exclude.excludes("top.txt")
    assert not exclude.excludes("sub/top.txt")
    assert exclude.excludes("deep/a.log")
    assert not exclude.excludes("a.py")
    assert not Exclude([])
    assert not Exclude(None).excludes("anything")


# --- one cut note: what was shown and which cap cut it ------------------------------


def long_names(folder: Path, many: int = 1000) -> None:
    folder.mkdir()
    for index in range(many):
        (folder / (f"{index:03d}" + "\U0001f600" * 63)).write_text("")


@pytest.mark.parametrize("method", ["glob", "list"])
def test_a_page_the_token_cap_cut_says_so_and_how_many(
    core: Readkeeper, workspace: Path, method: str
) -> None:
    long_names(workspace / "e")
    params = {"pattern": "*", "path": "e"} if method == "glob" else {"path": "e"}
    result = call(core, method, **params)
    shown = len(result["paths" if method == "glob" else "entries"])
    assert 0 < shown < 1000
    noun = "files" if method == "glob" else "entries"
    assert f"Showing {shown} {noun} (1-{shown}), cut by the token cap" in result["note"]
    assert "1000" not in result["note"].split("; the rest")[0]
    assert result["next"]["offset"] == shown
    rest = call(core, method, **result["next"])
    assert f"({shown + 1}-" in rest["note"]


# --- a page past the end is refused, never "nothing found" ---------------------------


def matches(workspace: Path, files: int = 3, lines: int = 5) -> None:
    for index in range(files):
        (workspace / f"f{index}.txt").write_text("match\n" * lines)


@pytest.mark.parametrize(
    ("method", "params", "total", "noun"),
    [
        ("glob", {"pattern": "*.txt"}, 3, "files"),
        ("list", {"path": "."}, 3, "entries"),
        ("grep", {"pattern": "match"}, 15, "matches"),
        ("grep", {"pattern": "match", "output": "files"}, 3, "files"),
        ("grep", {"pattern": "match", "output": "counts"}, 3, "files"),
    ],
)
def test_an_offset_past_the_end_is_refused_naming_the_last(
    core: Readkeeper, workspace: Path, method: str, params: dict[str, Any], total: int, noun: str
) -> None:
    matches(workspace)
    last = call(core, method, offset=total - 1, **params)
    assert "No matches." not in str(last.get("note"))
    assert "No files" not in str(last.get("note"))
    for offset in (total, total + 1, 10**6):
        error = refused(core, method, offset=offset, **params)
        assert error.kind == "bad_params"
        assert error.data["field"] == "offset"
        assert error.data["last_offset"] == total - 1
        # The param sent named as a word, the way on as the same search sent again.
        assert f"offset {offset} is past the end: there are {total} {noun}" in error.message
        assert f"the same search with {hints.again(offset=total - 1)} shows the last" in (
            error.message
        )


@pytest.mark.parametrize(
    ("method", "params"),
    [("glob", {"pattern": "*.nothing"}), ("grep", {"pattern": "absent"})],
)
def test_nothing_found_is_said_at_offset_zero_and_refused_past_it(
    core: Readkeeper, workspace: Path, method: str, params: dict[str, Any]
) -> None:
    matches(workspace)
    assert call(core, method, **params)["note"] in ("No files match.", "No matches.")
    error = refused(core, method, offset=5, **params)
    assert "there are 0" in error.message
    assert "offset=0" in error.message


async def test_over_mcp_a_page_past_the_end_is_a_bad_params_naming_offset(
    workspace: Path,
) -> None:
    # The attack's numbers: 30 folders of a 50-line file; grep offset=1500 of 1500 said
    # "(No matches.)", glob offset=30 of 30 "(No files match.)".
    for index in range(30):
        (workspace / f"d{index}").mkdir()
        (workspace / f"d{index}" / "f.txt").write_text("match line\n" * 50)
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        for tool, arguments, past in (
            ("grep", {"pattern": "match", "offset": 1500}, "there are 1500 matches"),
            ("glob", {"pattern": "**/*.txt", "offset": 30}, "there are 30 files"),
            ("list", {"path": ".", "depth": 2, "offset": 60}, "there are 60 entries"),
        ):
            result = await client.call_tool(tool, arguments)
            assert error_kind(result) == "bad_params"
            said = text_of(result)
            assert past in said
            assert "No matches" not in said
            assert "No files" not in said
            structured = result.structured_content
            assert isinstance(structured, dict)
            assert structured["error"]["data"]["field"] == "offset"


def test_read_many_past_the_end_is_an_error_per_file(core: Readkeeper, workspace: Path) -> None:
    # A sibling checked: readMany's offset is each file's line, refused as read refuses it.
    (workspace / "a.txt").write_text("one\ntwo\n")
    result = call(core, "readMany", file_paths=["a.txt"], offset=99)
    error = result["results"][0]["error"]
    assert error["data"]["field"] == "offset"
    assert "past the end" in error["message"]


@pytest.mark.parametrize(
    "args",
    [
        ("grep", "match", "--offset", "15"),
        ("glob", "*.txt", "--offset", "3"),
        ("ls", "--offset", "9"),
    ],
)
def test_the_cli_refuses_a_page_past_the_end(
    workspace: Path, tmp_path: Path, args: tuple[str, ...]
) -> None:
    matches(workspace)
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(workspace), "XDG_RUNTIME_DIR": str(runtime)}
    done = subprocess.run(
        [sys.executable, "-m", "readkeeper", *args],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 2  # refused (bad input), never 1 (nothing found)
    assert "is past the end: there are" in done.stderr
    assert "No matches" not in done.stdout + done.stderr


def test_a_grep_page_says_which_cap_cut_it(core: Readkeeper, workspace: Path) -> None:
    matches(workspace, files=1, lines=30)
    counted = call(core, "grep", pattern="match", max_matches=10)
    assert "Showing matches 1-10 of 30, cut by max_matches (10)" in counted["note"]
    (workspace / "long.txt").write_text(("match " + "\U0001f600" * 500 + "\n") * 40)
    long = call(core, "grep", pattern="match", path="long.txt", max_matches=40)
    shown = long["num_matches"]
    assert 0 < shown < 40
    assert f"Showing matches 1-{shown} of 40, cut by the token cap" in long["note"]
