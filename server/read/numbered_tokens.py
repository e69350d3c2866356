"""Exact token counts of numbered lines without counting their joined text
(`NumberedLines`), block by block, as far as a cap needs (tokens.py counts)."""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable, Sequence
from itertools import accumulate
from typing import Protocol

from ..files.user_cache import UserCache
from . import count_cache
from .numbering import PADDED


class TokenCounter(Protocol):
    """What numbered lines are counted with (tokens.py `TokenCounter`)."""

    keep_counts: bool
    table_name: str
    cache: UserCache | None

    def _load(self) -> Callable[[str], int]: ...
    def _numbered_total(self, lines: Sequence[str], start: int, width: int) -> int: ...
    def _numbered_line_counts(self, lines: Sequence[str], start: int, width: int) -> list[int]: ...
    def _last_line(self, line: str, n: int, width: int) -> int: ...


# Numbered lines are counted in blocks of this many (`NumberedLines`): one call per
# block, and a cut counts one block line by line.
BLOCK_LINES = 128


class NumberedLines:
    """Exact token counts of numbered lines, without counting the joined text.

    tiktoken's pre-tokenizer (cl100k and o200k alike) cuts text into pieces before its
    byte-pair merges, and no piece runs past a newline into a line that starts with a
    space or a digit: a trailing run of whitespace or punctuation takes the newline
    along and stops there. Every numbered line starts with its number (padded with
    spaces), so the count of the joined text is the sum of each line's count with its
    newline, and the last line's without. Within a line the number ends a piece too
    (digits are pieces of their own, the tab starts the next), so a line's count is its
    number's plus that of the tab, the line and the newline, which depends on the
    line alone: the per-line memo of the counter serves it for every line number, in
    every file. For the same reason, lines counted together, each after a "0" standing
    for its number, come to the sum of their counts plus one token per "0".

    So the lines are counted in blocks of `BLOCK_LINES`, one call each, in order and
    only as far as needed: a text over its cap is known to be over once the blocks
    counted pass the cap (`tokens_within`), and a cut (`longest_fit`, `tokens(n)`)
    counts line by line only the block it falls in. tests/read/test_tokens_numbered.py
    checks the counts against a count of the joined text on real files.
    """

    def __init__(
        self, counter: TokenCounter, lines: Sequence[str], start: int, width: int = PADDED
    ) -> None:
        self._counter = counter
        self._lines = lines
        self._start = start
        self._width = width
        # The lines counted with their newline: all but the last.
        self._before = max(0, len(lines) - 1)
        self._all_blocks = -(-self._before // BLOCK_LINES)
        # Tokens of the lines before each block boundary, as far as counted.
        self._blocks = [0]
        # Block -> the running sums of its lines, counted one by one for a cut.
        self._within: dict[int, list[int]] = {}
        # Past one block, what was counted of the same lines before is kept by their
        # digest (count_cache.py): `_counted` says something new was counted since.
        self._key: str | None = None
        self._counted = False
        if self._before > BLOCK_LINES and counter.keep_counts:
            counter._load()
            self._key = count_cache.key(counter.table_name, lines, start, width)
            kept = count_cache.get(self._key, lines, start, width, BLOCK_LINES, counter.cache)
            if kept is not None:
                self._blocks, self._within = kept.blocks, kept.within

    def tokens(self, count: int | None = None) -> int:
        """Tokens of the first `count` lines (default: all) joined with newlines."""
        count = len(self._lines) if count is None else count
        if count == 0:
            return 0
        last = count - 1
        last_line = self._counter._last_line(self._lines[last], self._start + last, self._width)
        tokens = self._prefix(last) + last_line
        self._keep()
        return tokens

    def tokens_within(self, cap: int) -> int | None:
        """Tokens of all the lines when at most `cap`; None when over, found without
        counting the blocks after the one that passes the cap."""
        self._count_blocks(self._all_blocks, cap)
        if self._blocks[-1] > cap:
            self._keep()
            return None
        tokens = self.tokens()
        return tokens if tokens <= cap else None

    @property
    def counted_all(self) -> bool:
        """Whether every block was counted (`about` is then the count)."""
        return len(self._blocks) - 1 >= self._all_blocks

    def about(self) -> int:
        """About the tokens of all the lines: exact when every block was counted, else
        those counted, scaled by the characters of the lines not counted yet."""
        if self.counted_all:
            return self.tokens()
        counted_blocks = len(self._blocks) - 1
        counted_lines = counted_blocks * BLOCK_LINES
        done = sum(map(len, self._lines[:counted_lines])) + counted_lines
        left = sum(map(len, self._lines[counted_lines:])) + len(self._lines) - counted_lines
        tokens = self._blocks[-1]
        return tokens + (tokens * left // done if done else left // 4)

    def longest_fit(self, budget: int) -> int:
        """The most leading lines whose joined text is at most `budget` tokens."""
        if budget < 0 or not self._lines:
            return 0
        self._count_blocks(self._all_blocks, budget)
        blocks = self._blocks
        if blocks[-1] <= budget:  # every line but the last fits with its newline
            fitting = self._before
        else:  # the block that passes the budget, line by line
            block = bisect_right(blocks, budget) - 1
            within = self._block_sums(block)
            fitting = block * BLOCK_LINES + bisect_right(within, budget - blocks[block]) - 1
        # The lines that fit with their newlines; the next one may too, without it.
        fits = min(fitting + 1, len(self._lines))
        while fits > 0 and self.tokens(fits) > budget:
            fits -= 1
        self._keep()
        return fits

    def longest_tail(self, budget: int, extra: int = 0) -> int:
        """The most trailing lines whose joined text, with `extra` tokens a line, is at
        most `budget` tokens: each line's count stands alone (the class's rule), so those
        from line `i` on cost all the lines less the first `i` with their newlines."""
        if budget < 0 or not self._lines:
            return 0
        whole, first, last = self.tokens(), 0, len(self._lines)
        while first < last:  # the first line of the longest tail that fits
            mid = (first + last) // 2
            if (
                whole - (self._prefix(mid) if mid else 0) + extra * (len(self._lines) - mid)
                <= budget
            ):
                last = mid
            else:
                first = mid + 1
        self._keep()
        return len(self._lines) - first

    def _keep(self) -> None:
        """Keep what was newly counted (count_cache.py), for the next read of these lines."""
        if self._counted and self._key is not None:
            self._counted = False
            facts = count_cache.Facts(self._blocks, self._within)
            count_cache.put(self._key, facts, self._counter.cache)

    def _prefix(self, count: int) -> int:
        """Tokens of the first `count` lines (fewer than all), each with its newline."""
        block, rest = divmod(count, BLOCK_LINES)
        if rest == 0 or count == self._before:  # a block boundary
            end = block + (rest > 0)
            self._count_blocks(end)
            return self._blocks[end]
        self._count_blocks(block)
        return self._blocks[block] + self._block_sums(block)[rest]

    def _count_blocks(self, wanted: int, budget: float = math.inf) -> None:
        """Count blocks, one call each, until `wanted` are counted or their tokens pass
        `budget`."""
        blocks, counter = self._blocks, self._counter
        while len(blocks) <= wanted and blocks[-1] <= budget:
            first = (len(blocks) - 1) * BLOCK_LINES
            chunk = self._lines[first : min(first + BLOCK_LINES, self._before)]
            total = counter._numbered_total(chunk, self._start + first, self._width)
            blocks.append(blocks[-1] + total)
            self._counted = True

    def _block_sums(self, block: int) -> list[int]:
        """The running sums of the lines of `block`, counted line by line on first use."""
        sums = self._within.get(block)
        if sums is None:
            first = block * BLOCK_LINES
            chunk = self._lines[first : min(first + BLOCK_LINES, self._before)]
            counts = self._counter._numbered_line_counts(chunk, self._start + first, self._width)
            sums = self._within[block] = list(accumulate(counts, initial=0))
            self._counted = True
        return sums
