"""The MCP `read_many` tool end to end (the SDK client, a real `readkeeper mcp`): several
files in one call, each as `read` answers it, through the same core as LSP
`readkeeper/readMany` (its structured result is readMany's result)."""

from __future__ import annotations

from pathlib import Path

from mcp_helpers import error_kind, mcp_env, private_runtime_dir, stdio_client, text_of


async def test_read_many_reads_stubs_refuses_and_budgets(workspace: Path) -> None:
    (workspace / "a.py").write_text("alpha = 1\n")
    (workspace / "b.py").write_text("beta = 2\n")
    (workspace / "big.txt").write_text("word " * 4000 + "\n")
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        first = await client.call_tool("read_many", {"file_paths": ["a.py", "b.py", "nope.py"]})
        assert not first.is_error
        shown = text_of(first)
        assert "alpha = 1" in shown
        assert "beta = 2" in shown
        assert "nope.py: refused (not_found)" in shown
        structured = first.structured_content
        assert isinstance(structured, dict)
        results = structured["results"]
        assert [r["file_path"] for r in results] == ["a.py", "b.py", "nope.py"]
        assert results[0]["result"]["type"] == "text"
        assert "content" not in results[0]["result"]["file"]  # the text travels once
        assert results[2]["error"]["data"]["kind"] == "not_found"
        # Each file keeps its own stub rule: read again, both are stubs.
        again = await client.call_tool("read_many", {"file_paths": ["a.py", "b.py"]})
        kinds = [r["result"]["type"] for r in again.structured_content["results"]]  # type: ignore[index]
        assert kinds == ["file_unchanged", "file_unchanged"]
        # One budget for the whole call: what no longer fits is left unread, with the way.
        tight = await client.call_tool(
            "read_many", {"file_paths": ["big.txt"], "budget_tokens": 100, "force": True}
        )
        said = text_of(tight)
        assert "big.txt: refused (token_limit)" in said
        assert 'the read tool with {"file_path":' in said
        assert "readkeeper/" not in said
        bad = await client.call_tool("read_many", {"file_paths": []})
        assert error_kind(bad) == "bad_params"
