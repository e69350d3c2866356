"""Over MCP, as over LSP: a tool refuses a parameter it does not have, naming it and the
one that does its job; `list` without a path lists the root, as its schema says; grep's
refusal names the one field that is wrong (attack round 9, finding 5)."""

from __future__ import annotations

from pathlib import Path

from mcp_helpers import call, error_kind, mcp_env, private_runtime_dir, stdio_client, text_of


async def test_tools_refuse_unknown_parameters_and_name_the_right_ones(workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\ntwo\nthree\n")
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        head = await client.call_tool("read", {"file_path": "a.txt", "head": 1})
        assert error_kind(head) == "bad_params"
        assert head.structured_content is not None
        data = head.structured_content["error"]["data"]
        assert (data["field"], data["instead"]) == ("head", "limit")
        assert "limit" in text_of(head)
        listed = await call(client, "list")
        assert [entry["name"] for entry in listed["entries"]] == ["a.txt"]
        zero = await client.call_tool("grep", {"pattern": "one", "max_matches": 0})
        assert error_kind(zero) == "bad_params"
        assert zero.structured_content is not None
        assert zero.structured_content["error"]["data"]["field"] == "max_matches"
        assert "offset" not in text_of(zero).split("kind:")[0]
        # The contract's optional fields still pass.
        read = await call(client, "read", file_path="a.txt", session="s", limit=1)
        assert read["file"]["num_lines"] == 1
