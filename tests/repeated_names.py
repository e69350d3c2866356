"""Source files in which several symbols share one name, for the symbol-read tests of
each front end (a symbol read reads ONE symbol: fix26c). Each is long enough that a
whole read is its outline, whose note names the first symbol of the shared name."""

from __future__ import annotations

import re
from dataclasses import dataclass

# The outline note's example: `symbol="Intro" (lines 1-41)`.
NOTE_EXAMPLE = re.compile(r'Read a symbol with symbol=("(?:[^"\\]|\\.)*") \(lines (\d+)-(\d+)\)')


@dataclass(frozen=True)
class Repeated:
    """A file, the name its outline's note gives (the first of that name, and its
    lines), and the name and lines of the second."""

    file: str
    text: str
    name: str
    lines: tuple[int, int]
    second: str
    second_lines: tuple[int, int]


def _methods(start: int) -> str:
    """Enough other methods that the file is outlined (over 8,000 tokens)."""
    return "".join(
        f"    def step_{i}(self, value: int) -> int:\n        return value * {i} + {start}\n\n"
        for i in range(400)
    )


HEADINGS = Repeated(
    "dup.md",
    "".join("# Intro\n" + "text line number here\n" * 40 for _ in range(200)),
    "Intro",
    (1, 41),
    "Intro[2]",
    (42, 82),
)
DEFS = Repeated(
    "handlers.py",
    "".join(
        "def handler(event):\n" + "".join(f"    event = event + {j}\n" for j in range(30))
        for _ in range(120)
    ),
    "handler",
    (1, 31),
    "handler[2]",
    (32, 62),
)
PROPERTY = Repeated(
    "box.py",
    "class Box:\n    @property\n    def size(self):\n        return self._size\n\n"
    "    @size.setter\n    def size(self, value):\n        self._size = value\n\n" + _methods(1),
    "Box.size",
    (2, 4),
    "Box.size[2]",
    (6, 8),
)
OVERLOADS = Repeated(
    "conv.py",
    "from typing import overload\n\n\nclass Conv:\n"
    "    @overload\n    def to(self, x: int) -> int: ...\n"
    "    @overload\n    def to(self, x: str) -> str: ...\n"
    "    def to(self, x):\n        return x\n\n" + _methods(2),
    "Conv.to",
    (5, 6),
    "Conv.to[2]",
    (7, 8),
)
ALL = [HEADINGS, DEFS, PROPERTY, OVERLOADS]
IDS = ["markdown-headings", "python-defs", "property-setter", "overloads"]


def example(note: str) -> tuple[str, tuple[int, int]]:
    """The symbol name and lines an outline's note says to read."""
    import json

    found = NOTE_EXAMPLE.search(note)
    assert found is not None, note
    return json.loads(found.group(1)), (int(found.group(2)), int(found.group(3)))
