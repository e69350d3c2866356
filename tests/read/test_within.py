"""within.py: a count that stops past the cap says what a count of the whole would:
the exact tokens when at most the cap, else "over" (None), on real text of every kind
and at caps near each text's own count, where pieces and the whole could disagree."""

from __future__ import annotations

import pytest

from helpers import stdlib_text_files
from readkeeper.read.tokens import TokenCounter
from readkeeper.read.within import count_until, count_within


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    counter = TokenCounter()
    counter.warm_up()
    return counter


def test_the_answer_is_the_whole_count_s_at_every_cap_near_it(counter: TokenCounter) -> None:
    texts = [p.read_text(errors="replace") for p in stdlib_text_files()[::15]]
    long = [t for t in texts if len(t) > 3 * 4096][:40]
    assert len(long) >= 30
    for text in long:
        exact = counter.count(text)
        for cap in {exact - 1, exact, exact + 1, exact // 2, exact // 10, 4096, exact * 2}:
            if cap > 0:
                assert count_within(counter, text, cap) == (exact if exact <= cap else None)


def test_a_text_far_over_the_cap_says_where_it_is_known_to_be_over(
    counter: TokenCounter,
) -> None:
    text = "".join(f"entry {i}: value {i * 7919 % 100_003}\n" for i in range(50_000))
    tokens, over = count_until(counter, text, 1000)
    assert tokens is None
    assert over < len(text) // 20  # counted about the cap's worth, not the whole
    assert counter.count(text[:over]) > 1000
