"""Token counting (tokens.py): the cheap estimate, exact counts near a cap, and the
cache that spares a re-read the exact count."""

from __future__ import annotations

import pytest

from readkeeper.read.tokens import EXACT_COUNT_FRACTION, TokenCounter, estimate_tokens


class Spied(TokenCounter):
    """A token counter that records every exact count asked of it."""

    def __init__(self, **kwargs: int) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.counted: list[str] = []

    def count(self, text: str) -> int:
        self.counted.append(text)
        return super().count(text)


@pytest.mark.parametrize(
    ("text", "tokens"),
    [("", 0), ("a", 1), ("abcd", 1), ("abcde", 2), ("abcdefgh", 2), ("é" * 4, 2), ("日本語", 3)],
)
def test_the_estimate_is_utf8_bytes_over_four_rounded_up(text: str, tokens: int) -> None:
    assert estimate_tokens(text) == tokens == -(-len(text.encode()) // 4)


def test_an_estimate_under_a_quarter_of_the_cap_is_the_answer() -> None:
    counter = Spied()
    text = "word " * 80  # 400 bytes: an estimate of 100 tokens
    cap = 401  # a quarter is 100.25: the estimate is under it
    assert estimate_tokens(text) < cap * EXACT_COUNT_FRACTION
    assert counter.measure(text, cap) == 100
    assert counter.counted == []


def test_an_estimate_at_a_quarter_of_the_cap_is_counted_exactly() -> None:
    counter = Spied()
    text = "word " * 80
    exact = TokenCounter().count(text)
    assert exact != estimate_tokens(text)
    assert counter.measure(text, 400) == exact  # a quarter of 400 is exactly 100
    assert counter.counted == [text]


def test_line_counts_add_up_to_the_joined_text_and_its_final_newline() -> None:
    counter = TokenCounter()
    lines = ["alpha", "beta", "gamma delta"]
    counts = counter.count_lines(lines)
    assert counts == [counter.count(line) + 1 for line in lines]
    assert sum(counts) == counter.count("\n".join(lines)) + 1


def test_an_unknown_encoding_falls_back_to_the_bundled_table() -> None:
    # Never a download, never a crash: the offline cl100k table counts instead.
    assert TokenCounter("no-such-encoding").count("hello world") == TokenCounter().count(
        "hello world"
    )
