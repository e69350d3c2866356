"""Exact token counts of numbered lines (numbered_tokens.py `NumberedLines`): the per-line memo
must give the count of the joined text on real files, and the longest fit must be the
true largest, for both styles of line numbers (`padded`, width 6, and `compact`, 0)."""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import stdlib_text_files
from readkeeper.read.numbered_tokens import BLOCK_LINES
from readkeeper.read.readers.text import split_lines
from readkeeper.read.tokens import MEMO_CHARS, MEMO_LINE_CHARS, MEMO_LINES, TokenCounter

COUNTER = TokenCounter(keep_counts=False)


WIDTHS = (6, 0)


def numbered(lines: list[str], start: int, width: int = 6) -> str:
    return "\n".join(f"{n:>{width}}\t{line}" for n, line in enumerate(lines, start))


def real_files() -> list[Path]:
    """About 350 files of CPython's standard library: Python of every style, and the
    text, data and markup files it ships (every 4th file, in a stable order)."""
    return stdlib_text_files()[::4][:350]


@pytest.mark.parametrize("width", WIDTHS)
def test_the_sum_over_lines_is_the_count_of_the_joined_text_on_real_files(width: int) -> None:
    files = real_files()
    assert len(files) >= 300
    checked = 0
    for index, path in enumerate(files):
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        lines = [line.removesuffix("\r") for line in split_lines(text)][:2000]
        # Numbers of 1 to 6 digits; every 5th file also from 6 digits to 7.
        for start in (1, 99_995) if index % 5 == 0 else (1,):
            counts = COUNTER.numbered(lines, start, width)
            assert counts.tokens() == COUNTER.count(numbered(lines, start, width)), (path, start)
        checked += 1
    assert checked >= 300


@pytest.mark.parametrize(
    "lines",
    [
        [],
        [""],
        ["", "", ""],
        ["x = 1   ", "    ", "\t\tindented", "end):"],
        ["def f():", "    return {", "    }", "", "# done   "],
        ["日本語のテキスト", "emoji 🎉🎉", "  ", "<|endoftext|> is ordinary text here"],
        ["trailing punctuation ...", "!!!", "'s 're", "123456789", "a" * 300],
    ],
)
def test_edge_lines_count_as_the_joined_text(lines: list[str]) -> None:
    for start in (1, 9, 99_999, 1_000_000):
        for width in WIDTHS:
            counts = COUNTER.numbered(lines, start, width)
            assert counts.tokens() == COUNTER.count(numbered(lines, start, width))
            for count in range(len(lines) + 1):
                joined = numbered(lines[:count], start, width)
                assert counts.tokens(count) == COUNTER.count(joined)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_longest_fit_is_the_true_largest(width: int) -> None:
    text = Path(sysconfig.get_paths()["stdlib"], "string.py").read_text()
    lines = split_lines(text)[:150]
    counts = COUNTER.numbered(lines, 1, width)
    for budget in (0, 1, 5, 17, 100, 333, 1000, counts.tokens() - 1, counts.tokens(), 10**6):
        fits = counts.longest_fit(budget)
        expected = max(
            (
                k
                for k in range(len(lines) + 1)
                if COUNTER.count(numbered(lines[:k], 1, width)) <= budget
            ),
            default=0,
        )
        assert fits == expected, budget


class EncodeSpy:
    """The counter's exact count, keeping every text it is asked to count."""

    def __init__(self, counter: TokenCounter) -> None:
        self.encoded: list[str] = []
        self._original = counter._load()
        counter._count = self

    def __call__(self, text: str) -> int:
        self.encoded.append(text)
        return self._original(text)

    def lines_counted(self) -> list[str]:
        """The texts counted for lines (not for line numbers, which have no tab)."""
        return [text for text in self.encoded if "\t" in text]


def test_a_line_counted_once_is_not_counted_again_under_another_number() -> None:
    counter = TokenCounter(keep_counts=False)
    spy = EncodeSpy(counter)
    count_each(counter, ["alpha = 1", "beta = 2"])
    spy.encoded.clear()
    again = counter.numbered(["beta = 2", "alpha = 1"], 500)
    assert again.tokens() == counter.count(numbered(["beta = 2", "alpha = 1"], 500))
    assert again.tokens(1) == counter.count(numbered(["beta = 2"], 500))
    assert "\talpha = 1\n" not in spy.encoded
    assert "\tbeta = 2\n" not in spy.encoded


