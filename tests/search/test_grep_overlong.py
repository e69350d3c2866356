"""A match on a line too long to hold (over a mebibyte of ripgrep's output: a minified
file's one line) is never left out without a word (search/overlong.py): the answer is
partial, and its note names the first such line and the read that shows it. Round 41:
a 1.1 MB line holding `eval(EVIL_PAYLOAD)` was hidden, the answer "No matches." and
not partial, while `output: counts` counted the match."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_helpers import call, mcp_env, named_call, private_runtime_dir, stdio_client, text_of
from readkeeper.search import rg_output

MINIFIED = b"var a=1;" + b" " * (1100 * 1024) + b"eval(EVIL_PAYLOAD)\n"


def _client(workspace: Path):  # type: ignore[no-untyped-def]
    return stdio_client(["--root", str(workspace), "--standalone"], mcp_env(private_runtime_dir()))


@pytest.mark.parametrize("multiline", [False, True])
async def test_a_match_on_an_overlong_line_is_said_and_named(
    workspace: Path, multiline: bool
) -> None:
    # Plain output (blocks.py) and JSON (multiline) alike.
    (workspace / "min.js").write_bytes(MINIFIED + b"console.log('EVIL_PAYLOAD note')\n")
    async with _client(workspace) as client:
        structured = await call(
            client, "grep", pattern="EVIL_PAYLOAD", path="min.js", multiline=multiline
        )
        assert structured["partial"] is True
        assert [m["line"] for m in structured["matches"]] == [2]
        note = structured["note"]
        assert "1 matching line too long to hold (about a mebibyte or more) was left out" in note
        assert "the first is line 1 of" in note
        shown = await client.call_tool("read", named_call(note, "read"))
        assert not shown.is_error, text_of(shown)
        assert "var a=1;" in text_of(shown)


@pytest.mark.parametrize("files", [1, 2])
async def test_a_line_of_a_million_matches_is_said_by_its_file(workspace: Path, files: int) -> None:
    # As JSON (multiline), its million matches end the line: no line number at its end.
    (workspace / "a.txt").write_text("a" * 1_000_000 + "\n")
    if files == 2:
        (workspace / "b.txt").write_text("a line of a\n")
    async with _client(workspace) as client:
        structured = await call(client, "grep", pattern="a", path=".", multiline=True)
    assert structured["partial"] is True
    assert "was left out; the first is in" in structured["note"]
    assert "a.txt" in structured["note"]
    shown = {Path(m["file_path"]).name for m in structured["matches"]}
    assert shown == ({"b.txt"} if files == 2 else set())


def test_an_overlong_piece_is_counted_with_its_ends_in_any_chunks() -> None:
    long = b"HEAD" + b"x" * (rg_output.MAX_OUTPUT_LINE_BYTES + 10) + b"TAIL"
    data = b"a\n" + long + b"\nb\n" + long + b"\nc"
    for size in (4096, 65536, 1 << 20, len(data)):  # as pipe reads come
        cut = rg_output._Pieces(b"\n")
        pieces = [p for i in range(0, len(data), size) for p in cut.feed(data[i : i + size])]
        pieces += cut.end()
        assert pieces == [b"a", b"b", b"c"], size
        assert cut.overlong.count == 2
        assert all(head.startswith(b"HEAD") for head, _ in cut.overlong.ends)
        assert all(tail.endswith(b"TAIL") for _, tail in cut.overlong.ends)


def test_output_ending_inside_an_overlong_piece_counts_it() -> None:
    # A run killed at its deadline ends mid-line.
    cut = rg_output._Pieces(b"\n")
    assert cut.feed(b"a\n" + b"x" * (rg_output.MAX_OUTPUT_LINE_BYTES + 1)) == [b"a"]
    assert cut.end() == []
    assert cut.overlong.count == 1


async def test_an_overlong_context_line_is_no_match_and_is_said_left_out(workspace: Path) -> None:
    # Round 42: a context line of 2 MiB was counted among the "matching lines". Round 44:
    # left out without a word, lines 1 and 3 shown as if next to each other, not partial.
    (workspace / "c.txt").write_text("NEEDLE short\n" + "y" * (2 << 20) + "\nNEEDLE again\n")
    async with _client(workspace) as client:
        structured = await call(client, "grep", pattern="NEEDLE", path="c.txt", context=1)
    assert {1, 3} <= {m["line"] for m in structured["matches"]}
    assert "matching line" not in structured.get("note", "")
    assert "1 context line too long to hold was left out" in structured["note"]
    assert structured["partial"] is True
