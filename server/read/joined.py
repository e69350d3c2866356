"""The exact tokens of texts joined by line breaks, from the counts of the texts (issue 34).

An outline read is counted twice: the core counts the outline, its first lines and its
note as the LSP front end sends them, and the MCP front end counts the outline and the
first lines as its rendering shows them (rendered_tokens.py). Both are joins of the same
few texts, so each text is counted once, here, and kept (`_KEPT`: by counter, the last few
texts it counted), and each join's count is made of the texts' counts.

That is exact where the pre-tokenizer cuts the joined text at the seam. cl100k's and
o200k's (each pattern with the alternative `\\s*[\\r\\n]`; `composes` checks) never run a
piece past a run of line breaks into a line whose first character past its spaces and
tabs is a letter or a digit: a run of whitespace or punctuation takes the line breaks
along and stops there. So the count of A + separator + B, where B starts so, is the
count of A + separator plus that of B; and the count of A + separator is that of A
less its last line's, plus its last line's with the separator, when that line starts
so too. Anything else (another seam, another encoding) is counted joined, as before.
tests/read/test_joined_tokens.py checks every join against the count of the joined
text, on real outlines and on random texts.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence

from .tokens import TokenCounter

# The texts kept with their counts, by counter: the last few counted (an outline's
# parts), only those long enough that a count costs more than the look-up, and at most
# so many characters in all.
KEPT_TEXTS = 16
KEPT_MIN_CHARS = 256
KEPT_MAX_CHARS = 1 << 20


class _Kept:
    """A counter's texts kept with their counts, the last counted last."""

    def __init__(self) -> None:
        self.counts: OrderedDict[str, int] = OrderedDict()
        self.chars = 0


# By counter: what one counts is never another's answer (an encoding, a test's counter).
_KEPT: weakref.WeakKeyDictionary[TokenCounter, _Kept] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()
# The pattern's alternative that ends a piece at a run of line breaks.
_SEAM_RULE = r"\s*[\r\n]"


def composes(counter: TokenCounter) -> bool:
    """Whether the counter's encoding cuts its pieces at the seams `count_joined` makes
    of counts (cl100k's and o200k's patterns do; gpt2's runs spaces across a line
    break into the next line's); False before its table is loaded (`count` may then
    answer from the token index without waiting for it)."""
    if not counter.loaded:  # counted as before: a count may not wait for the table
        return False
    return _SEAM_RULE in str(getattr(counter._load(), "_pat_str", ""))


def count_joined(counter: TokenCounter, parts: Sequence[str], separator: str) -> int:
    """The exact tokens of `separator.join(parts)`, each part counted once (and kept).
    `separator` is one or more line feeds."""
    if not parts:
        return 0
    clean = all(map(_starts_clean, parts[1:]))
    if not clean or not separator or separator.strip("\n") or not composes(counter):
        return counter.count(separator.join(parts))
    total = sum(_with_separator(counter, part, separator) for part in parts[:-1])
    return total + counted(counter, parts[-1])


def counted(counter: TokenCounter, text: str) -> int:
    """`counter.count(text)`, answered from the texts it counted lately (kept)."""
    if len(text) < KEPT_MIN_CHARS or len(text) > KEPT_MAX_CHARS:
        return counter.count(text)
    with _LOCK:
        kept = _KEPT.get(counter)
        if kept is None:
            kept = _KEPT[counter] = _Kept()
        tokens = kept.counts.get(text)
        if tokens is not None:
            kept.counts.move_to_end(text)
            return tokens
    tokens = counter.count(text)
    with _LOCK:
        if text not in kept.counts:
            kept.counts[text] = tokens
            kept.chars += len(text)
            while len(kept.counts) > KEPT_TEXTS or kept.chars > KEPT_MAX_CHARS:
                dropped, _ = kept.counts.popitem(last=False)
                kept.chars -= len(dropped)
    return tokens


def _with_separator(counter: TokenCounter, part: str, separator: str) -> int:
    """The tokens of `part + separator`: the part's count less its last line's, plus
    the last line's with the separator, when that line starts clean (else counted)."""
    cut = part.rfind("\n") + 1
    last = part[cut:]
    if cut == 0 or not _starts_clean(last):
        return counter.count(part + separator)
    return counted(counter, part) - counter.count(last) + counter.count(last + separator)


def _starts_clean(text: str) -> bool:
    """Whether no piece runs across a line break into `text`: its first character past
    its spaces and tabs is a letter or a digit."""
    first = text.lstrip(" \t")[:1]
    return first.isalnum()


def forget() -> None:
    """Drop the texts kept (tests)."""
    with _LOCK:
        _KEPT.clear()


__all__ = ["composes", "count_joined", "counted", "forget"]
