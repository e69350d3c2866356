"""A read keeps to `max_tokens` as each front end sends it: the MCP text (its header
line, the lines, its note), the drop-in's, the CLI's. The header and the note repeat
the file's path and the caller's call (its path, session and options) in each way on,
so their room is set aside before the lines are fitted. Found by this session's own
probe: a cut read over MCP sent 25,013 tokens at the default cap of 25,000 (an MCP
client that holds tool results to 25,000 tokens, as Claude Code does by default,
refuses it), and 2,529 at a cap of 2,000 with a session of 256 characters. The room is
half the cap at most: at a small cap, long values leave the lines half of it."""

from __future__ import annotations

import base64
import io
import json
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import PIL.Image
import pytest
from document_samples import numbered_pdf
from notebook_cells import numbered_notebook
from test_crawl_ways_on import _CELL, _LINE, _PAGE, _numbers, crawl

from helpers import tiktoken_count
from mcp_helpers import (
    error_kind,
    mcp_env,
    named_call,
    ok,
    private_runtime_dir,
    stdio_client,
    text_of,
)
from readkeeper.read.readers.image import tokens_for

CAP = 8000  # twice the room of the longest values below, counted by their bytes
SESSIONS = {"none": None, "long": "é" * 256, "marks": ("[readkeeper " * 22)[:256]}
# A folder chain of unicode names: the path the header shows and each way on repeats.
DEEP = "/".join(["ünïcödé-" + "ß" * 40] * 4)


def _client(workspace: Path, cap: int | None = CAP, *tools: str):  # type: ignore[no-untyped-def]
    capped = {"READKEEPER_MAX_TOKENS": str(cap)} if cap is not None else {}
    env = mcp_env(private_runtime_dir(), **capped)
    return stdio_client(["--root", str(workspace), "--standalone", *tools], env)


def _lines(workspace: Path, where: str = "") -> str:
    folder = workspace / where
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "rows.txt").write_text(
        "".join(f"row {i} " + "word " * 8 + "\n" for i in range(1, 1501))
    )
    return f"{where}/rows.txt" if where else "rows.txt"


def _asked(session: str | None, **options: Any) -> dict[str, Any]:
    return {**options, **({"session": session} if session is not None else {})}


@pytest.mark.parametrize("session", sorted(SESSIONS))
@pytest.mark.parametrize("where", ["", DEEP])
@pytest.mark.parametrize("line_format", ["cat-n", "anchors"])
async def test_every_read_of_a_file_as_sent_keeps_to_max_tokens(
    workspace: Path, session: str, where: str, line_format: str
) -> None:
    name = _lines(workspace, where)
    asked = _asked(SESSIONS[session], file_path=name, line_format=line_format)
    async with _client(workspace) as client:
        seen, named = await crawl(client, asked, _numbers(_LINE), cap=CAP)
    if line_format == "anchors":  # cat-n's lines have no anchors to find
        assert seen == list(range(1, 1501)), (seen[:3], seen[-3:], len(seen))
    assert len(named) >= 2, named


@pytest.mark.parametrize("session", sorted(SESSIONS))
async def test_a_range_s_refusal_names_a_range_that_fits_as_sent(
    workspace: Path, session: str
) -> None:
    # A range over the cap is refused naming the largest limit that fits: followed,
    # that read must keep to the cap as sent too (the limit was fitted to the lines).
    name = _lines(workspace, DEEP)
    asked = _asked(SESSIONS[session], file_path=name, offset=1, limit=1200)
    async with _client(workspace) as client:
        refused = await client.call_tool("read", asked)
        assert error_kind(refused) == "token_limit", text_of(refused)
        fewer = named_call(text_of(refused), "read")
        said = await ok(client, "read", **fewer)
        assert tiktoken_count(said) <= CAP, (tiktoken_count(said), said[-300:])
        assert fewer["limit"] > 30, fewer  # most of the cap is lines


async def test_a_file_just_under_the_cap_as_sent_keeps_to_it(workspace: Path) -> None:
    # Its lines fit the cap by themselves; with their header line they did not.
    lines, rows = "", 0
    while tiktoken_count(lines) < CAP - 20:
        rows += 1
        lines += f"{rows:6}\trow {rows} " + "word " * 8 + "\n"
    (workspace / "near.txt").write_text(
        "".join(f"row {i} " + "word " * 8 + "\n" for i in range(1, rows + 1))
    )
    async with _client(workspace) as client:
        seen, _ = await crawl(
            client, {"file_path": "near.txt", "line_format": "anchors"}, _numbers(_LINE), CAP
        )
    assert seen == list(range(1, rows + 1)), (seen[-3:], rows)


