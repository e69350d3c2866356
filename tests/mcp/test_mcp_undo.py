"""The `undo` tool of `readkeeper mcp`, with the SDK's client."""

from __future__ import annotations

from pathlib import Path

from mcp_helpers import call, error_kind, mcp_env, private_runtime_dir, stdio_client


async def test_undo_tool_over_mcp(workspace: Path) -> None:
    path = workspace / "a.py"
    path.write_text("a = 1\n")
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--root", str(workspace)], env) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "stale" in (tools["undo"].description or "")
        await call(client, "read", file_path="a.py")
        await call(client, "write", file_path="a.py", content="a = 2\n")
        result = await call(client, "undo")
        assert result["undone"] == "write"
        assert path.read_text() == "a = 1\n"
        again = await client.call_tool("undo", {})
        assert again.is_error
        assert error_kind(again) == "no_change"
