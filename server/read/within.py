"""Counting a text's tokens only as far as a cap decides.

A reader over its cap needs to know that it is over, and where, not by how much: a
notebook cell or a PDF page of megabytes counted whole costs seconds (the count is the
costly part of a read). So a long text is counted in pieces, in order, and the count
stops once the pieces pass the cap.

Pieces counted apart come to about the whole's count: they are cut after a line break
where there is one (cl100k's pre-tokenizer splits there too), and a cut elsewhere
changes the count by a token or two. So only pieces a quarter past the cap say "over";
nearer, the whole text is counted exactly, and the answer is the one a count of the
whole would give. Whatever is sent is counted so, never estimated (issue 34).
"""

from __future__ import annotations

from .tokens import TokenCounter

# The fewest characters a piece holds: a piece is about the cap's count in characters
# (a quarter of the cap in tokens), so a text over the cap is known after a few.
_MIN_PIECE_CHARS = 4096


def count_until(counter: TokenCounter, text: str, cap: int) -> tuple[int | None, int]:
    """The exact tokens of `text` when at most `cap` (else None), and how long a prefix
    of `text` is known to be over `cap` (every longer one is too; `len(text) + 1`
    when none is known)."""
    piece = max(_MIN_PIECE_CHARS, cap)
    if len(text) > 2 * piece:
        encode = counter.count
        margin = cap + cap // 4 + 64
        used = at = 0
        while at < len(text):
            end = min(at + piece, len(text))
            if end < len(text):
                end = text.rfind("\n", at, end) + 1 or end
            used += encode(text[at:end])
            if used > margin:
                return None, end
            at = end
    tokens = counter.count(text)
    return (tokens, len(text) + 1) if tokens <= cap else (None, len(text))


def count_within(counter: TokenCounter, text: str, cap: int) -> int | None:
    """The exact tokens of `text` when at most `cap`, else None (`count_until`)."""
    return count_until(counter, text, cap)[0]