@pytest.mark.parametrize("session", ["long", "marks"])
async def test_notebook_pdf_and_symbol_reads_as_sent_keep_to_max_tokens(
    workspace: Path, session: str
) -> None:
    folder = workspace / DEEP
    folder.mkdir(parents=True)
    (folder / "nb.ipynb").write_text(numbered_notebook(200))
    (folder / "doc.pdf").write_bytes(numbered_pdf(30, lines=25))
    words = " ".join(f"w{j}" for j in range(20))
    body = "".join(f"        x_{i} = '{words}'\n" for i in range(300))
    (folder / "src.py").write_text(f"class Reader:\n    def read(self):\n{body}        return 1\n")
    named = SESSIONS[session]
    async with _client(workspace) as client:
        nb = _asked(named, file_path=f"{DEEP}/nb.ipynb")
        cells, _ = await crawl(client, nb, _numbers(_CELL), CAP)
        assert cells == list(range(200)), cells[-3:]
        pdf = _asked(named, file_path=f"{DEEP}/doc.pdf")
        pages, _ = await crawl(client, pdf, _numbers(_PAGE), CAP)
        assert pages == list(range(1, 31)), pages
        symbol = _asked(named, file_path=f"{DEEP}/src.py", symbol="Reader.read")
        symbol["line_format"] = "anchors"
        lines, _ = await crawl(client, symbol, _numbers(_LINE), CAP)
        assert lines == list(range(2, 304)), (lines[:3], lines[-3:])


async def test_the_drop_in_s_reads_as_sent_keep_to_max_tokens(workspace: Path) -> None:
    name = _lines(workspace, DEEP)
    way_on = re.compile(r"(?:the rest: |[Cc]ontinue with )read_text_file with \{")
    async with _client(workspace, CAP, "--tools", "filesystem") as client:
        arguments: dict[str, Any] = {"path": name}
        for _ in range(20):
            said = await ok(client, "read_text_file", **arguments)
            assert tiktoken_count(said) <= CAP, (tiktoken_count(said), said[-300:])
            way = way_on.search(said)
            if way is None:
                break
            arguments, _ = json.JSONDecoder().raw_decode(said, way.end() - 1)
        assert way is None, arguments


