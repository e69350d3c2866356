"""Over MCP, with the official SDK client, both tool sets: a path outside the roots, or
a link inside leading out, is answered from its text alone (files/reach.py). The answer
is the same whether anything is there or not; it never names where a link outside
points, a real path outside, nor a call that lists a folder outside; a kernel file that
cannot be looked into (`/proc/1/exe`) is outside like any other, never `stale`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mcp_helpers import dropin_client, mcp_env, private_runtime_dir, stdio_client, text_of

# A file, nothing, a folder, a FIFO, a link to a file, a link to nothing, something in
# a folder, something in nothing.
NAMES = ["secret.txt", "missing.txt", "dir", "fifo", "flink", "alink", "dir/x", "no/x"]
HIDDEN = "target-name-is-secret"  # where the dangling link outside points


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    (out / "dir").mkdir(parents=True)
    (out / "dir" / "x").write_text("x\n")
    (out / "secret.txt").write_text("secret\n")
    os.mkfifo(out / "fifo")
    (out / "flink").symlink_to(out / "secret.txt")
    (out / "alink").symlink_to(out / "dir" / HIDDEN)
    return out


def own_tools(path: str, inside: str) -> Iterator[tuple[str, dict[str, Any]]]:
    yield "read", {"file_path": path}
    yield "read_many", {"file_paths": [path]}
    yield "edit", {"file_path": path, "old_string": "a", "new_string": "b"}
    yield "write", {"file_path": path, "content": "x\n"}
    yield "grep", {"pattern": "secret", "path": path}
    yield "glob", {"pattern": "*", "path": path}
    yield "list", {"path": path}
    yield "attachments", {"mentions": [path], "types": ["file"]}
    yield "forget", {"paths": [path]}


def dropin_tools(path: str, inside: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for tool in ("read_file", "read_text_file", "read_media_file", "get_file_info"):
        yield tool, {"path": path}
    yield "read_multiple_files", {"paths": [path]}
    yield "write_file", {"path": path, "content": "x\n"}
    yield "edit_file", {"path": path, "edits": [{"oldText": "a", "newText": "b"}]}
    yield "create_directory", {"path": path}
    for tool in ("list_directory", "list_directory_with_sizes", "directory_tree"):
        yield tool, {"path": path}
    yield "search_files", {"path": path, "pattern": "*"}
    yield "move_file", {"source": path, "destination": inside + ".moved"}
    yield "move_file", {"source": inside, "destination": path}


async def answer(client: Client, tool: str, arguments: dict[str, Any], *said: str) -> str:
    result = await client.call_tool(tool, arguments)
    text = text_of(result) + json.dumps(result.structured_content, sort_keys=True)
    for number, words in sorted(enumerate(said), key=lambda n: -len(n[1])):
        if words:
            text = text.replace(words, f"<{number}>")
    return f"error={result.is_error} {text}"


async def same_answers(
    client: Client, uses: Any, paths: dict[str, str], inside: str, skip: str = ""
) -> list[str]:
    """Each tool's answer for every path (`paths`: a path, and the text a link there
    has), checked to be one answer; all of them."""
    seen = []
    for index, (tool, _) in enumerate(uses("", inside)):
        if tool == skip:
            continue
        answers = set()
        for path, text in paths.items():
            arguments = list(uses(path, inside))[index][1]
            answers.add(await answer(client, tool, arguments, path, text))
        assert len(answers) == 1, (tool, answers)
        seen.append(answers.pop())
    return seen


def never_beyond(answers: list[str], outside: Path) -> None:
    for said in answers:
        assert HIDDEN not in said
        assert "real path" not in said
        assert "real_path" not in said
        assert str(outside) not in said  # not the folder either: no listing offered there


async def test_paths_outside_and_links_out_over_both_tool_sets(
    workspace: Path, outside: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    inside = str(workspace / "a.txt")
    by_text = {str(outside / name): "" for name in NAMES}
    links = {"to-file": "secret.txt", "to-nothing": "missing.txt", "to-fifo": "fifo"}
    for name, target in links.items():
        (workspace / name).symlink_to(outside / target)
    through = {str(workspace / n): str(outside / t) for n, t in links.items()}
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        answers = await same_answers(client, own_tools, by_text, inside)
        assert all("outside_workspace" in a for a in answers if a.startswith("error=True"))
        never_beyond(answers, outside)
        never_beyond(await same_answers(client, own_tools, through, inside), outside)
        for path in ("/proc/1/exe", "/proc/self/exe", "/proc/self/fd/0", "/etc/shadow"):
            result = await client.call_tool("read", {"file_path": path})
            assert result.is_error
            assert result.structured_content["error"]["data"]["kind"] == "outside_workspace"
            assert "real" not in text_of(result)
    async with dropin_client(workspace) as client:
        answers = await same_answers(client, dropin_tools, by_text, inside)
        never_beyond(answers, outside)
        assert all("kind: outside_workspace" in a for a in answers if a.startswith("error=True"))
        # (move_file takes a link itself, never what it leads to)
        links_out = await same_answers(client, dropin_tools, through, inside, "move_file")
        never_beyond(links_out, outside)
        allowed = text_of(await client.call_tool("list_allowed_directories", {}))
        assert allowed == f"Allowed directories:\n{workspace}"
    assert (workspace / "a.txt").read_text() == "alpha\n"
