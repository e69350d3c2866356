"""A file with more symbols than an outline lists (outline_symbol.MAX_SYMBOLS, 20,000),
read by symbol over MCP (attack round 27, A7). A `# target` heading after 20,001 `# g`
headings was "No symbol "target" ..., and none with a similar name", candidates []: the
walk had stopped at 20,000 symbols and nothing said so; 60,000 `# g` headings were "20,000
symbols are named "g"". Now the refusal says where the outline stopped and names the
search for the name asked (a real call, which finds it) and the read that goes on from
there; every count of a cut outline says "at least"."""

from __future__ import annotations

import json
import re
from pathlib import Path

from mcp_helpers import call, core_client, text_of

CAP = 20_000


def _headings(workspace: Path, name: str, count: int, last: str | None = None) -> str:
    text = "# g\n" * count + (f"# {last}\n" if last else "")
    (workspace / name).write_text(text)
    return str(workspace / name)


def _calls(text: str) -> list[tuple[str, dict[str, object]]]:
    """The calls a message names, as `the TOOL tool with {...}`."""
    found = []
    for match in re.finditer(r"the (\w+) tool with (\{.*?\})(?=\)|\.|,| or )", text):
        found.append((match.group(1), json.loads(match.group(2))))
    return found


async def test_a_symbol_past_the_cap_is_not_said_to_be_absent(workspace: Path) -> None:
    path = _headings(workspace, "cap.md", CAP + 1, last="target")
    async with core_client(workspace) as client:
        refused = await client.call_tool("read", {"file_path": path, "symbol": "target"})
        said = text_of(refused)
        assert refused.is_error
        assert "kind: not_found" in said
        assert "none with a similar name" in said  # among the symbols listed...
        assert f"among the first {CAP:,} symbols" in said  # ...which are not all
        assert f"the last starts at line {CAP:,}" in said
        assert "<the symbol" not in said  # a real call, with the name asked for
        calls = dict(_calls(said))
        assert calls["grep"] == {"pattern": "target", "path": path}
        assert calls["read"] == {"file_path": path, "offset": CAP, "limit": 500}
        # Each named call, made as it says, finds the heading.
        found = await call(client, "grep", **calls["grep"])
        assert [m["line"] for m in found["matches"]] == [CAP + 2], found
        read = await client.call_tool("read", calls["read"])
        assert not read.is_error, text_of(read)
        assert f"{CAP + 2}\t# target" in text_of(read), text_of(read)


async def test_counts_of_a_cut_outline_say_at_least(workspace: Path) -> None:
    path = _headings(workspace, "many.md", 3 * CAP)
    async with core_client(workspace) as client:
        first = (await call(client, "read", file_path=path, symbol="g"))["file"]
        assert first["note"].startswith(f'At least {CAP:,} symbols are named "g"'), first["note"]
        assert "symbols from that line on may be left out" in first["note"]
        past = await client.call_tool("read", {"file_path": path, "symbol": f"g[{3 * CAP}]"})
        said = text_of(past)
        assert past.is_error
        assert "kind: not_found" in said
        assert f'is none of the first {CAP:,} symbols named "g"' in said
        assert f"the file's first {CAP:,} symbols only" in said
        outline = (await call(client, "read", file_path=path))["file"]
        assert f"the file's first {CAP:,} symbols only" in outline["note"]
        # The outline's head counts them as a lower bound too (it said "768 of 20000").
        head = text_of(await client.call_tool("read", {"file_path": path, "session": "head"}))
        head = head.split("\n")[0]
        assert f" of at least {CAP:,} symbols, " in head, head


async def test_an_outline_under_the_cap_says_nothing_of_it(workspace: Path) -> None:
    path = _headings(workspace, "few.md", 3000, last="target")
    async with core_client(workspace) as client:
        first = (await call(client, "read", file_path=path, symbol="g"))["file"]
        assert first["note"].startswith('3,000 symbols are named "g"'), first["note"]
        head = text_of(await client.call_tool("read", {"file_path": path})).split("\n")[0]
        assert "at least" not in head, head
        refused = await client.call_tool("read", {"file_path": path, "symbol": "nosuch"})
        said = text_of(refused)
        assert "symbols only" not in said
        assert "first 20,000" not in said
        assert dict(_calls(said))["grep"] == {"pattern": "nosuch", "path": path}
