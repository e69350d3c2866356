"""A file whose name is not UTF-8 (a hostile repository's, or one another program
renamed) is named in every MCP answer as readkeeper names it elsewhere (quoting.py: a
byte that is not UTF-8 as the escape `\\udcff`), and never stops the server: the SDK
writes only valid Unicode, and a lone surrogate in one answer used to kill it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from helpers import eventually
from mcp_helpers import mcp_env, private_runtime_dir, stdio_client, text_of, until_watching

NAME = b"\xff\xfe.txt"
SHOWN = "\\udcff\\udcfe.txt"  # how readkeeper names it


def _tree(root: Path) -> None:
    (root / "ok.txt").write_text("hello\n")
    with open(os.path.join(os.fsencode(root), NAME), "wb") as file:
        file.write(b"needle\n")


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("glob", {"pattern": "*"}),
    ("glob", {"pattern": "**/*.txt"}),
    ("grep", {"pattern": "needle"}),
    ("grep", {"pattern": "needle", "output": "files"}),
    ("grep", {"pattern": "needle", "output": "counts"}),
    ("list", {"path": "."}),
    ("read", {"file_path": "\xfe.txt"}),  # "did you mean" names the file
    ("read_many", {"file_paths": ["ok.txt", "\xfe.txt"]}),
]


async def test_every_tool_names_a_file_not_utf8_and_the_server_lives_on(workspace: Path) -> None:
    _tree(workspace)
    args = ["--root", str(workspace), "--standalone"]
    async with stdio_client(args, mcp_env(private_runtime_dir())) as client:
        await client.call_tool("stats", {})  # later reads take the quick path
        for tool, arguments in CALLS:
            answer = await client.call_tool(tool, arguments)
            shown = text_of(answer)
            assert SHOWN in shown, (tool, arguments, shown)
            alive = await client.call_tool("stats", {})
            assert not alive.is_error, (tool, arguments)


async def test_a_name_shown_escaped_sent_back_reads_and_edits_that_file(workspace: Path) -> None:
    """MCP can carry no lone surrogate: the escape text it showed names the file."""
    _tree(workspace)
    args = ["--root", str(workspace), "--standalone"]
    async with stdio_client(args, mcp_env(private_runtime_dir())) as client:
        listed = text_of(await client.call_tool("glob", {"pattern": "*.txt"}))
        assert SHOWN in listed
        read = await client.call_tool("read", {"file_path": SHOWN})
        assert not read.is_error, text_of(read)
        assert "needle" in text_of(read)
        edit = {"file_path": SHOWN, "old_string": "needle", "new_string": "pin"}
        assert not (await client.call_tool("edit", edit)).is_error
    with open(os.path.join(os.fsencode(workspace), NAME), "rb") as file:
        assert file.read() == b"pin\n"


# Names alike once a byte that is not UTF-8 is written as escape text, each with its own
# content: every one is named apart, and its name sent back reads that very file.
TWINS = {
    b"\xff.txt": "ff byte",
    b"\xff\xfe.txt": "ff fe bytes",
    b"\xff\\udcfe.txt": "ff byte, then the text \\udcfe",
    b"\\udcaa.txt": "the text \\udcaa",  # a literal name that looks like an escape
}


async def test_names_alike_as_escape_text_are_named_apart_and_each_read_back(
    workspace: Path,
) -> None:
    for name, content in TWINS.items():
        with open(os.path.join(os.fsencode(workspace), name), "w") as file:
            file.write(content + "\n")
    args = ["--root", str(workspace), "--standalone"]
    async with stdio_client(args, mcp_env(private_runtime_dir())) as client:
        listed = await client.call_tool("glob", {"pattern": "*.txt"})
        assert listed.structured_content is not None
        paths = listed.structured_content["paths"]
        assert len(set(paths)) == len(TWINS), paths
        shown = [line for line in text_of(listed).splitlines() if line.startswith(('"', "/"))]
        assert len(set(shown)) == len(TWINS), shown
        for line in shown:  # the name as a line shows it: a JSON string's inner text
            asked = line[1:-1] if line.startswith('"') else line
            read = await client.call_tool("read", {"file_path": asked, "force": True})
            assert not read.is_error, text_of(read)
            on_disk = os.fsencode(json.loads(line)) if line.startswith('"') else line.encode()
            with open(on_disk, "rb") as file:
                assert file.read().decode() in text_of(read).replace("     1\t", "") + "\n"
        for path in paths:  # the structured names, sent back, read files too
            assert not (await client.call_tool("read", {"file_path": path})).is_error


async def test_an_exact_name_holding_backslashes_names_itself(workspace: Path) -> None:
    """Only a name shown with a byte's escape is undone when sent back: a name of valid
    UTF-8 holding two backslashes, beside one holding one, is itself, read, written or
    moved, and a new name so spelled is made, never the sibling."""
    (workspace / "a\\\\b.txt").write_text("two backslashes\n")
    (workspace / "a\\b.txt").write_text("one backslash\n")
    (workspace / "x\\y.txt").write_text("user's file\n")
    args = ["--root", str(workspace), "--standalone"]
    async with stdio_client(args, mcp_env(private_runtime_dir())) as client:
        read = await client.call_tool("read", {"file_path": "a\\\\b.txt", "force": True})
        assert "two backslashes" in text_of(read)
        assert not (await client.call_tool("read", {"file_path": "x\\y.txt"})).is_error
        new = {"file_path": "x\\\\y.txt", "content": "agent's new file\n"}
        assert not (await client.call_tool("write", new)).is_error
    assert (workspace / "x\\y.txt").read_text() == "user's file\n"
    assert (workspace / "x\\\\y.txt").read_text() == "agent's new file\n"


async def test_a_read_through_a_link_to_a_name_not_utf8_answers(workspace: Path) -> None:
    """The read answers with the path the link leads to: on the quick path (a plain
    read after the SDK has served a call) as on the SDK's."""
    _tree(workspace)
    os.symlink(NAME, os.path.join(os.fsencode(workspace), b"link.txt"))
    args = ["--root", str(workspace), "--standalone"]
    async with stdio_client(args, mcp_env(private_runtime_dir())) as client:
        for _ in range(2):
            read = await client.call_tool("read", {"file_path": "link.txt", "force": True})
            assert not read.is_error, text_of(read)
            assert "needle" in text_of(read)
        assert not (await client.call_tool("stats", {})).is_error


