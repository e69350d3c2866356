"""One symbol of an outline, and the caps on an outline, shared by tree-sitter's walk
(outline.py) and the Python scanner (outline_py.py)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from ...protocol.reads import MAX_OUTLINE_SYMBOLS

# A file with more symbols than this is outlined with its first ones only.
MAX_SYMBOLS = MAX_OUTLINE_SYMBOLS
# Symbols nested deeper than this are not listed. Real code nests a few levels; every
# level lengthens the qualified name of each symbol below it, so 18,000 nested functions
# made names of quadratic total size (half a gigabyte).
MAX_DEPTH = 64
# A name longer than this is cut (a generated declarator can be a whole line).
MAX_NAME_CHARS = 200


@dataclass(eq=False)
class Symbol:
    """One symbol of a file: lines are 1-based and include its decorators and doc
    comments, as a symbol read returns them."""

    kind: str
    name: str
    qualified_name: str
    start_line: int
    end_line: int
    label: str
    children: list[Symbol] = field(default_factory=list)
    # When `name` is cut (MAX_NAME_CHARS), what tells the whole name from another of the
    # same start: its length and digest (`whole_key`); "" when `name` is the whole name.
    whole: str = ""

    @property
    def lines(self) -> str:
        """The line range as outlines and messages show it ("12-40")."""
        return f"{self.start_line}-{self.end_line}"


def whole_key(name: str) -> str:
    """What a symbol holds of a name it shows cut: "length:SHA-256" of the whole name."""
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{len(name)}:{digest}"
