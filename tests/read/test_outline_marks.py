"""The walk skips subtrees that hold none of the grammar's marks (Python's `def` and
`class`: in the text of every symbol node) without changing the outline (issue 34):
the symbols, their lines and labels are the same as a walk of every subtree finds, on
real modules and on the same modules cut short (syntax errors, recovered trees)."""

from __future__ import annotations

import dataclasses

from helpers import stdlib_text_files
from readkeeper.read.readers import outline
from readkeeper.read.readers.grammars import PYTHON

UNMARKED = dataclasses.replace(PYTHON, name="Python, every subtree", marks=())


def shape(found: list[outline.Symbol]) -> list[tuple[int, str, str, int, int, str]]:
    return [
        (depth, s.kind, s.qualified_name, s.start_line, s.end_line, s.label)
        for depth, s in outline.walk(found)
    ]


def test_skipping_unmarked_subtrees_finds_every_symbol() -> None:
    sources = [p for p in stdlib_text_files() if p.suffix == ".py"][::9][:150]
    checked = 0
    for path in sources:
        text = path.read_text(encoding="utf-8", errors="replace")
        for cut in (text, text[: len(text) // 2], text[: len(text) // 3] + "\n  def (:\n"):
            assert shape(outline.symbols(cut, PYTHON)) == shape(outline.symbols(cut, UNMARKED))
            checked += 1
    assert checked == 3 * len(sources) > 300
