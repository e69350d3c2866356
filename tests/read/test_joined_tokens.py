"""Counts of joined texts made of their parts' counts (read/joined.py, issue 34) are the
counts of the joined texts: on real outlines as both front ends send them (the core's
outline, first lines and note; MCP's outline and first lines as rendered), on random
texts with every kind of seam, and after the parts' counts were kept."""

from __future__ import annotations

import random
import sysconfig
from pathlib import Path

import pytest

from readkeeper import quoting, render
from readkeeper.read import joined
from readkeeper.read.numbering import numbered
from readkeeper.read.readers import outline
from readkeeper.read.readers import text as text_reader
from readkeeper.read.readers.grammars import PYTHON
from readkeeper.read.tokens import TokenCounter


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    made = TokenCounter(keep_counts=False)
    made.warm_up()
    return made


def stdlib_modules(count: int) -> list[Path]:
    """Real modules of 30-250 KB, a stable selection."""
    found = sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))
    return [p for p in found if 30_000 <= p.stat().st_size <= 250_000][:count]


def test_real_outlines_count_as_their_joined_text(counter: TokenCounter) -> None:
    modules = stdlib_modules(40)
    assert len(modules) >= 20
    for module in modules:
        text = module.read_text(encoding="utf-8", errors="surrogateescape")
        drawn = outline.render(outline.symbols(text, PYTHON), 9_000).text
        head = "\n".join(numbered(text_reader.split_lines(text)[:40]))
        note = f"This file has {text.count(chr(10)):,} lines: its outline (force=true for all)."
        sent = [
            ((drawn, head, note), "\n"),  # the core's, as LSP sends it
            ((quoting.lines(drawn), quoting.lines(head)), "\n\n"),  # MCP's rendering
        ]
        for parts, separator in sent:
            whole = counter.count(separator.join(parts))
            assert joined.count_joined(counter, parts, separator) == whole, module
            assert joined.count_joined(counter, parts, separator) == whole, module  # kept


def test_an_outline_results_rendering_counts_as_its_body(counter: TokenCounter) -> None:
    file = {"outline": "1-9 class A\n  2-3 def f", "content": "     1\timport os\n     2\t"}
    result = {"type": "outline", "file": file}
    parts = render.body_parts(result)
    assert parts is not None
    body = render.body(result)
    assert body is not None
    assert joined.count_joined(counter, *parts) == counter.count(body)
    assert render.body_parts({"type": "text", "file": file}) is None


# Pieces that make every kind of seam: letters, digits, spaces and tabs before them,
# punctuation that takes line breaks along (and o200k's "/"), runs of line breaks,
# other line breaks, marks, contractions, text in other scripts.
PIECES = [
    "a", "Zq", "1", "23", " ", "  ", "\t", "\n", "\n\n", "\r", "\r\n", ")", "/", "'s",
    "é", "中", "\u2028", "\x0b", ".", "#", "  1\t", "x  \n", "!!\n", "\u0301", "\n  7",
    "\nab", "\n\t9", "\n)", "\n ",
]  # fmt: skip


@pytest.mark.parametrize("seed", range(4))
def test_random_joins_count_as_their_joined_text(
    counter: TokenCounter, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(joined, "KEPT_MIN_CHARS", 0)  # every part kept: the kept counts too
    chosen = random.Random(seed)
    for _ in range(1_500):
        parts = [
            chosen.choice(["", "a", "  3", "\t", "\n", ")"])
            + "".join(chosen.choice(PIECES) for _ in range(chosen.randint(0, 16)))
            for _ in range(chosen.randint(1, 4))
        ]
        separator = chosen.choice(["\n", "\n\n", "\n\n\n"])
        expected = counter.count(separator.join(parts))
        assert joined.count_joined(counter, parts, separator) == expected, (parts, separator)


def test_a_separator_not_of_line_feeds_is_counted_joined(counter: TokenCounter) -> None:
    parts = ["alpha)", "beta"]
    for separator in (" ", "\r\n", "", "\n \n"):
        expected = counter.count(separator.join(parts))
        assert joined.count_joined(counter, parts, separator) == expected


def test_the_kept_counts_stay_bounded(counter: TokenCounter) -> None:
    joined.forget()
    texts = [f"{i} " + "word " * 100 for i in range(joined.KEPT_TEXTS + 10)]
    for text in texts:
        assert joined.counted(counter, text) == counter.count(text)
    kept = joined._KEPT[counter].counts
    assert list(kept) == texts[-joined.KEPT_TEXTS :]
    joined.forget()
    assert not joined._KEPT


def test_a_count_kept_is_its_counters_only(counter: TokenCounter) -> None:
    # Another counter (another encoding, or one that counts otherwise) is never
    # answered with this one's count.
    text = "alpha beta gamma " * 40

    class Halved(TokenCounter):
        def count(self, text: str) -> int:
            return super().count(text) // 2

    other = Halved(keep_counts=False)
    other.warm_up()
    assert joined.counted(counter, text) == counter.count(text)
    assert joined.counted(other, text) == counter.count(text) // 2


def test_a_counter_whose_table_is_not_loaded_is_not_made_to_load_it() -> None:
    # Before its table loads, a counter may count from the token index without waiting
    # for it (tokens.py `count`): the joined text is counted so, as before.
    unloaded = TokenCounter(keep_counts=False)
    assert not joined.composes(unloaded)
    assert not unloaded.loaded
