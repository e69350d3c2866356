"""A name several symbols share, read by symbol over MCP: the core's read and the
drop-in's read_text_file (fix26c). The outline's note said `symbol="Intro" (lines
1-41)` of a file of 200 `# Intro` headings, and that read spanned the first to the last
of them (over the token cap); a getter and its setter, overloads and a function defined
twice were read together. Each name reads one symbol: the note's own reads exactly the
lines it says, "Name[2]" the second."""

from __future__ import annotations

import json
import re
from pathlib import Path

from repeated_names import ALL

from mcp_helpers import call, core_client, dropin_client, text_of
from readkeeper import quoting

# The drop-in's outline note's example: the whole call that reads the symbol.
_DROPIN_EXAMPLE = "Read a symbol with read_text_file with "


def _dropin_example(note: str, path: str) -> tuple[str, tuple[int, int]]:
    """The symbol name and lines the drop-in's outline note says to read, its call's
    path the one read."""
    at = note.find(_DROPIN_EXAMPLE)
    assert at >= 0, note
    sent, end = json.JSONDecoder().raw_decode(note, at + len(_DROPIN_EXAMPLE))
    assert sent == {"path": path, "symbol": sent.get("symbol")}, sent
    lines = re.compile(r" \(lines (\d+)-(\d+)\)").match(note, end)
    assert lines is not None, note
    return sent["symbol"], (int(lines.group(1)), int(lines.group(2)))


# The core's outline note's example, as its MCP tools say it: the read tool, changed.
_CORE_EXAMPLE = "Read a symbol with the read tool with "


def _core_example(note: str, file: str) -> tuple[str, tuple[int, int]]:
    """The symbol name and lines the core's outline note says to read, as the whole read
    of `file` (its name as the call gave it) with that symbol."""
    at = note.find(_CORE_EXAMPLE)
    assert at >= 0, note
    sent, end = json.JSONDecoder().raw_decode(note, at + len(_CORE_EXAMPLE))
    assert sent == {"file_path": file, "symbol": sent.get("symbol")}, sent
    lines = re.compile(r" \(lines (\d+)-(\d+)\)").match(note, end)
    assert lines is not None, note
    return sent["symbol"], (int(lines.group(1)), int(lines.group(2)))


def _between(text: str, lines: tuple[int, int]) -> str:
    """Lines `lines` (1-based, both included) of `text`."""
    return "".join(text.splitlines(keepends=True)[lines[0] - 1 : lines[1]])


async def test_the_core_reads_the_symbol_its_outline_names(workspace: Path) -> None:
    for case in ALL:
        (workspace / case.file).write_text(case.text)
    async with core_client(workspace) as client:
        for case in ALL:
            outline = await client.call_tool("read", {"file_path": case.file})
            assert not outline.is_error, text_of(outline)
            name, lines = _core_example(text_of(outline), case.file)
            assert (name, lines) == (case.name, case.lines)
            first = (await call(client, "read", file_path=case.file, symbol=name))["file"]
            assert (first["start_line"], first["num_lines"]) == (lines[0], lines[1] - lines[0] + 1)
            second_read = quoting.json_text({"file_path": case.file, "symbol": case.second})
            said = f"the read tool with {second_read} (lines {case.second_lines[0]}-"
            assert said in first["note"], first["note"]
            second = (await call(client, "read", file_path=case.file, symbol=case.second))["file"]
            assert second["start_line"] == case.second_lines[0]
            assert second["num_lines"] == case.second_lines[1] - case.second_lines[0] + 1


async def test_the_drop_in_reads_the_symbol_its_outline_names(workspace: Path) -> None:
    for case in ALL:
        (workspace / case.file).write_text(case.text)
    async with dropin_client(workspace) as client:
        for case in ALL:
            path = str(workspace / case.file)
            outline = await client.call_tool("read_text_file", {"path": path})
            assert not outline.is_error, text_of(outline)
            name, lines = _dropin_example(text_of(outline), path)
            assert (name, lines) == (case.name, case.lines)
            for symbol, want in ((name, lines), (case.second, case.second_lines)):
                read = await client.call_tool("read_text_file", {"path": path, "symbol": symbol})
                assert not read.is_error, text_of(read)
                fenced = re.match(r"(`{3,})\n(.*?)\n?\1\n", text_of(read), re.S)
                assert fenced is not None, text_of(read)
                assert fenced.group(2) + "\n" == _between(case.text, want)
            # The second's note names the first as the outline did.
            # (said as the whole call, as the drop-in says every read again changed)
            again = quoting.json_text({"path": path, "symbol": name})
            assert f"read_text_file with {again} (lines {lines[0]}-{lines[1]})" in text_of(read)
