"""Anchored reads and anchor edits through the real server over LSP, and the same over
MCP with the SDK's client: the front ends carry the new fields and refusals."""

from __future__ import annotations

from pathlib import Path

from conftest import Session
from mcp_helpers import call, error_kind, mcp_env, private_runtime_dir, stdio_client
from readkeeper.read.anchors import anchor

SOURCE = "a = 1\nb = 2\nc = 3\n"


async def test_anchor_edits_over_lsp(lsp: Session, workspace: Path) -> None:
    path = workspace / "a.py"
    path.write_text(SOURCE)
    read = await lsp.read(path, line_format="anchors")
    assert read["file"]["content"].split("\n")[1] == f"{anchor(2, 'b = 2')}\tb = 2"
    edited = await lsp.client.request(
        "readkeeper/edit",
        {
            "file_path": str(path),
            "anchor_edits": [
                {"op": "replace", "start": anchor(2, "b = 2"), "lines": ["b = 20"]},
                {"op": "insert_after", "start": anchor(3, "c = 3"), "lines": ["d = 4"]},
            ],
        },
    )
    assert path.read_text() == "a = 1\nb = 20\nc = 3\nd = 4\n"
    assert edited["lines"] == [2, 4]
    before = path.read_bytes()
    stale = await lsp.error(
        "readkeeper/edit",
        {"file_path": str(path), "anchor_edits": [{"op": "delete", "start": anchor(2, "b = 2")}]},
    )
    assert stale.data["kind"] == "stale"
    assert f"{anchor(2, 'b = 20')}\tb = 20" in stale.message
    mixed = await lsp.error(
        "readkeeper/edit",
        {
            "file_path": str(path),
            "old_string": "a",
            "new_string": "b",
            "edits": [{"old_string": "a", "new_string": "b"}],
        },
    )
    assert mixed.data["kind"] == "bad_params"
    batch = await lsp.client.request(
        "readkeeper/edit",
        {
            "file_path": str(path),
            "edits": [
                {"old_string": "a = 1", "new_string": "a = 10"},
                {"old_string": "d = 4", "new_string": "d = 40"},
            ],
        },
    )
    assert batch["replacements"] == 2
    assert before != path.read_bytes() == b"a = 10\nb = 20\nc = 3\nd = 40\n"


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
