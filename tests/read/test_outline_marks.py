"""The walk skips subtrees that hold none of the grammar's marks (Python's `def` and
`class`: in the text of every symbol node; in JavaScript and TypeScript, expressions
without `function`, `=>` or `class`) without changing the outline (issue 34):
the symbols, their lines and labels are the same as a walk of every subtree finds, on
real modules and on the same modules cut short (syntax errors, recovered trees)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from outline_samples import NODE_MODULES

from helpers import stdlib_text_files
from readkeeper.read.readers import outline
from readkeeper.read.readers.grammars import JAVASCRIPT, PYTHON, TYPESCRIPT, Grammar

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


def node_modules_sources(suffix: str) -> list[Path]:
    found = sorted(p for p in NODE_MODULES.rglob(f"*{suffix}") if p.is_file())
    return [p for p in found if p.stat().st_size < 200_000][::37][:80]


@pytest.mark.parametrize(("suffix", "grammar"), [(".js", JAVASCRIPT), (".ts", TYPESCRIPT)])
def test_skipping_expressions_without_a_function_finds_every_symbol(
    suffix: str, grammar: Grammar
) -> None:
    # Real scripts: IIFEs, UMD wrappers, callbacks, compiled namespaces, declarations.
    sources = node_modules_sources(suffix)
    if len(sources) < 20:
        pytest.skip(f"extension/vscode/node_modules has too few {suffix} files (npm ci)")
    unmarked = dataclasses.replace(grammar, name=f"{grammar.name}, every subtree", marks=())
    for path in sources:
        text = path.read_text(encoding="utf-8", errors="replace")
        for cut in (text, text[: len(text) // 2] + "\n(function (x) {\n"):
            assert shape(outline.symbols(cut, grammar)) == shape(outline.symbols(cut, unmarked))
