"""Each channel of a tool's answer keeps the call's budget on its own (mcp/facts.py):
hosts forward the text content, or the structured content, or both, so each is counted
as it is sent (tiktoken, the structured result as compact JSON) against the budget.

Before, the structured result repeated the text (a glob at max_tokens 25,000 sent 24,573
tokens of text and 24,587 more of structured content; changes at its cap of 8,000, 7,439
and 8,169; attachments at a budget of 2,000, 2,019 and 3,522). Now it holds the facts a
program needs (paths, kinds, sizes, counts, where the page stopped and the next offset,
cut and partial flags), not the line text, diffs or attachment bodies the model reads.
Checked with the official SDK client, on names that are hostile (controls, quotes, a
bidirectional override, bytes that are not UTF-8) and 255 bytes long."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from helpers import eventually, tiktoken_count
from mcp_helpers import mcp_env, private_runtime_dir, stdio_client, text_of, until_watching

CAP = 3000
CHANGES_CAP = 1500
ALLOWANCE = 200  # the text's closing note and next call, past its cap
FILES = 150


def hostile(index: int) -> str:
    """A name of 211 bytes whose every few characters are escaped when shown."""
    return f"{index:04d}" + '\x01 "\\\u202ex' * 25 + "abc.txt"


def structured_tokens(result: types.CallToolResult) -> int:
    """The structured content's tokens as the SDK sends it (compact JSON, UTF-8)."""
    sent = result.structured_content
    if sent is None:
        return 0
    return tiktoken_count(json.dumps(sent, ensure_ascii=False, separators=(",", ":")))


def both_within(result: types.CallToolResult, budget: int) -> dict[str, Any]:
    """Assert each channel within `budget` on its own; the structured result."""
    said = text_of(result)
    assert tiktoken_count(said) <= budget + ALLOWANCE, said[-300:]
    assert structured_tokens(result) <= budget, structured_tokens(result)
    assert isinstance(result.structured_content, dict)
    return result.structured_content


@pytest.fixture
def crowded(workspace: Path) -> Path:
    for index in range(FILES):
        (workspace / hostile(index)).write_text("x\n" * 3)
    for index in range(30):  # names of 255 bytes, the longest a file system takes
        (workspace / (f"{index:03d}" + "n" * 248 + ".txt")).write_text("x\n")
    raw = os.fsencode(workspace) + b"/bad\xff\xfe" + b"\x02" * 20 + b".txt"
    fd = os.open(raw, os.O_WRONLY | os.O_CREAT, 0o644)  # a name that is not UTF-8
    os.write(fd, b"x\n")
    os.close(fd)
    return workspace


def env() -> dict[str, str]:
    return mcp_env(
        private_runtime_dir(),
        READKEEPER_MAX_TOKENS=str(CAP),
        READKEEPER_CHANGES_TOTAL_MAX_TOKENS=str(CHANGES_CAP),
    )


async def test_listings_structured_within_max_tokens_and_pageable(crowded: Path) -> None:
    async with stdio_client(["--root", str(crowded), "--standalone"], env()) as client:
        for tool, args, field in (
            ("glob", {"pattern": "**/*"}, "paths"),
            ("list", {"path": "."}, "entries"),
            ("grep", {"pattern": "x", "max_matches": 2000}, "matches"),
            ("grep", {"pattern": "x", "output": "files", "max_matches": 2000}, "files"),
            ("grep", {"pattern": "x", "output": "counts", "max_matches": 2000}, "counts"),
        ):
            result = await client.call_tool(tool, args)
            structured = both_within(result, CAP)
            entries = structured[field]
            assert entries, (tool, args)
            assert structured["partial"] is True, (tool, args)
            # Where the structured page stopped, and the call for the rest of it.
            offset = structured["next"]["offset"]
            assert offset == len(entries), (tool, args)
            if "structured_cut" in structured:
                assert structured["structured_cut"]["offset"] == offset
            if field == "matches":  # the line is the text's: a match is where it is
                assert all("text" not in m and isinstance(m["line"], int) for m in entries)
                assert all(m["file_path"] for m in entries)
            if field == "entries":
                assert all("kind" in e and "name" in e for e in entries)
                assert any("size" in e for e in entries)
            rest = await client.call_tool(tool, {**args, "offset": offset})
            both_within(rest, CAP)


async def test_changes_structured_within_budget(crowded: Path) -> None:
    async with stdio_client(["--root", str(crowded), "--standalone"], env()) as client:
        await until_watching(client)
        names = sorted(p for p in crowded.iterdir() if p.name.startswith("00"))[:40]
        for path in names:
            await client.call_tool("read", {"file_path": str(path)})
        for path in names:
            path.write_text("".join(f"y{i} changed\n" for i in range(30)))
        sent: list[types.CallToolResult] = []

        async def reported() -> bool:  # the watcher's events, as they come
            sent.append(await client.call_tool("changes", {}))
            return bool((sent[-1].structured_content or {}).get("changes"))

        await eventually(reported, "the changes reported")
        for result in sent:
            changes = both_within(result, CHANGES_CAP)
        assert changes["changes"], changes
        for change in changes["changes"]:
            assert "diff" not in change  # the text shows it
            assert change["kind"]
            assert change["file_path"]


async def test_attachments_structured_within_budget(crowded: Path) -> None:
    """Before: 100 mentions at a budget of 2,000 sent 3,522 tokens of structured bodies."""
    async with stdio_client(["--root", str(crowded), "--standalone"], env()) as client:
        mentions = [str(p) for p in sorted(crowded.iterdir())[:100]]
        for budget in (2000, 300, 60):
            result = await client.call_tool(
                "attachments", {"mentions": mentions, "budget_tokens": budget}
            )
            attached = both_within(result, budget)
            assert "used_tokens" in attached
            for item in attached.get("attachments", []):
                assert "content" not in item  # the text shows it
                assert item["type"]
                assert "tokens" in item


async def test_read_many_structured_within_budget(crowded: Path) -> None:
    async with stdio_client(["--root", str(crowded), "--standalone"], env()) as client:
        paths = [str(p) for p in sorted(crowded.iterdir())[:40]]
        paths.append(str(crowded / "missing.txt"))
        for budget in (20000, 4500, 200):
            result = await client.call_tool(
                "read_many", {"file_paths": paths, "budget_tokens": budget}
            )
            structured = both_within(result, budget)
            if "error" in structured:  # too small for the refusals: nothing read
                continue
            results = structured["results"]
            assert any("result" in r for r in results), budget
            for entry in results:
                assert "file_path" in entry
                if "error" in entry:
                    assert "message" not in entry["error"]  # the text shows it
                    assert entry["error"]["data"]["kind"]
                else:
                    assert "content" not in entry["result"].get("file", {})


async def test_dropin_structured_within_budget(crowded: Path) -> None:
    args = ["--tools", "filesystem", "--standalone", "--root", str(crowded)]
    async with stdio_client(args, env()) as client:
        for tool, arguments in (
            ("list_directory", {"path": str(crowded)}),
            ("list_directory_with_sizes", {"path": str(crowded)}),
            ("directory_tree", {"path": str(crowded)}),
            ("search_files", {"path": str(crowded), "pattern": "**/*.txt"}),
            ("read_multiple_files", {"paths": [str(crowded / hostile(0)), "nope"]}),
            ("read_text_file", {"path": str(crowded / "missing" / hostile(1))}),
        ):
            result = await client.call_tool(tool, arguments)
            assert tiktoken_count(text_of(result)) <= CAP + ALLOWANCE, tool
            assert structured_tokens(result) <= CAP, tool
