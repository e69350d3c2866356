"""The MCP `read_many` tool end to end (the SDK client, a real `readkeeper mcp`): several
files in one call, each as `read` answers it, through the same core as LSP
`readkeeper/readMany` (its structured result is readMany's result)."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import tiktoken_count
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
            "read_many", {"file_paths": ["big.txt"], "budget_tokens": 120, "force": True}
        )
        said = text_of(tight)
        assert "big.txt: refused (token_limit)" in said
        assert 'the read tool with {"file_path":' in said
        assert "readkeeper/" not in said
        bad = await client.call_tool("read_many", {"file_paths": []})
        assert error_kind(bad) == "bad_params"


async def test_a_spent_budget_bounds_what_is_sent_and_names_tools(workspace: Path) -> None:
    """Attack round 23's F7: 40 files under budget_tokens 500 sent ~1,700 tokens of
    refusals saying "more than the -1017 left", and each structured error named its next
    call as `readkeeper/read` (the LSP method). Round 15's A10: the headers, refusals,
    note and last line are spent too (the whole text is within the budget)."""
    names = [f"f{i:02}.txt" for i in range(40)]
    for name in names:
        (workspace / name).write_text("word " * 50 + "\n")
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        answer = await client.call_tool("read_many", {"file_paths": names, "budget_tokens": 1200})
    said = text_of(answer)
    structured = answer.structured_content
    assert isinstance(structured, dict)
    results = structured["results"]
    assert [r["file_path"] for r in results] == names
    assert tiktoken_count(said) <= 1200, said
    assert structured["budget_tokens_left"] == 1200 - tiktoken_count(said), said
    assert sum("result" in r for r in results) >= 1, said  # the budget still reads files
    assert re.search(r"(?:^|\s)-\d", said) is None, said  # no negative number in words
    assert "readkeeper/" not in said
    assert "readkeeper/" not in structured["note"]
    assert "the read tool with" in structured["note"]
    assert f"note: {structured['note']}" in said


async def test_an_entrys_way_on_is_the_read_of_its_file(workspace: Path) -> None:
    # read_many takes no offset: a cut entry's "Continue with offset=2001" named an option
    # of a call the agent had not made. Each entry's way on is now the read of its file.
    (workspace / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 3001)))
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        first = await client.call_tool("read_many", {"file_paths": ["long.txt"]})
        call = 'the read tool with {"file_path": "long.txt", "offset": 2001}'
        header, *_, note = text_of(first).split("\n")
        assert header.endswith(f"the rest: {call}"), header
        assert call in note, note
        rest = await client.call_tool("read", {"file_path": "long.txt", "offset": 2001})
        assert "line 3000" in text_of(rest)
        again = await client.call_tool("read_many", {"file_paths": ["long.txt"]})
        said = text_of(again)
        assert 'the read tool with {"file_path": "long.txt", "force": true}' in said, said
        assert "force=true" not in said
