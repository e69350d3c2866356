"""A name several symbols share, read by symbol through the real server (fix26c).

The outline's note said `symbol="Intro" (lines 1-41)` of a file of 200 `# Intro`
headings, and that read spanned the first to the last of them (lines 1-8200, over the
token cap); a property's getter and setter, overloads and a function defined twice were
read together. A symbol read reads one symbol: the note's own name reads exactly the
lines it says, and "Name[2]" the second."""

from __future__ import annotations

from pathlib import Path

import pytest
from repeated_names import ALL, IDS, Repeated, example

from conftest import Session


def _lines(file: dict[str, int]) -> tuple[int, int]:
    return file["start_line"], file["start_line"] + file["num_lines"] - 1


@pytest.mark.parametrize("case", ALL, ids=IDS)
async def test_the_outlines_symbol_reads_the_lines_it_names(
    lsp: Session, workspace: Path, case: Repeated
) -> None:
    (workspace / case.file).write_text(case.text)
    outline = await lsp.read(case.file)
    assert outline["type"] == "outline"
    name, lines = example(outline["file"]["note"])
    assert (name, lines) == (case.name, case.lines)
    first = await lsp.read(case.file, symbol=name)
    assert first["type"] == "text"
    assert _lines(first["file"]) == lines
    assert f'symbol="{case.second}" (lines {case.second_lines[0]}-' in first["file"]["note"]
    second = await lsp.read(case.file, symbol=case.second)
    assert _lines(second["file"]) == case.second_lines


async def test_a_place_past_the_last_is_refused_with_each_name(
    lsp: Session, workspace: Path
) -> None:
    (workspace / "box.py").write_text(ALL[2].text)
    error = await lsp.read_error("box.py", symbol="Box.size[3]")
    assert error.data["kind"] == "not_found"
    assert [c["symbol"] for c in error.data["candidates"]] == ["Box.size", "Box.size[2]"]
    assert 'symbol="Box.size[2]" (method, lines 6-8)' in error.message
