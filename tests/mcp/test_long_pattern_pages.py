"""A grep page keeps to `max_tokens` as sent whatever the pattern's length: every page
repeats the call's own pattern (and glob, path) twice, in its note's way on (the whole
call, changed) and in its `next` call, and that room is counted from the params
(search/priced.py `reserve`, `COPIES`). A pattern whose tokens pass a quarter of
max_tokens is refused `bad_params` before any search, naming its size and the most.
Before (attack round 32, A10): `(needle|<16,000 CJK characters>)` was accepted at the
default cap of 25,000 and each page showed one match in 37,837 tokens of text and 37,873
of structured content; at a cap of 3,000 a 10,000-character pattern gave 19,237-token
pages. Checked with the official SDK client, counted with tiktoken on what is received."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers import tiktoken_count
from mcp_helpers import mcp_env, private_runtime_dir, stdio_client, text_of
from readkeeper import calls, quoting
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.search import priced

CAP = 3000


def cjk(count: int) -> str:
    return "".join(chr(0x4E00 + (i * 37) % 20000) for i in range(count))


def fill(workspace: Path) -> None:
    for index in range(300):
        # Long lines: few to a page, so the page's own estimates leave no slack.
        line = "needle " + " ".join(f"w{index}x{j}" for j in range(40))
        (workspace / f"f{index:03d}.txt").write_text((line + "\n") * 20)


def sent(structured: Any) -> int:
    return tiktoken_count(json.dumps(structured, ensure_ascii=False, separators=(",", ":")))


def under_a_quarter(cap: int) -> str:
    """A pattern of nearly a quarter of `cap` tokens (as shown), which is allowed."""
    size = 10
    while tiktoken_count(quoting.name("(needle|" + cjk(size + 10) + ")")) <= cap // 4 - 20:
        size += 10
    return "(needle|" + cjk(size) + ")"


@pytest.mark.parametrize("output", ["matches", "files", "counts"])
async def test_a_long_patterns_pages_keep_to_max_tokens_as_sent(
    workspace: Path, output: str
) -> None:
    fill(workspace)
    pattern = under_a_quarter(CAP)
    env = mcp_env(private_runtime_dir(), READKEEPER_MAX_TOKENS=str(CAP))
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        arguments: dict[str, Any] = {"pattern": pattern, "output": output, "max_matches": 2000}
        for _ in range(3):  # the first pages, each followed by its own `next`
            result = await client.call_tool("grep", arguments)
            said = text_of(result)
            assert not result.is_error, said[:300]
            assert "cut by the token cap (max_tokens)" in said, said[-300:]
            assert tiktoken_count(said) <= CAP, (output, tiktoken_count(said))
            structured = result.structured_content or {}
            assert sent(structured) <= CAP, (output, sent(structured))
            arguments = structured["next"]


async def test_a_pattern_over_a_quarter_of_max_tokens_is_refused_naming_its_size(
    workspace: Path,
) -> None:
    fill(workspace)
    pattern = "(needle|" + cjk(10_000) + ")"
    size = tiktoken_count(quoting.name(pattern))
    env = mcp_env(private_runtime_dir(), READKEEPER_MAX_TOKENS=str(CAP))
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        for output in ("matches", "files"):
            result = await client.call_tool("grep", {"pattern": pattern, "output": output})
            said = text_of(result)
            assert result.is_error, said[:300]
            assert "kind: bad_params" in said, said[-300:]
            assert f"pattern is {size:,} tokens" in said, said[:300]
            assert f"at most {CAP // 4:,}" in said, said[:300]
            assert tiktoken_count(said) <= 200, said[:300]
        # glob alike: a pattern its pages repeat, held to the same share.
        result = await client.call_tool("glob", {"pattern": "{f*," + cjk(4000) + "}"})
        said = text_of(result)
        assert result.is_error, said[:300]
        assert "kind: bad_params" in said, said[:300]
        assert f"at most {CAP // 4:,}" in said, said[:300]


async def test_a_long_glob_pattern_and_a_long_path_keep_to_max_tokens(workspace: Path) -> None:
    """glob's and list's pages repeat their pattern and path too (held before: glob's
    note cuts a long pattern; checked here with the longest allowed)."""
    folder = workspace / cjk(80)
    folder.mkdir()
    for index in range(300):
        (folder / f"f{index:03d}.txt").write_text("x\n")
    env = mcp_env(private_runtime_dir(), READKEEPER_MAX_TOKENS=str(CAP))
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        # The pattern and the path together at most a quarter of the cap (priced.py).
        room = CAP - 4 * (tiktoken_count(quoting.name(str(folder))) + 10)
        glob_pattern = under_a_quarter(room).replace("(needle|", "{f*,").replace(")", "}")
        for tool, arguments in (
            ("glob", {"pattern": glob_pattern, "path": str(folder)}),
            ("list", {"path": str(folder)}),
        ):
            result = await client.call_tool(tool, arguments)
            said = text_of(result)
            assert not result.is_error, said[:300]
            assert "cut by the token cap (max_tokens)" in said, said[-300:]
            assert tiktoken_count(said) <= CAP, (tool, tiktoken_count(said))
            assert sent(result.structured_content) <= CAP, tool


async def test_a_normal_patterns_default_page_is_unchanged(workspace: Path) -> None:
    fill(workspace)
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        result = await client.call_tool("grep", {"pattern": "needle"})
        said = text_of(result)
        assert (result.structured_content or {})["num_matches"] == 100, said[-300:]
        assert "Showing matches 1-100 of 6000, cut by the default page" in said, said[-300:]


def test_the_core_sets_aside_each_copy_of_the_pattern_and_refuses_past_a_quarter(
    core: Readkeeper, workspace: Path
) -> None:
    fill(workspace)
    pattern = "(needle|" + cjk(600) + ")"
    once = core.tokens.count(quoting.name(pattern))
    assert priced.reserve(core, pattern) == priced.PAGE_TOKENS + 2 * once
    cap = core.settings.max_tokens
    too_long = "(needle|" + cjk(8000) + ")"
    with pytest.raises(ReadkeeperError) as refused:
        calls.call(core, "grep", {"pattern": too_long})
    assert refused.value.kind == "bad_params"
    assert refused.value.data["field"] == "pattern"
    assert refused.value.data["most_tokens"] == cap // 4
    assert refused.value.data["tokens"] > cap // 4


async def test_a_path_over_a_quarter_of_max_tokens_is_refused_naming_it(workspace: Path) -> None:
    """A one-entry page of a folder whose path alone was 342 tokens came to 1,036 at a
    cap of 600 (outside round 33): a path is repeated like a pattern, and refused the
    same way, naming the path and a way to a shorter one."""
    folder = workspace / cjk(70) / cjk(71) / cjk(72)
    folder.mkdir(parents=True)
    (folder / "a.txt").write_text("x\n")
    env = mcp_env(private_runtime_dir(), READKEEPER_MAX_TOKENS="600")
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        for tool, arguments in (
            ("list", {"path": str(folder)}),
            ("glob", {"pattern": "*.txt", "path": str(folder)}),
            ("grep", {"pattern": "x", "path": str(folder)}),
        ):
            result = await client.call_tool(tool, arguments)
            said = text_of(result)
            assert result.is_error, (tool, said[:300])
            assert said.startswith("path is "), said[:300]
            assert "a folder above it" in said, said


@pytest.mark.parametrize("method", ["grep", "glob", "list"])
def test_a_session_name_costing_over_a_quarter_is_refused(workspace: Path, method: str) -> None:
    """A session of 256 tag characters (escaped, over 1,000 tokens) made one-entry pages
    of 4,377 tokens at a cap of 2,000 (round 34): each page repeats it in its calls."""
    (workspace / "a.txt").write_text("x\n")
    core = Readkeeper(roots=[str(workspace)], client_settings={"max_tokens": 2000})
    params = {"pattern": "*.txt" if method == "glob" else "x", "session": "\U000e0041" * 256}
    with pytest.raises(ReadkeeperError) as refused:
        calls.call(core, method, params if method != "list" else {"session": params["session"]})
    assert refused.value.data["field"] == "session", refused.value.message
    assert 'short id, e.g. "chat-1"' in refused.value.message
    core.close()


async def test_exclude_patterns_count_with_the_values_a_page_repeats(workspace: Path) -> None:
    """256 long exclude patterns made one-entry pages of 64,609 tokens at the default
    cap (outside round 35): each page repeats them in its calls, like its pattern and
    path. Past a quarter of max_tokens together they are refused naming exclude; under
    it the pages keep to the cap as sent."""
    for index in range(300):
        (workspace / f"f{index:03d}.txt").write_text("x\n")
    many = [f"never/{cjk(30)}/{index}/**" for index in range(256)]
    few = many[:8]
    env = mcp_env(private_runtime_dir(), READKEEPER_MAX_TOKENS=str(CAP))
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        for tool, arguments in (("glob", {"pattern": "*.txt"}), ("list", {})):
            refused = await client.call_tool(tool, {**arguments, "exclude": many})
            said = text_of(refused)
            assert refused.is_error, said[:300]
            assert said.startswith("exclude is "), said[:300]
            assert "fewer or shorter exclude patterns" in said, said
            result = await client.call_tool(tool, {**arguments, "exclude": few})
            said = text_of(result)
            assert not result.is_error, said[:300]
            assert "cut by the token cap (max_tokens)" in said, said[-300:]
            assert tiktoken_count(said) <= CAP, (tool, tiktoken_count(said))
            assert sent(result.structured_content) <= CAP, tool
