"""What tools/list tells the agent: every parameter of every tool described (nested ones
too), line numbers that start at 1, and the edit tool's required arguments."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mcp_helpers import mcp_env, private_runtime_dir, stdio_client
from readkeeper.read.room import ANSWER_MAX_CHARS


def parameters(schema: dict[str, Any], where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every property of `schema`, nested ones too, with its dotted name."""
    for name, prop in (schema.get("properties") or {}).items():
        yield f"{where}.{name}", prop
        yield from parameters(prop, f"{where}.{name}")
        yield from parameters(prop.get("items") or {}, f"{where}.{name}[]")


async def listed(workspace: Path) -> dict[str, dict[str, Any]]:
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        return {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}


async def test_every_parameter_of_every_tool_has_a_description(workspace: Path) -> None:
    tools = await listed(workspace)
    undescribed = [
        name
        for tool, schema in tools.items()
        for name, prop in parameters(schema, tool)
        if not prop.get("description")
    ]
    assert undescribed == []


async def test_line_numbers_start_at_one_and_edit_says_what_it_needs(workspace: Path) -> None:
    tools = await listed(workspace)
    read = tools["read"]["properties"]
    assert read["offset"]["minimum"] == 1
    assert read["limit"]["minimum"] == 1
    edit = tools["edit"]
    # A text edit needs old_string and new_string; a notebook cell edit, cell_id or
    # new_source instead: each way is one set of required arguments.
    # (or files, several files in one call, each entry with its own file_path).
    assert "required" not in edit
    assert {"required": ["file_path", "old_string", "new_string"]} in edit["anyOf"]
    assert {"required": ["files"]} in edit["anyOf"]
    assert all(
        "file_path" in way["required"] or way["required"] == ["files"] for way in edit["anyOf"]
    )


async def test_the_tools_that_send_files_text_declare_their_result_size_to_claude_code(
    workspace: Path,
) -> None:
    # Claude Code saves a tool result over 50,000 characters to a file, and the agent
    # then reads that with its own Read tool, past readkeeper, unless the tool declares
    # more (`_meta["anthropic/maxResultSizeChars"]`, at most 500,000). A cut read of
    # 25,000 tokens of code is over 80,000 characters.
    large = {"read", "read_many", "grep", "glob", "list", "attachments", "stats"}
    dropin_large = {
        "read_file",
        "read_text_file",
        "read_multiple_files",
        "list_directory",
        "list_directory_with_sizes",
        "directory_tree",
        "search_files",
    }
    for tools, expected in (([], large), (["--tools", "filesystem"], dropin_large)):
        env = mcp_env(private_runtime_dir())
        args = ["--root", str(workspace), "--standalone", *tools]
        async with stdio_client(args, env) as client:
            listed = (await client.list_tools()).tools
        declared = {
            tool.name
            for tool in listed
            # what readkeeper holds every answer to (mcp/tools.py declares it as a literal)
            if (tool.meta or {}).get("anthropic/maxResultSizeChars") == ANSWER_MAX_CHARS
        }
        assert declared == expected, declared ^ expected
    (workspace / "wide.py").write_text("".join(f"value_{i} = {i}  # a line\n" for i in range(9000)))
    async with stdio_client(
        ["--root", str(workspace), "--standalone"], mcp_env(private_runtime_dir())
    ) as client:
        result = await client.call_tool("read", {"file_path": "wide.py", "force": True})
    sent = "".join(block.text for block in result.content if block.type == "text")
    assert 50_000 < len(sent) < 500_000, len(sent)  # why the read tool declares it
