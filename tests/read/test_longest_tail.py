"""NumberedLines.longest_tail: the most trailing lines within a budget, checked against
the count of the joined numbered text of every tail (the way on of an offset past the
end: read/readers/text_past_end.py)."""

from __future__ import annotations

import random

from readkeeper.core import Readkeeper
from readkeeper.read.numbering import numbered


def test_the_longest_tail_is_the_longest_whose_text_fits(core: Readkeeper) -> None:
    counter = core.tokens
    rng = random.Random(7)
    words = ["alpha", "β", "12", "x" * 30, "{", "  "]
    lines = [" ".join(rng.choices(words, k=rng.randint(0, 40))) for _ in range(700)]
    width = core.settings.number_width

    def tail_tokens(k: int) -> int:
        first = len(lines) - k
        return counter.count("\n".join(numbered(lines[first:], 41 + first, width)))

    for budget in (0, 1, 50, 977, 5_000, 10**9):
        for extra in (0, 1):  # tokens a line may cost more (text_past_end._FORMAT_TOKENS)
            fits = counter.numbered(lines, 41, width).longest_tail(budget, extra)
            assert fits == 0 or tail_tokens(fits) + extra * fits <= budget, (budget, fits)
            more = fits + 1
            assert fits == len(lines) or tail_tokens(more) + extra * more > budget, budget
