"""Numbered lines as readkeeper shows them: the number, then a tab, then the line.

Text reads, outlines, edit snippets, a notebook's JSON error and the editor's selection
all number lines this one way, so a line number the agent quotes from any of them means
the same line (the notebook's error excerpt always in the padded style: the parser that
raises it has no settings). Two styles (the `line_numbers` setting): `padded`, `cat -n`'s number
right-aligned in six columns (the default, what agents are trained on), and `compact`,
the number alone, which costs fewer tokens. The token counter relies on the shape
(`numbered_tokens.NumberedLines`: the number ends a piece of tiktoken's pre-tokenizer, the tab
starts the next).
"""

from __future__ import annotations

from collections.abc import Iterable

from .. import quoting
from ..settings import LINE_NUMBER_WIDTHS

SEPARATOR = "\t"
STYLES = LINE_NUMBER_WIDTHS
PADDED = STYLES["padded"]  # the width of `cat -n`'s numbers


def number(n: int, width: int = PADDED) -> str:
    """Line number `n` as shown (without the separator)."""
    return f"{n:>{width}}"


def prefix(n: int, width: int = PADDED) -> str:
    """What comes before the text of line `n`."""
    return f"{n:>{width}}{SEPARATOR}"


def numbered(lines: Iterable[str], first: int = 1, width: int = PADDED) -> list[str]:
    """`lines` with their numbers, the first of them being line `first`; any line break
    left inside a line (not LF) shown escaped, so each stays one line (quoting.py)."""
    return [f"{n:>{width}}{SEPARATOR}{quoting.line(line)}" for n, line in enumerate(lines, first)]


def gap(text: str, width: int = PADDED) -> str:
    """A row standing for lines left out, aligned with the numbered rows around it."""
    return " " * width + SEPARATOR + text