async def test_a_read_file_renamed_to_a_name_not_utf8_is_told_and_the_server_lives_on(
    workspace: Path,
) -> None:
    (workspace / "a.txt").write_text("one\n")
    args = ["--root", str(workspace), "--standalone"]
    async with stdio_client(args, mcp_env(private_runtime_dir())) as client:
        assert not (await client.call_tool("read", {"file_path": "a.txt"})).is_error
        await until_watching(client)  # a rename it hears, not a file found gone
        os.rename(workspace / "a.txt", os.path.join(os.fsencode(workspace), b"\xe9t\xe9.txt"))

        async def told() -> str | None:
            shown = text_of(await client.call_tool("changes", {}))
            return None if "No changes to the files you read" in shown else shown

        assert "\\udce9t\\udce9.txt" in await eventually(told, "the move's notice")
        again = await client.call_tool("read", {"file_path": "a.txt"})
        assert again.is_error
        assert "kind: not_found" in text_of(again)
        assert not (await client.call_tool("stats", {})).is_error


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("directory_tree", {"path": "."}),
        ("list_directory", {"path": "."}),
        ("list_directory_with_sizes", {"path": "."}),
        ("search_files", {"path": ".", "pattern": "*.txt"}),
        ("read_text_file", {"path": "\xfe.txt"}),
    ],
)
async def test_the_drop_in_names_a_file_not_utf8_and_lives_on(
    workspace: Path, tool: str, arguments: dict[str, Any]
) -> None:
    _tree(workspace)
    arguments = {**arguments, "path": str(workspace / arguments["path"])}
    args = ["--root", str(workspace), "--standalone", "--tools", "filesystem"]
    async with stdio_client(args, mcp_env(private_runtime_dir())) as client:
        shown = text_of(await client.call_tool(tool, arguments))
        assert SHOWN in shown, shown
        alive = await client.call_tool("list_allowed_directories", {})
        assert not alive.is_error