def test_the_cli_s_reads_as_sent_keep_to_max_tokens(workspace: Path) -> None:
    name = _lines(workspace, DEEP)
    env = mcp_env(private_runtime_dir(), READKEEPER_MAX_TOKENS=str(CAP))
    for extra in ([], ["--offset", "150"], ["--line-format", "anchors"]):
        done = subprocess.run(
            [sys.executable, "-m", "readkeeper", "read", name, *extra],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr[-500:]
        sent = tiktoken_count(done.stdout + done.stderr)
        assert sent <= CAP, (extra, sent, done.stderr[-300:])


async def test_a_cut_read_as_sent_keeps_to_the_default_cap(workspace: Path) -> None:
    # 25,013 tokens at the default cap of 25,000: refused by an MCP client that holds
    # tool results to 25,000 tokens (Claude Code's default MAX_MCP_OUTPUT_TOKENS).
    (workspace / "big.log").write_text(
        "".join(f"row {i} " + "word " * 8 + "\n" for i in range(1, 4801))
    )  # under max_size_bytes: read whole, cut at the cap
    async with _client(workspace, None) as client:
        for asked in ({}, {"offset": 1}, {"offset": 2500, "session": "agent-7"}):
            said = await ok(client, "read", file_path="big.log", **asked)
            assert "Continue with" in said, said[-300:]
            assert 24_000 < tiktoken_count(said) <= 25_000, (asked, tiktoken_count(said))


async def test_at_a_small_cap_long_values_leave_the_lines_half_of_it(workspace: Path) -> None:
    # The room is half the cap at most: a read goes on, however long its own values.
    name = _lines(workspace, DEEP)
    asked = {"file_path": name, "session": SESSIONS["long"], "line_format": "anchors"}
    async with _client(workspace, 1000) as client:
        seen, named = await crawl(client, asked, _numbers(_LINE), cap=10**9)
        said = await ok(client, "read", **{**asked, "offset": 700, "force": True})
    assert seen == list(range(1, 1501)), (seen[-3:], len(named))
    shown = [int(n) for n in _LINE.findall(said)]
    assert len(shown) > 20, shown  # 500 tokens of lines: rows of about 15


@pytest.mark.parametrize("cap", [2000, 4000, None])
async def test_an_outline_as_sent_keeps_to_max_tokens(workspace: Path, cap: int | None) -> None:
    # An outline was drawn to its own 9,000 characters whatever the cap: 3,717 tokens
    # sent at a cap of 2,000. Under a small cap it is drawn smaller, said so.
    shutil.copy(Path(sysconfig.get_paths()["stdlib"]) / "typing.py", workspace / "typing_copy.py")
    async with _client(workspace, cap) as client:
        for session in (None, "chat-1", "s" * 100):
            asked = _asked(session, file_path="typing_copy.py")
            said = await ok(client, "read", **asked)
            assert ": outline of " in said.split("\n", 1)[0], said[:200]
            assert tiktoken_count(said) <= (cap or 25_000), (session, tiktoken_count(said))
            assert await ok(client, "read", **asked) != said  # recorded: a stub now


def _under_controls(workspace: Path, folders: int, length: int) -> str:
    """A file of 3,000 lines under `folders` folders of `length` control characters each
    (one byte on disk, `\u0001` shown): its path from the workspace."""
    folder = workspace
    for _ in range(folders):
        folder = folder / ("\x01" * length)
        folder.mkdir()
    (folder / "f.txt").write_text("".join(f"row {i}\n" for i in range(3000)))
    return str((folder / "f.txt").relative_to(workspace))


async def test_a_path_over_a_quarter_of_the_cap_as_shown_is_refused_in_a_few_tokens(
    workspace: Path,
) -> None:
    # 18 folders of 250 control characters each (one byte on disk, `\u0001` shown) made
    # a read of 48,628 tokens at the default cap, 36,143 of them its path, and 28,147 of
    # structured content (round 36, B1): the room of its path, past half the cap, was
    # not kept whole. Such a read is refused, briefly, in both channels.
    name = _under_controls(workspace, 6, 200)
    async with _client(workspace, 4000) as client:
        refused = await client.call_tool("read", {"file_path": name})
        said = text_of(refused)
        assert error_kind(refused) == "token_limit", said[:300]
        assert "over the 500 a read may repeat at the 4,000-token cap" in said, said[:400]
        assert "a link to it does not help" in said, said[:600]
        assert tiktoken_count(said) < 600, tiktoken_count(said)
        assert len(json.dumps(refused.structured_content)) < 3000
        # A usual path at the same cap reads.
        (workspace / "g.txt").write_text("".join(f"row {i}\n" for i in range(3000)))
        assert "row 1" in await ok(client, "read", file_path="g.txt")


@pytest.mark.parametrize("cap", [4000, None])
async def test_rendered_pages_sent_inline_keep_to_max_tokens(
    workspace: Path, cap: int | None
) -> None:
    # 20 pages drawn came as 20 inline images of about 1,600 tokens each, at any cap
    # (round 36, B2): now as many as the cap leaves beside the text, the note naming
    # the files of the rest.
    (workspace / "doc.pdf").write_bytes(numbered_pdf(20, lines=5))
    async with _client(workspace, cap) as client:
        result = await client.call_tool(
            "read", {"file_path": "doc.pdf", "pages": "1-20", "render": True}
        )
    said = text_of(result)
    assert not result.is_error, said[:300]
    images = [block for block in result.content if block.type == "image"]
    pictures = sum(
        tokens_for(*PIL.Image.open(io.BytesIO(base64.b64decode(image.data))).size)
        for image in images
    )
    assert tiktoken_count(said) + pictures <= (cap or 25_000), (len(images), pictures)
    assert 0 < len(images) < 20, len(images)
    assert f"Of the 20 page images, the first {len(images)} came with this answer" in said


async def test_a_read_keeps_to_the_characters_its_tool_declares(workspace: Path) -> None:
    # A token may hold 125 spaces: lines of 4,000 spaces read within the token cap sent
    # 1,624,547 characters, where the read tool declares 500,000 to Claude Code (round
    # 36, B4). A read stops at 400,000 characters of lines too, and says so.
    (workspace / "blank.txt").write_text((" " * 4000 + "\n") * 3000)
    async with _client(workspace, None) as client:
        listed = {tool.name: tool.meta for tool in (await client.list_tools()).tools}
        declared = (listed["read"] or {})["anthropic/maxResultSizeChars"]
        whole = await ok(client, "read", file_path="blank.txt", offset=1)  # streamed
        assert len(whole) <= declared, len(whole)
        assert "Continue with the read tool with" in whole, whole[-300:]
        refused = await client.call_tool(
            "read", {"file_path": "blank.txt", "offset": 1, "limit": 795}
        )
        said = text_of(refused)
        assert error_kind(refused) == "token_limit", said[:300]
        assert "400,000 characters a read sends at most" in said, said[:400]
        fewer = named_call(said, "read")
        assert len(await ok(client, "read", **fewer)) <= declared


async def test_a_grep_page_keeps_to_the_characters_its_tool_declares(workspace: Path) -> None:
    # Lines of 500 spaces cost about 5 tokens each: at a cap of 100,000, 2,000 matches
    # sent over 1,000,000 characters, where the grep tool declares 500,000.
    (workspace / "blank.txt").write_text(("NEEDLE" + " " * 493 + "x\n") * 2000)
    async with _client(workspace, 100_000) as client:
        asked = {"pattern": "NEEDLE", "max_matches": 2000}
        said = await ok(client, "grep", **asked)
        assert len(said) <= 500_000, len(said)
        assert "cut by the 400,000 characters a page sends at most" in said, said[-400:]
        rest = named_call(said, "grep")
        more = await ok(client, "grep", **rest)
        assert len(more) <= 500_000
        assert "NEEDLE" in more


async def test_a_path_of_an_eighth_of_the_default_cap_is_refused(workspace: Path) -> None:
    # A path of 6,223 tokens, just under a quarter, was read: 31,207 tokens sent at the
    # default cap of 25,000, the path three times beside half the cap of lines (round 37).
    name = _under_controls(workspace, 5, 250)
    async with _client(workspace, None) as client:
        refused = await client.call_tool("read", {"file_path": name})
        said = text_of(refused)
        assert error_kind(refused) == "token_limit", said[:300]
        assert "over the 3,125 a read may repeat at the 25,000-token cap" in said, said[:400]


async def test_a_line_over_the_characters_a_read_sends_is_said_so(workspace: Path) -> None:
    # With max_line_chars raised, a line of 450,000 spaces: the too_large refusal named
    # `offset 1, limit 1`, refused in turn ("raise max_tokens", which would not help:
    # the characters were the reason; round 37).
    (workspace / "wide.txt").write_text(" " * 450_000 + "x\n")
    env = mcp_env(private_runtime_dir(), READKEEPER_MAX_LINE_CHARS="1000000")
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        refused = await client.call_tool("read", {"file_path": "wide.txt"})
        said = text_of(refused)
        assert error_kind(refused) == "too_large", said[:300]
        assert "over what one read sends: search it" in said, said[:500]
        assert '"limit"' not in said, said[:500]
        line = await client.call_tool("read", {"file_path": "wide.txt", "offset": 1, "limit": 1})
        said = text_of(line)
        assert error_kind(line) == "token_limit", said[:300]
        assert "over the 400,000 characters a read sends at most" in said, said[:500]
        assert "max_line_chars" in said, said[:600]


async def test_a_page_that_fits_beside_the_text_comes_inline_whatever_the_image_budget(
    workspace: Path,
) -> None:
    # Each page was held back for image_max_tokens before it was read: at a budget of
    # 100,000 no page came at a cap of 25,000, though a drawn letter page is about
    # 1,600 tokens, and the note said "within max_tokens" (round 37, A5).
    (workspace / "doc.pdf").write_bytes(numbered_pdf(3, lines=5))
    env = mcp_env(private_runtime_dir(), READKEEPER_IMAGE_MAX_TOKENS="100000")
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        result = await client.call_tool(
            "read", {"file_path": "doc.pdf", "pages": "1-3", "render": True}
        )
    said = text_of(result)
    assert not result.is_error, said[:300]
    images = [block for block in result.content if block.type == "image"]
    assert len(images) == 3, said[-600:]
    pictures = sum(
        tokens_for(*PIL.Image.open(io.BytesIO(base64.b64decode(image.data))).size)
        for image in images
    )
    assert tiktoken_count(said) + pictures <= 25_000, pictures
