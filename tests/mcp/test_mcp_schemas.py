"""What tools/list tells the agent: every parameter of every tool described (nested ones
too), line numbers that start at 1, and the edit tool's required arguments."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mcp_helpers import mcp_env, private_runtime_dir, stdio_client


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
