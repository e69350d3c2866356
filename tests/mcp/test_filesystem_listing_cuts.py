"""The drop-in's listings over MCP (the server as a subprocess): `excludePatterns`
applied before any cap, and one cut note saying what was shown and which cap cut it.

Attacks: 1200 files in vendor/ plus an old src/main.py, excludePatterns ["vendor"]:
search_files said "No matches found" and directory_tree showed [] (the cut came first);
1000 names of 63 emoji: list_directory showed 179 entries and said "the first 1000
entries", list_directory_with_sizes totalled 98 and said the totals counted 1000."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest
from mcp import Client
from test_filesystem_notes import _fifo_ignore, left_out

from mcp_helpers import dropin_client, ok

Connect = Callable[[], AbstractAsyncContextManager[Client]]


@pytest.fixture
def connect(workspace: Path) -> Connect:
    return lambda: dropin_client(workspace)


def crowded(workspace: Path, crowd: str) -> Path:
    (workspace / crowd).mkdir()
    for index in range(1200):
        (workspace / crowd / f"v{index}.py").write_text("")
    (workspace / "zsrc").mkdir()
    kept = workspace / "zsrc" / "main.py"
    kept.write_text("print(1)\n")
    os.utime(kept, (1e9, 1e9))  # older than the crowd: last of the newest first
    return kept


@pytest.mark.parametrize("crowd", ["vendor", "node_modules"])
async def test_exclude_patterns_apply_before_the_cap(
    connect: Connect, workspace: Path, crowd: str
) -> None:
    kept = crowded(workspace, crowd)
    async with connect() as client:
        for pattern in ("*.py", "**/*.py"):
            said = await ok(
                client, "search_files", path=".", pattern=pattern, excludePatterns=[crowd]
            )
            assert said == str(kept)  # whole: no cut note, no "No matches found"
        tree = await ok(client, "directory_tree", path=".", excludePatterns=[crowd])
        assert json.loads(tree) == [
            {
                "name": "zsrc",
                "type": "directory",
                "children": [{"name": "main.py", "type": "file"}],
            }
        ]


def long_names(folder: Path) -> None:
    folder.mkdir()
    for index in range(1000):
        (folder / (f"{index:03d}" + "\U0001f600" * 63)).write_text("")


def note_of(said: str) -> str:
    return said.rsplit("\n(readkeeper: ", 1)[1]


@pytest.mark.parametrize(
    "tool", ["list_directory", "list_directory_with_sizes", "directory_tree", "search_files"]
)
async def test_a_cut_by_the_token_cap_says_what_it_shows(
    connect: Connect, workspace: Path, tool: str
) -> None:
    long_names(workspace / "e")
    arguments = {"path": "e"} | ({"pattern": "*"} if tool == "search_files" else {})
    async with connect() as client:
        said = await ok(client, tool, **arguments)
    if tool == "directory_tree":
        shown = len(json.loads(said.split("\n(readkeeper: ")[0]))
    elif tool == "search_files":
        shown = said.count(str(workspace / "e"))
    else:
        shown = said.count("[FILE]")
    assert 0 < shown < 1000
    note = note_of(said)
    noun = "newest matches" if tool == "search_files" else "entries"
    assert note.startswith(f"Showing {shown} {noun} (1-{shown}), cut by the token cap")
    assert "1000" not in note
    if tool == "list_directory_with_sizes":
        assert f"Total of the {shown} entries shown: {shown} files, 0 directories" in said
        assert f"Combined size of the {shown} entries shown: 0 B" in said


async def test_a_cut_by_the_entry_cap_says_so(connect: Connect, workspace: Path) -> None:
    (workspace / "d").mkdir()
    for index in range(1200):
        (workspace / "d" / f"f{index:04d}").write_text("")
    async with connect() as client:
        listed = await ok(client, "list_directory", path="d")
        sized = await ok(client, "list_directory_with_sizes", path="d")
        tree = await ok(client, "directory_tree", path="d")
    assert listed.count("[FILE]") == 1000
    assert note_of(listed).startswith("Showing 1000 entries (1-1000), cut by the cap of 1000")
    assert "Total of the 1000 entries shown: 1000 files, 0 directories" in sized
    assert note_of(tree).startswith("Showing 1000 entries (1-1000), cut by the cap of 1000")


async def test_whole_listings_total_without_a_cut(connect: Connect, workspace: Path) -> None:
    (workspace / "d").mkdir()
    (workspace / "d" / "a.txt").write_text("abc")
    (workspace / "d" / "sub").mkdir()
    async with connect() as client:
        sized = await ok(client, "list_directory_with_sizes", path="d")
    assert "Total: 1 files, 1 directories" in sized
    assert "Combined size: 3 B" in sized
    assert "(readkeeper:" not in sized
    assert not re.search(r"\bshown\b", sized)


async def test_an_empty_search_that_was_not_whole_says_so(
    connect: Connect, workspace: Path
) -> None:
    _fifo_ignore(workspace)  # src/ (holding the only .py) is left out: a FIFO .gitignore
    async with connect() as client:
        said = await left_out(client, path=".", pattern="*.py")
    assert said.startswith("No matches found in what was searched; the search was not whole")
    assert "Not searched: src" in said