def test_lines_never_seen_are_counted_in_one_text_and_lines_seen_again_alone() -> None:
    counter = TokenCounter(keep_counts=False)
    spy = EncodeSpy(counter)

    def whole(lines: list[str], start: int) -> list[str]:
        """Count the numbered lines whole: the texts counted for them, in order."""
        spy.encoded.clear()
        tokens = counter.numbered(lines, start).tokens()
        counted = spy.lines_counted()
        assert tokens == counter.count(numbered(lines, start))
        return counted

    # The last line (without a newline) alone; the lines never seen in one text, each
    # after a "0"; "x = 1", seen again in the same text, alone.
    assert whole(["import os", "x = 1", "x = 1", "def f():", "    return x", "end"], 1) == [
        "\tend",
        "\tx = 1\n",
        "0\timport os\n0\tx = 1\n0\tdef f():\n0\t    return x\n",
    ]
    second = ["import os", "x = 1", "y = 2", "end"]
    assert whole(second, 7) == ["\tend", "\timport os\n", "0\ty = 2\n"]
    assert whole(second, 3) == ["\tend", "\ty = 2\n"]  # the rest are remembered


@pytest.mark.parametrize("width", WIDTHS)
def test_a_whole_count_of_lines_never_seen_is_the_count_of_the_joined_text(width: int) -> None:
    # A counter of its own per file: every line but repeats is counted in one text.
    checked = 0
    for path in real_files()[::7]:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        lines = [line.removesuffix("\r") for line in split_lines(text)][:2000]
        counter = TokenCounter(keep_counts=False)
        assert counter.numbered(lines, 1, width).tokens() == counter.count(
            numbered(lines, 1, width)
        ), path
        checked += 1
    assert checked >= 40


# Lines as a hostile or odd file may hold them: every kind of space and line separator
# that is not "\n" itself, punctuation, digits, letters, CJK, emoji and lone surrogates
# are the places a pre-tokenizer piece could run across a line's end.
_LINE_CHARS = st.sampled_from(
    list(" \t\r\x0b\x0c\x1c\x85\u2028\u2029\u3000'sSt.,;:!?()[]{}<>-_=+*/\\|\"`~@#$%^&")
    + list("0123456789abcxyzÉé日本🎉")
)


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(st.text(_LINE_CHARS, max_size=12), max_size=8),
    start=st.sampled_from([1, 7, 99, 999, 9_999, 99_998, 999_999, 1_000_000]),
    width=st.sampled_from(WIDTHS),
)
def test_any_lines_count_as_the_joined_text(lines: list[str], start: int, width: int) -> None:
    counts = COUNTER.numbered(lines, start, width)
    for count in range(len(lines) + 1):
        assert counts.tokens(count) == COUNTER.count(numbered(lines[:count], start, width))


# --- the per-line memo's bounds (its memory) ----------------------------------------------


def count_each(counter: TokenCounter, lines: list[str]) -> list[int]:
    """Count `lines` line by line, as the block a cut falls in is counted."""
    return counter._numbered_line_counts(lines, 1, 6)


def memo_size(counter: TokenCounter) -> int:
    return len(counter._line_memo)


def test_lines_up_to_the_memo_line_length_are_remembered_and_longer_ones_are_not() -> None:
    counter = TokenCounter(keep_counts=False)
    at_limit, over = "a" * MEMO_LINE_CHARS, "b" * (MEMO_LINE_CHARS + 1)
    count_each(counter, [at_limit, over])
    assert at_limit in counter._line_memo
    assert over not in counter._line_memo


def test_the_memo_starts_afresh_past_its_number_of_lines() -> None:
    counter = TokenCounter(keep_counts=False)
    count_each(counter, [f"x{i}" for i in range(MEMO_LINES)])
    assert memo_size(counter) == MEMO_LINES
    count_each(counter, ["one line more"])
    assert memo_size(counter) == 1


def test_the_memo_starts_afresh_past_its_characters_and_counts_them_from_zero() -> None:
    counter = TokenCounter(keep_counts=False)
    width = 200
    lines = iter(f"{i:0{width}d}" for i in range(10**6))  # distinct, `width` characters
    fill = MEMO_CHARS // width
    for _round in range(2):  # the first fill, then the fill after a fresh start
        already = memo_size(counter)
        count_each(counter, [next(lines) for _ in range(fill - already)])
        assert memo_size(counter) == fill  # exactly MEMO_CHARS characters: kept
        count_each(counter, ["1"])  # one more character: over, but checked before adding
        assert memo_size(counter) == fill + 1
        count_each(counter, [next(lines)])  # over the limit: it starts afresh
        assert memo_size(counter) == 1


def test_the_token_table_is_loaded_by_the_first_count() -> None:
    counter = TokenCounter(keep_counts=False)
    assert not counter.loaded
    counter.count("x")
    assert counter.loaded


