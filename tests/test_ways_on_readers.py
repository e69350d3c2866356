"""The readers' ways on are calls (`hints.call`) or the read again with options changed
(`hints.again`), never options named as words ("read it by lines with offset and
limit", "send symbol alone, or offset and limit alone", "without offset or limit"):
each front end says them in its own words, with real values (tests/test_ways_on.py)."""

from __future__ import annotations

import re
import shutil
import subprocess
import typing
from pathlib import Path

import warm_server
from document_samples import text_pdf

from mcp_helpers import core_client, dropin_client, text_of

# An option as the core writes it, or two named as words.
WRITTEN = re.compile(r"\b(offset|limit|pages|symbol|force|render|include_images)=")
NAMED = re.compile(r"\b(?:offset|limit)(?:, | and | or |/)(?:offset|limit)\b")


def run(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        warm_server.command(*args), cwd=cwd, capture_output=True, text=True, timeout=60
    )
    return done.stdout + done.stderr


def test_a_symbol_read_with_a_range_names_both_reads_as_commands(workspace: Path) -> None:
    (workspace / "m.py").write_text("def f():\n    return 1\n")
    said = run("read", "m.py", "--symbol", "f", "--offset", "2", cwd=workspace)
    assert "no range of lines" in said, said
    assert re.search(r"`readkeeper read \S*m\.py --symbol f`", said), said
    assert re.search(r"`readkeeper read \S*m\.py --offset 2`", said), said
    assert not WRITTEN.search(said), said
    assert not NAMED.search(said), said


def test_a_text_files_refused_option_names_a_range_of_lines_as_a_command(
    workspace: Path,
) -> None:
    (workspace / "a.txt").write_text("one\ntwo\n")
    said = run("read", "a.txt", "--pages", "1", cwd=workspace)
    assert "read a range of its lines instead" in said, said
    assert re.search(r"`readkeeper read \S*a\.txt --offset 1 --limit 200`", said), said
    assert not WRITTEN.search(said), said
    assert not NAMED.search(said), said


async def test_a_text_files_refused_pages_names_read_text_file_with_head(
    workspace: Path,
) -> None:
    (workspace / "a.txt").write_text("one\ntwo\n")
    async with dropin_client(workspace) as client:
        answer = await client.call_tool("read_media_file", {"path": "a.txt", "pages": "1"})
    said = text_of(answer)
    assert "read a range of its lines instead" in said, said
    assert re.search(
        r'read_text_file with \{"path": "[^"]*a\.txt", "offset": 1, "head": 200\}', said
    )
    assert "limit" not in said, said


async def test_a_symbol_not_found_names_the_read_of_the_whole_file(workspace: Path) -> None:
    (workspace / "m.py").write_text("def f():\n    return 1\n")
    async with core_client(workspace) as client:
        answer = await client.call_tool("read", {"file_path": "m.py", "symbol": "zzzzzz"})
    said = text_of(answer)
    assert re.search(
        r"the whole file for its outline \(or its lines\): "
        r'the read tool with \{"file_path": "[^"]*m\.py"\}',
        said,
    ), said
    assert not NAMED.search(said), said


async def test_an_outlines_stub_says_what_it_reads_and_the_read_again_forced(
    workspace: Path,
) -> None:
    shutil.copy(typing.__file__, workspace / "typing.py")  # a big module: its outline
    async with core_client(workspace) as client:
        first = text_of(await client.call_tool("read", {"file_path": "typing.py"}))
        again = text_of(await client.call_tool("read", {"file_path": "typing.py"}))
    assert "symbols (line ranges" in first, first[:300]
    assert again.endswith(
        "unchanged since your read. Read a symbol by its name or a range of lines, or "
        "force=true for the file from the top."
    ), again


def test_a_bad_pages_value_is_named_as_a_value(workspace: Path) -> None:
    # A bad_params message names the param as a word and its value as JSON (it said
    # `pages='x'`, Python's way, an option with its value written outside hints.again).
    (workspace / "a.pdf").write_bytes(text_pdf(["one"]))
    said = run("read", "a.pdf", "--pages", "x'y", cwd=workspace)
    assert 'pages "x\'y" cannot be read' in said, said
    assert not WRITTEN.search(said), said
