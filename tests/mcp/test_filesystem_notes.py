"""The drop-in's listings say what the core said about them, and name each entry's kind
by one rule. A folder left out of a search (its `.gitignore` a FIFO ripgrep would wait
on) was silently missing from search_files ("No matches found") where the native glob
named it; a FIFO was a "file" in directory_tree and `isFile: false` in get_file_info."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mcp_helpers import dropin_client, ok

Connect = Callable[[], AbstractAsyncContextManager[Client]]


@pytest.fixture
def connect(workspace: Path) -> Connect:
    return lambda: dropin_client(workspace)


async def left_out(client: Client, **arguments: Any) -> str:
    """search_files once the watcher has named the FIFO: it sets up in the background
    when the first call starts the server, and a search before that walks into the
    folder and waits on the FIFO to its deadline (SECURITY.md, Known limits)."""
    await ok(client, "list_allowed_directories")  # starts the server and its watcher
    said = ""
    for _ in range(50):
        said = await ok(client, "search_files", **arguments)
        if "Not searched" in said:
            break
        await asyncio.sleep(0.2)
    return said


def _fifo_ignore(workspace: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "main.py").write_text("print(1)\n")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "a.md").write_text("x\n")
    os.mkfifo(workspace / "src" / ".gitignore")


@pytest.mark.parametrize("pattern", ["*.py", "**/*.py", "*", "**/*.md"])
async def test_search_files_names_the_folder_it_left_out(
    connect: Connect, workspace: Path, pattern: str
) -> None:
    _fifo_ignore(workspace)
    async with connect() as client:
        said = await left_out(client, path=str(workspace), pattern=pattern)
        assert "Not searched: src" in said
        assert "FIFO" in said
        assert said.rstrip().endswith(")")  # the note after the listing, in parentheses
        if pattern == "**/*.md":
            assert said.splitlines()[0] == str(workspace / "docs" / "a.md")


async def test_search_files_with_exclude_patterns_keeps_the_note(
    connect: Connect, workspace: Path
) -> None:
    _fifo_ignore(workspace)
    async with connect() as client:
        said = await left_out(client, path=".", pattern="**/*", excludePatterns=["*.txt"])
        assert str(workspace / "docs" / "a.md") in said
        assert "Not searched: src" in said


async def test_a_cut_search_says_the_cut_and_the_folder_left_out(
    connect: Connect, workspace: Path
) -> None:
    _fifo_ignore(workspace)
    (workspace / "many").mkdir()
    for index in range(1100):
        (workspace / "many" / f"f{index}.txt").write_text("")
    async with connect() as client:
        said = await left_out(client, path=".", pattern="**/*.txt")
        assert "Not searched: src" in said
        assert "narrow the pattern or path" in said
        assert "offset=" not in said  # the drop-in's search_files has no offset to name


async def test_an_entrys_kind_is_said_by_one_rule_in_every_tool(
    connect: Connect, workspace: Path
) -> None:
    (workspace / "d").mkdir()
    (workspace / "d" / "f.txt").write_text("abc")
    os.mkfifo(workspace / "d" / "pipe")
    os.symlink("f.txt", workspace / "d" / "link")
    async with connect() as client:
        listed = (await ok(client, "list_directory", path="d")).splitlines()
        assert listed == ["[FILE] f.txt", "[LINK] link", "[OTHER] pipe"]
        sized = (await ok(client, "list_directory_with_sizes", path="d")).splitlines()
        assert [line.split()[0] for line in sized[:3]] == ["[FILE]", "[LINK]", "[OTHER]"]
        assert "Total: 1 files, 0 directories, 2 other entries" in sized
        tree = json.loads((await ok(client, "directory_tree", path=".")).split("\n(")[0])
        kinds = {node["name"]: node["type"] for node in tree[0]["children"]}
        assert kinds == {"f.txt": "file", "link": "symlink", "pipe": "other"}
        info = dict(
            line.split(": ", 1)
            for line in (await ok(client, "get_file_info", path="d/pipe")).splitlines()
        )
        assert (info["isFile"], info["isDirectory"], info["type"]) == ("false", "false", "other")
        info = dict(
            line.split(": ", 1)
            for line in (await ok(client, "get_file_info", path="d/f.txt")).splitlines()
        )
        assert (info["isFile"], info["isDirectory"], info["type"]) == ("true", "false", "file")
