"""A crawler: from a first read, every way on followed exactly as written until none is
named, over readkeeper's MCP tools with a session and a line format of the caller's
own. Each file comes out whole and in order (no line, cell or page skipped or repeated),
every call named keeps the caller's session and options, and none is refused (but the
PDF's first, which asks for pages). Outside rounds 30-33 found each kind of break one
way on at a time: a way on that dropped the session, named a cut pattern, stopped at a
note of another kind, or named a range over the cap."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from document_samples import numbered_pdf
from notebook_cells import numbered_notebook

from helpers import tiktoken_count
from mcp_helpers import Client, core_client, dropin_client, error_kind, ok, text_of
from readkeeper.settings import Settings

DEFAULT_MAX_TOKENS = Settings().max_tokens

# Where a read names the next read: its header's or note's rest, a PDF's next pages, a
# too_large refusal's first range.
_WAY_ON = re.compile(
    r"(?:the rest: |[Cc]ontinue with |The pages after \d+: |in ranges \(|start with |"
    r"from its first line \()"
    r"the read tool with \{"
)
_LINE = re.compile(r"^(\d+)(?:[a-z]{2}|--)\t", re.M)  # an anchored line
_CELL = re.compile(r"^--- cell c(\d+) ", re.M)
_PAGE = re.compile(r"^--- page (\d+) ---$", re.M)
ASKED = {"session": "crawl", "line_format": "anchors"}


async def crawl(
    client: Client,
    first: dict[str, Any],
    found: Callable[[str], list[int]],
    cap: int = DEFAULT_MAX_TOKENS,
) -> tuple[list[int], list[dict[str, Any]]]:
    """What each read showed, in order, and each call named, following the ways on;
    each answer as sent within `cap` (the server's max_tokens) by tiktoken's count."""
    seen: list[int] = []
    named: list[dict[str, Any]] = []
    arguments = first
    for _ in range(300):
        result = await client.call_tool("read", arguments)
        said = text_of(result)
        sent = tiktoken_count(said)
        assert sent <= cap, (sent, cap, arguments, said[:300], said[-300:])
        if result.is_error:
            assert error_kind(result) in ("pages_required", "too_large", "token_limit"), said

            assert not named, said[:400]  # only the first call may be refused
        seen += found(said)
        way = _WAY_ON.search(said)
        if way is None:
            return seen, named
        arguments, _ = json.JSONDecoder().raw_decode(said, way.end() - 1)
        named.append(arguments)
    raise AssertionError(f"no end after 300 reads: {named[-3:]}")


def _numbers(pattern: re.Pattern[str], start: int = 0) -> Callable[[str], list[int]]:
    return lambda said: [int(n) - start for n in pattern.findall(said)]


def _text(workspace: Path) -> tuple[str, int]:
    # Short lines, and a run of long ones (cut at the line cap) that the token cap meets.
    lines = [f"line {i}" if not 3000 <= i < 3040 else f"{i} " + "y" * 5000 for i in range(1, 6001)]
    (workspace / "mixed.txt").write_text("\n".join(lines) + "\n")
    return "mixed.txt", 6000


def _huge(workspace: Path) -> tuple[str, int]:
    # Over max_size_bytes: refused too_large, read in ranges.
    (workspace / "huge.log").write_text(
        "".join(f"entry {i} " + "z" * 40 + "\n" for i in range(1, 8001))
    )
    return "huge.log", 8000


CASES: dict[str, Callable[[Path], tuple[str, int]]] = {"text": _text, "huge": _huge}


async def test_a_symbol_over_the_cap_is_read_on_to_its_end(workspace: Path) -> None:
    # Its refusal named a range that fit ("offset": 4, "limit": 65), whose read named no
    # rest: lines 69-605 of the symbol were never offered (round 34). Now: its first
    # line, from which each read is cut at the cap and names the next.
    body = "".join(
        f"        x_{i} = '{' '.join(f'w{j}' for j in range(30))}'\n" for i in range(600)
    )
    source = f"import os\n\n\nclass Reader:\n    def read(self):\n{body}        return x_0\n"
    (workspace / "src.py").write_text(source)
    async with core_client(workspace) as client:
        first = {"file_path": "src.py", "symbol": "Reader.read", **ASKED}
        seen, named = await crawl(client, first, _numbers(_LINE))
    assert seen == list(range(5, 607)), (seen[:3], seen[-3:], len(seen))
    for way in named:
        assert {k: way.get(k) for k in ASKED} == ASKED, way


@pytest.mark.parametrize("kind", sorted(CASES))
async def test_every_line_of_a_file_is_reached_by_its_ways_on(workspace: Path, kind: str) -> None:
    name, lines = CASES[kind](workspace)
    async with core_client(workspace) as client:
        seen, named = await crawl(client, {"file_path": name, **ASKED}, _numbers(_LINE))
    assert seen == list(range(1, lines + 1)), (seen[:3], seen[-3:], len(seen))
    assert named, "one read showed it all"
    for way in named:
        assert {k: way.get(k) for k in ASKED} == ASKED, way


async def test_every_cell_of_a_notebook_is_reached_by_its_ways_on(workspace: Path) -> None:
    (workspace / "nb.ipynb").write_text(numbered_notebook(3000))
    asked = {"session": "crawl", "include_images": True}
    async with core_client(workspace) as client:
        seen, named = await crawl(client, {"file_path": "nb.ipynb", **asked}, _numbers(_CELL))
    assert seen == list(range(3000)), (seen[:3], seen[-3:], len(seen))
    for way in named:
        assert {k: way.get(k) for k in asked} == asked, way


async def test_every_page_of_a_pdf_is_reached_by_its_ways_on(workspace: Path) -> None:
    (workspace / "doc.pdf").write_bytes(numbered_pdf(45, lines=3))
    asked = {"session": "crawl"}
    async with core_client(workspace) as client:
        seen, named = await crawl(client, {"file_path": "doc.pdf", **asked}, _numbers(_PAGE))
    assert seen == list(range(1, 46)), seen
    for way in named:
        assert way.get("session") == "crawl", way


_DROPIN_WAY_ON = re.compile(r"(?:the rest: |[Cc]ontinue with )read_text_file with \{")
_PLAIN_LINE = re.compile(r"^(?:line (\d+)|(\d+) y+)", re.M)


async def test_the_drop_ins_ways_on_lead_to_a_files_end(workspace: Path) -> None:
    name, lines = _text(workspace)
    seen: list[int] = []
    async with dropin_client(workspace) as client:
        arguments: dict[str, Any] = {"path": name}
        for _ in range(40):
            said = await ok(client, "read_text_file", **arguments)
            assert tiktoken_count(said) <= DEFAULT_MAX_TOKENS, (arguments, said[-300:])
            seen += [int(a or b) for a, b in _PLAIN_LINE.findall(said)]
            way = _DROPIN_WAY_ON.search(said)
            if way is None:
                break
            arguments, _ = json.JSONDecoder().raw_decode(said, way.end() - 1)
    assert seen == list(range(1, lines + 1)), (seen[:3], seen[-3:], len(seen))
