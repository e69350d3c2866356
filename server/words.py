"""A count and its noun, in words: "1 line", "2 lines", "1,024 tokens".

One helper for every message that counts something, so no message says "1 lines",
"1 cells" or "replacement(s)". English plurals here are regular but for the few nouns
given their plural.
"""

from __future__ import annotations

from typing import Any

_IRREGULAR = {"match": "matches", "entry": "entries", "diagnostic": "diagnostics"}


def plural(noun: str) -> str:
    """The plural of `noun`."""
    if noun in _IRREGULAR:
        return _IRREGULAR[noun]
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    return noun + "s"


def count(n: Any, noun: str, grouped: bool = False) -> str:
    """`n` and `noun`, singular for exactly 1 ("1 line", "0 lines"); `grouped` writes
    thousands with commas. A count that is not a number (None, "?") is shown as it is,
    with the plural."""
    if isinstance(n, int) and not isinstance(n, bool):
        shown = f"{n:,}" if grouped else str(n)
        return f"{shown} {noun if n == 1 else plural(noun)}"
    return f"{n} {plural(noun)}"


__all__ = ["count", "plural"]


def compress(pages: list[int]) -> str:
    """Numbers in order, [1, 2, 3, 5], as ranges: '1-3,5' ('' for none): a PDF's pages."""
    parts: list[str] = []
    if not pages:
        return ""
    start = prev = pages[0]
    for page in [*pages[1:], None]:
        if page is not None and page == prev + 1:
            prev = page
            continue
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
        if page is not None:
            start = prev = page
    return ",".join(parts)


def size(n: int) -> str:
    """A byte count as a reader says it: "512 bytes", "327.4 KB", "1.2 GB"."""
    value = float(n)
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if value < 1024 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} bytes"


# The most digits a number a caller wrote in a string is read with (a page, an anchor's
# line, a symbol's "[N]", a line-number prefix): Python refuses to convert more than
# 4,300 (round 40: a page of 5,000 nines was an `internal` fault), and no file has more
# than a few billion of anything. A longer number reads as `MANY`, past every end.
_MOST_DIGITS = 18
MANY = 10**_MOST_DIGITS


def whole(digits: str) -> int:
    """The number `digits` (ASCII or any script's decimal digits) spells, `MANY` at most."""
    digits = digits.lstrip("0") or "0"
    return int(digits) if len(digits) <= _MOST_DIGITS else MANY
