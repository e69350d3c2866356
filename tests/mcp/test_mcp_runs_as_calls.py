"""readkeeper's own MCP tools say a way on that changes the call just answered (a run of
options, hints.again) as that whole call, its other arguments kept: `the read tool with
{...}` (attack round 31, B4). A token_limit refusal said "Read fewer lines: offset=1,
limit=511." (the caller's line_format kept only implicitly, no tool, no file), a
symbol's not_found "Read one with offset=1, limit=6". Each way on here is followed as
written: the call it names gets the next part. A stub's `force=true resends` stays a run
(every stub says it: bench/bench_stub_words.py)."""

from __future__ import annotations

import re
from pathlib import Path

from mcp_helpers import core_client, dropin_client, error_kind, named_call, ok, text_of


def _wide(workspace: Path) -> Path:
    """A file of 2,400 lines of about 50 tokens each: over max_tokens read whole."""
    path = workspace / "-s.py"
    words = " ".join(f"w{n}" for n in range(24))
    path.write_text("".join(f"x_{i} = '{words}'\n" for i in range(2400)))
    return path


async def test_a_token_limit_refusal_names_the_read_with_fewer_lines(workspace: Path) -> None:
    _wide(workspace)
    async with core_client(workspace) as client:
        asked = {"file_path": "-s.py", "offset": 1, "line_format": "anchors"}
        # A range the caller chose (an offset alone is cut at the cap, not refused).
        refusal = await client.call_tool("read", {**asked, "limit": 2000})
        assert error_kind(refusal) == "token_limit"
        said = text_of(refusal)
        assert "offset=1" not in said, said
        fewer = named_call(said, "read")
        assert {k: fewer[k] for k in asked} == asked, fewer  # the caller's options kept
        assert set(fewer) == {*asked, "limit"}, fewer
        shown = await ok(client, "read", **fewer)
        first = shown.split("\n")[1]
        assert re.match(r"1[a-z]{2}\t", first), first  # anchors, as the caller asked
        assert f"lines 1-{fewer['limit']} of 2400" in shown, shown[:200]


async def test_a_cut_reads_header_names_the_same_read_on(workspace: Path) -> None:
    (workspace / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 3001)))
    async with core_client(workspace) as client:
        asked = {"file_path": "long.txt", "line_format": "anchors"}
        shown = await ok(client, "read", **asked)
        head = shown.split("\n")[0]
        assert "lines 1-2000 of 3000" in head, head
        assert "offset=" not in head, head
        rest = named_call(head, "read")
        assert rest == {**asked, "offset": 2001}, rest
        more = await ok(client, "read", **rest)
        assert "lines 2001-3000 of 3000" in more, more[:200]
        assert re.search(r"^2001[a-z]{2}\tline 2001$", more, re.M), more[:200]


async def test_a_symbol_not_found_names_reads_of_the_lines(workspace: Path) -> None:
    (workspace / "m.py").write_text("def alpha():\n    return 1\n\n\ndef beta():\n    return 2\n")
    async with core_client(workspace) as client:
        asked = {"file_path": "m.py", "symbol": "alpa", "force": True}
        refusal = await client.call_tool("read", asked)
        assert error_kind(refusal) == "not_found"
        said = text_of(refusal)
        assert not re.search(r"(?<![\w\"])(offset|symbol)=", said), said
        way = named_call(said, "read")
        assert way == {**asked, "symbol": "alpha"}, way
        shown = await ok(client, "read", **way)
        assert "def alpha" in shown, shown
        assert "def beta" not in shown, shown


async def test_a_grep_page_names_the_same_search_for_the_rest(workspace: Path) -> None:
    (workspace / "g.txt").write_text("".join(f"hit {i}\n" for i in range(6)))
    async with core_client(workspace) as client:
        asked = {"pattern": "hit", "max_matches": 2, "path": "g.txt"}
        shown = await ok(client, "grep", **asked)
        assert "offset=2" not in shown, shown
        rest = named_call(shown, "grep")
        assert rest == {**asked, "offset": 2}, rest
        more = await ok(client, "grep", **rest)
        assert "hit 2" in more, more
        assert "hit 1\n" not in more, more


async def test_a_stub_keeps_its_short_resend(workspace: Path) -> None:
    (workspace / "a.py").write_text("a = 1\n")
    async with core_client(workspace) as client:
        await ok(client, "read", file_path="a.py")
        stub = await ok(client, "read", file_path="a.py")
    assert stub.startswith("file_unchanged:"), stub
    assert stub.endswith("force=true resends."), stub


async def test_a_dropin_range_that_stops_before_the_end_names_the_rest(workspace: Path) -> None:
    # Round 31's U1: the drop-in's token_limit way on (`read_text_file` with offset and
    # head) showed its lines and said nothing of the thousands after them. The drop-in
    # cannot tell a head readkeeper named from the agent's own: a ranged read that stops
    # before the end says where it stopped and the call for the rest, always.
    (workspace / "f.txt").write_text("".join(f"l{i}\n" for i in range(1, 7001)))
    async with dropin_client(workspace) as client:
        asked = {"path": "f.txt", "offset": 2002, "head": 607}
        shown = await ok(client, "read_text_file", **asked)
        assert "l2002\n" in shown
        assert "l2609" not in shown
        assert "lines 2002-2608 of 7000" in shown, shown[-300:]
        rest = named_call(shown, "read_text_file")
        assert rest == {**asked, "offset": 2609}, rest
        more = await ok(client, "read_text_file", **rest)
        assert "l2609\n" in more, more[:100]
        # A range reaching the end says nothing more.
        end = await ok(client, "read_text_file", path="f.txt", offset=6990, head=50)
        assert "readkeeper:" not in end, end[-200:]
