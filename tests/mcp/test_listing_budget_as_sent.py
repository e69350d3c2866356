"""One budget for what a call sends, counted on what is sent: a listing of many long
hostile names (controls, quotes, backslashes, a bidirectional override: each escaped
when shown) stays within `max_tokens` as the client receives it, with a note naming the
call for the rest. Before, the cap counted the names as the file system holds them: with
1,000 such names the answers were 37,000 to 38,400 tokens for a cap of 25,000
(bench/bench_listing_budget.py). Checked with the official SDK client on the core's
tools and the drop-in's, counted with tiktoken on the text content."""

from __future__ import annotations

import json
from pathlib import Path

import mcp_types as types
import pytest

from helpers import eventually, tiktoken_count
from mcp_helpers import mcp_env, ok, private_runtime_dir, stdio_client, until_watching
from readkeeper.errors import MAX_CALL_NAME_CHARS, cut_name

CAP = 4000
ALLOWANCE = 200  # the closing note and the next call: a fixed size, whatever the names
FILES = 300


def hostile(index: int) -> str:
    """A name of 211 bytes whose every few characters are escaped when shown."""
    return f"{index:04d}" + '\x01 "\\\u202ex' * 25 + "abc.txt"


@pytest.fixture
def crowded(workspace: Path) -> Path:
    for index in range(FILES):
        (workspace / hostile(index)).write_text("x\n")
    return workspace


async def test_core_listings_as_sent_keep_to_max_tokens(crowded: Path) -> None:
    env = mcp_env(private_runtime_dir(), READKEEPER_MAX_TOKENS=str(CAP))
    async with stdio_client(["--root", str(crowded), "--standalone"], env) as client:
        for tool, args in (("glob", {"pattern": "**/*"}), ("list", {"path": "."})):
            said = await ok(client, tool, **args)
            assert tiktoken_count(said) <= CAP + ALLOWANCE, tool
            assert "cut by the token cap (max_tokens)" in said, tool
            assert f"the rest: the {tool} tool with {{" in said, tool


async def test_dropin_listings_as_sent_keep_to_max_tokens(crowded: Path) -> None:
    env = mcp_env(private_runtime_dir(), READKEEPER_MAX_TOKENS=str(CAP))
    args = ["--tools", "filesystem", "--standalone", "--root", str(crowded)]
    async with stdio_client(args, env) as client:
        for tool, extra in (
            ("list_directory", {}),
            ("list_directory_with_sizes", {}),
            ("directory_tree", {}),
            ("search_files", {"pattern": "**/*.txt"}),
        ):
            said = await ok(client, tool, path=str(crowded), **extra)
            assert tiktoken_count(said) <= CAP + ALLOWANCE, tool
            assert "cut by the token cap (max_tokens)" in said, tool


async def test_stats_history_as_sent_keeps_to_max_tokens(crowded: Path) -> None:
    """The journal keeps 5,000 calls: sent whole, stats' history of 2,000 reads of hostile
    names was 289,586 tokens for a cap of 25,000. Now the newest calls that fit, the
    number left out and a note saying where they all are."""
    env = mcp_env(private_runtime_dir(), READKEEPER_MAX_TOKENS=str(CAP))
    async with stdio_client(["--root", str(crowded), "--standalone"], env) as client:
        names = sorted(p.name for p in crowded.iterdir())[:60]
        for name in names:
            await ok(client, "read", file_path=str(crowded / name))
        result = await client.call_tool("stats", {"history": True})
        said = "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))
        assert tiktoken_count(said) <= CAP + ALLOWANCE
        history = (result.structured_content or {})["history"]
        assert history["cut"] > 0
        assert len(history["events"]) + history["cut"] >= len(names)
        assert "cut by the token cap (max_tokens)" in history["note"]
        assert history["events"][-1]["kind"] != ""  # the newest kept, the oldest left out


async def test_changes_as_sent_keep_to_their_total_cap(crowded: Path) -> None:
    """changes_total_max_tokens counts each notice as it is shown (its hostile name
    escaped, its diff's lines escaped and indented): before, 201 diffs were sent as
    11,191 tokens for a total cap of 8,000."""
    total = 2000
    env = mcp_env(private_runtime_dir(), READKEEPER_CHANGES_TOTAL_MAX_TOKENS=str(total))
    async with stdio_client(["--root", str(crowded), "--standalone"], env) as client:
        names = sorted(p.name for p in crowded.iterdir())[:60]
        for name in names:
            await ok(client, "read", file_path=str(crowded / name))
        await until_watching(client)
        for name in names:
            (crowded / name).write_text("".join(f"y{i} changed\n" for i in range(40)))
        reported: set[str] = set()
        cut = False

        async def all_told() -> bool:
            nonlocal cut
            result = await client.call_tool("changes", {})
            said = "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))
            assert tiktoken_count(said) <= total + ALLOWANCE
            found = (result.structured_content or {}).get("changes", [])
            reported.update(change["file_path"] for change in found)
            cut = cut or bool((result.structured_content or {}).get("remaining"))
            return len(reported) == len(names)

        await eventually(all_told, "every change told")
        assert cut


