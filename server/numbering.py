"""Numbered lines as readkeeper shows them: `cat -n`'s number, six wide, then a tab.

Text reads, outlines, edit snippets, a notebook's JSON error and the editor's selection
all number lines this one way, so a line number the agent quotes from any of them means
the same line. The token counter relies on the shape too (`tokens.NumberedLines`: the
number ends a piece of tiktoken's pre-tokenizer, the tab starts the next).
"""

from __future__ import annotations

from collections.abc import Iterable

SEPARATOR = "\t"
_WIDTH = 6
_GAP = " " * _WIDTH + SEPARATOR


def number(n: int) -> str:
    """Line number `n` as shown, padded to the column width (without the separator)."""
    return f"{n:>{_WIDTH}}"


def prefix(n: int) -> str:
    """What comes before the text of line `n`."""
    return f"{n:>{_WIDTH}}{SEPARATOR}"


def numbered(lines: Iterable[str], first: int = 1) -> list[str]:
    """`lines` with their numbers, the first of them being line `first`."""
    return [f"{n:>{_WIDTH}}{SEPARATOR}{line}" for n, line in enumerate(lines, first)]


def gap(text: str) -> str:
    """A row standing for lines left out, aligned with the numbered rows around it."""
    return _GAP + text