def test_the_longest_fit_of_a_budget_below_zero_is_no_line() -> None:
    # A cap smaller than what a note needs leaves a budget below zero for the lines.
    counts = COUNTER.numbered(["alpha = 1", "beta = 2"], 1)
    assert counts.longest_fit(-1) == 0
    assert counts.longest_fit(-100) == 0


def test_the_lines_seen_start_afresh_past_the_memo_s_number_of_lines() -> None:
    counter = TokenCounter(keep_counts=False)
    counter.numbered([f"y{i}" for i in range(MEMO_LINES)] + ["last"], 1).tokens()
    assert len(counter._seen) == MEMO_LINES  # every line but the last, seen once
    counter.numbered(["one line more", "last"], 1).tokens()
    assert len(counter._seen) == 1


# --- counting in blocks -------------------------------------------------------------------


def _long_lines() -> list[str]:
    text = Path(sysconfig.get_paths()["stdlib"], "argparse.py").read_text()
    return split_lines(text)[: BLOCK_LINES * 5 + 37]


@pytest.mark.parametrize("width", WIDTHS)
def test_counts_at_and_around_block_boundaries_are_the_joined_counts(width: int) -> None:
    lines = _long_lines()
    shared = COUNTER.numbered(lines, 1, width)
    edges = {0, 1, len(lines) - 1, len(lines)}
    edges |= {b * BLOCK_LINES + d for b in range(1, 6) for d in (-1, 0, 1)}
    for count in sorted(edges, reverse=True):  # the shared counts, from the far end first
        expected = COUNTER.count(numbered(lines[:count], 1, width))
        assert shared.tokens(count) == expected, count
        assert COUNTER.numbered(lines, 1, width).tokens(count) == expected, count


@pytest.mark.parametrize("width", WIDTHS)
def test_the_longest_fit_is_found_in_any_block(width: int) -> None:
    lines = _long_lines()
    for count in (BLOCK_LINES - 1, BLOCK_LINES, 3 * BLOCK_LINES + 5, len(lines) - 1, len(lines)):
        exact = COUNTER.count(numbered(lines[:count], 1, width))
        assert COUNTER.numbered(lines, 1, width).longest_fit(exact) == count
        assert COUNTER.numbered(lines, 1, width).longest_fit(exact - 1) == count - 1


def test_a_text_over_its_cap_is_counted_only_as_far_as_the_cap() -> None:
    counter = TokenCounter(keep_counts=False)
    spy = EncodeSpy(counter)
    lines = [f"value_{i} = compute({i}, 'label {i}')" for i in range(20 * BLOCK_LINES)]
    whole = counter.count(numbered(lines, 1))
    spy.encoded.clear()
    assert counter.numbered(lines, 1).tokens_within(whole // 10) is None
    counted = sum(len(text) for text in spy.lines_counted())
    assert 0 < counted < len(numbered(lines, 1)) // 5  # two blocks, not twenty
    assert counter.numbered(lines, 1).tokens_within(whole) == whole
    assert counter.numbered(lines, 1).tokens_within(whole - 1) is None


def _per_line_calls(spy: EncodeSpy) -> int:
    """The calls that counted one line with its newline (a block's lines are counted
    after a "0"; the last line of a count has no newline)."""
    return sum(1 for text in spy.lines_counted() if text[0] == "\t" and text[-1] == "\n")


def test_a_cut_counts_line_by_line_only_the_block_it_falls_in() -> None:
    counter = TokenCounter(keep_counts=False)
    spy = EncodeSpy(counter)
    lines = [f"entry_{i} = lookup({i}, 'name {i}')" for i in range(20 * BLOCK_LINES)]
    budget = counter.count(numbered(lines[: 2 * BLOCK_LINES + 40], 1))
    spy.encoded.clear()
    counts = counter.numbered(lines, 1)
    assert counts.longest_fit(budget) == 2 * BLOCK_LINES + 40
    assert 0 < _per_line_calls(spy) <= BLOCK_LINES
    # At a block's end no line is counted alone: the blocks' sums say it all.
    spy.encoded.clear()
    fresh = counter.numbered([f"other_{i} = {i}" for i in range(5 * BLOCK_LINES)], 1)
    assert fresh.tokens(3 * BLOCK_LINES + 1) > 0
    assert _per_line_calls(spy) == 0


def test_a_line_seen_before_is_remembered_up_to_the_memo_line_length() -> None:
    counter = TokenCounter(keep_counts=False)
    at_limit, over = "c" * MEMO_LINE_CHARS, "d" * (MEMO_LINE_CHARS + 1)
    for _ in range(2):  # seen once in a joined count, then counted alone and kept
        counter.numbered([at_limit, over, "end"], 1).tokens()
    assert at_limit in counter._line_memo
    assert over not in counter._line_memo
