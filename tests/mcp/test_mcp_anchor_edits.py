"""Anchored reads and anchor edits through `readkeeper mcp` with the SDK's client: the
tools' schemas describe the new fields, and their refusals are tool errors."""

from __future__ import annotations

from pathlib import Path

from mcp_helpers import call, error_kind, mcp_env, private_runtime_dir, stdio_client
from readkeeper.read.anchors import anchor

SOURCE = "a = 1\nb = 2\nc = 3\n"


async def test_anchor_edits_over_mcp(workspace: Path) -> None:
    path = workspace / "a.py"
    path.write_text(SOURCE)
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--root", str(workspace)], env) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        properties = tools["edit"].input_schema["properties"]
        assert properties["anchor_edits"]["items"]["required"] == ["op", "start"]
        assert "anchor" in properties["anchor_edits"]["description"]
        assert "line_format" in tools["read"].input_schema["properties"]
        await call(client, "read", file_path="a.py", line_format="anchors")
        result = await call(
            client,
            "edit",
            file_path="a.py",
            anchor_edits=[{"op": "delete", "start": anchor(1, "a = 1")}],
        )
        assert result["replacements"] == 1
        assert path.read_text() == "b = 2\nc = 3\n"
        refused = await client.call_tool(
            "edit",
            {"file_path": "a.py", "anchor_edits": [{"op": "delete", "start": "b2"}]},
        )
        assert refused.is_error
        assert error_kind(refused) == "bad_params"
        assert path.read_text() == "b = 2\nc = 3\n"
