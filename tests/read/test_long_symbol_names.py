"""A symbol whose name is longer than an outline shows (200 characters, cut there with
"…") is read by its whole name as the file writes it, and a search for a name past that
length searches for what the file holds, never for readkeeper's cut mark (round 28, B7:
a 10,000-character heading was "none with a similar name", and the grep named for it
searched for `… [9,800 characters cut] …`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import ReadParams, unstructure
from readkeeper.protocol.search import GrepParams

LONG = "Long " + "L" * 9_995


def _doc(workspace: Path) -> None:
    filler = "".join(f"## Part {n}\n\n" + "words " * 40 + "\n\n" for n in range(400))
    (workspace / "doc.md").write_text(f"# Intro\n\n{filler}# {LONG}\n\nthe long one's text\n")


def test_a_symbol_is_read_by_its_whole_name(core: Readkeeper, workspace: Path) -> None:
    _doc(workspace)
    read: dict[str, Any] = unstructure(core.read(ReadParams(file_path="doc.md", symbol=LONG)))
    assert read["file"]["content"].endswith("the long one's text"), read["file"]["content"][-300:]


def test_a_long_name_s_search_finds_what_the_file_holds(core: Readkeeper, workspace: Path) -> None:
    _doc(workspace)
    # A long name the file writes, in a paragraph: no symbol, but a search finds it.
    named = "Zed " + "Z" * 5_000
    with (workspace / "doc.md").open("a") as doc:
        doc.write(f"\n{named} in words\n")
    with pytest.raises(ReadkeeperError) as refused:
        core.read(ReadParams(file_path="doc.md", symbol=named))
    message = refused.value.message
    [grep] = [json.loads(m) for m in re.findall(r"readkeeper/grep (\{.*?\})", message)]
    assert "characters cut" not in grep["pattern"], grep
    found = core.grep(GrepParams(pattern=grep["pattern"], path=str(workspace)))
    assert found["matches"], grep


def _twins(workspace: Path) -> tuple[str, str]:
    stem = "h" * 200
    body = "".join(f"    x{n} = {n}\n" for n in range(400))
    (workspace / "twins.py").write_text(f"def {stem}X():\n{body}\n\ndef {stem}Y():\n{body}")
    return stem + "X", stem + "Y"


def test_two_long_names_of_one_start_are_told_apart(core: Readkeeper, workspace: Path) -> None:
    # Round 29: both were held as the same cut name, and Y's name read X.
    first, second = _twins(workspace)
    for name, line in ((first, 1), (second, 404)):
        read: dict[str, Any] = unstructure(core.read(ReadParams(file_path="twins.py", symbol=name)))
        assert read["file"]["start_line"] == line, (name[-1], read["file"]["start_line"])
    with pytest.raises(ReadkeeperError) as refused:
        core.read(ReadParams(file_path="twins.py", symbol="h" * 200 + "Z"))
    assert refused.value.kind == "not_found"


def test_a_cut_name_of_two_names_reads_neither(core: Readkeeper, workspace: Path) -> None:
    # The outline shows both by one cut name. Round 29 read the second by "[2]"; round 30
    # (B1): a symbol is read by its own whole name, or by a cut name that stands for it
    # alone. This one stands for two: refused, each listed by lines that read it.
    _twins(workspace)
    held = "h" * 199 + "…"
    for name in (held, f"{held}[2]"):
        with pytest.raises(ReadkeeperError) as refused:
            core.read(ReadParams(file_path="twins.py", symbol=name))
        assert refused.value.kind == "not_found"
        runs = re.findall(r"offset=(\d+), limit=(\d+)", refused.value.message)
        assert [int(start) for start, _ in runs] == [1, 404], refused.value.message