async def test_attachments_dropped_list_is_counted_within_budget_tokens(workspace: Path) -> None:
    """The `dropped` list is listed within what the budget has left, each entry counted
    as sent; the rest counted per type in readkeeper's own words (a fixed size each).
    Before, 20 missing hostile names listed about 3,300 tokens of drops whatever the
    budget."""
    budget = 300
    missing = [str(workspace / ("nope" + hostile(index))) for index in range(40)]
    async with stdio_client(
        ["--root", str(workspace), "--standalone"], mcp_env(private_runtime_dir())
    ) as client:
        result = await client.call_tool(
            "attachments", {"mentions": missing, "budget_tokens": budget}
        )
        said = "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))
        assert tiktoken_count(said) <= budget + ALLOWANCE
        dropped = (result.structured_content or {})["dropped"]
        listed = [d for d in dropped if d.get("source") is not None]
        counted = sum(d.get("count", 0) for d in dropped if d.get("source") is None)
        assert len(listed) + counted == len(missing)
        assert counted > 0


async def test_read_many_error_entry_keeps_the_path_as_asked_and_shows_it_cut_once(
    workspace: Path,
) -> None:
    """A refused entry's structured `file_path` is the caller's own string, whole up to
    what a call shows whole (errors.MAX_CALL_NAME_CHARS; entries follow the request's
    order), cut past it (round 40: echoed whole, of any length); the text shows it cut
    once (errors.shown_name), never a cut name cut again (its marker escaped)."""
    long = str(workspace / ("q" * 200) / ("r" * 3000 + ".txt"))
    args = ["--root", str(workspace), "--standalone"]
    async with stdio_client(args, mcp_env(private_runtime_dir())) as client:
        result = await client.call_tool("read_many", {"file_paths": [long]})
        said = "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))
        entry = (result.structured_content or {})["results"][0]
        assert entry["file_path"] == cut_name(long, MAX_CALL_NAME_CHARS)
        assert entry["file_path"].startswith(long[:100])
        assert "characters cut] … " in said
        assert "\\x5b" not in said  # no marker of a cut escaped by a second cut
        assert "r" * 1000 not in said


async def test_a_notebook_of_many_cells_is_sent_once(workspace: Path) -> None:
    """A notebook read's cells travel in its text only, as a text read's lines do: the
    structured result held them again (3,000 one-line cells: 15,030 tokens of text and
    30,851 of structured content, for a cap of 25,000)."""
    cells = [
        {"cell_type": "code", "id": f"c{i}", "metadata": {}, "outputs": []}
        | {"source": f"x{i} = {i}\n", "execution_count": None}
        for i in range(600)
    ]
    book = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (workspace / "many.ipynb").write_text(json.dumps(book))
    env = mcp_env(private_runtime_dir(), READKEEPER_MAX_TOKENS=str(CAP))
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        result = await client.call_tool("read", {"file_path": "many.ipynb"})
        said = "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))
        assert (
            "x599 = 599" in said
            or 'the read tool with {"file_path": "many.ipynb", "offset": ' in said
        )
        structured = json.dumps(result.structured_content, ensure_ascii=False)
        assert tiktoken_count(said) + tiktoken_count(structured) <= CAP + 2 * ALLOWANCE


async def test_attachments_headers_are_counted_within_budget_tokens(crowded: Path) -> None:
    """Each kept attachment's header names its source (a hostile name escaped): counted
    with its content. Before, 100 mentions of 3-line files with such names sent 10,076
    tokens for budget_tokens 2,000 (used_tokens 1,457: the contents alone)."""
    budget = 1000
    mentions = [str(crowded / hostile(index)) for index in range(60)]
    async with stdio_client(
        ["--root", str(crowded), "--standalone"], mcp_env(private_runtime_dir())
    ) as client:
        arguments = {"mentions": mentions, "budget_tokens": budget, "types": ["file"]}
        result = await client.call_tool("attachments", arguments)
        said = "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))
        assert tiktoken_count(said) <= budget + ALLOWANCE
        structured = result.structured_content or {}
        assert structured["used_tokens"] <= budget
        assert structured["attachments"]
        assert structured["dropped"]
