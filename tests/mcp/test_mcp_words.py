"""Each front end's messages name its own calls: over MCP the tools (`the read tool`),
never the LSP method (`readkeeper/read`)."""

from __future__ import annotations

from pathlib import Path

from mcp_helpers import call, error_kind, mcp_env, private_runtime_dir, stdio_client, text_of


async def test_refusals_name_the_read_and_write_tools(workspace: Path) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        said = []
        edit = await client.call_tool(
            "edit", {"file_path": "a.py", "old_string": "x", "new_string": "y"}
        )
        assert error_kind(edit) == "not_read"
        said.append(text_of(edit))
        write = await client.call_tool("write", {"file_path": "a.py", "content": "y = 2\n"})
        assert error_kind(write) == "not_read"
        said.append(text_of(write))
        await call(client, "read", file_path="a.py")
        empty = await client.call_tool(
            "edit", {"file_path": "a.py", "old_string": "", "new_string": "z"}
        )
        assert error_kind(empty) == "bad_params"
        said.append(text_of(empty))
    for message in said:
        assert "readkeeper/" not in message, message
    assert "the read tool with" in said[0]
    assert "the read tool with" in said[1]
    assert "the write tool with" in said[2]
