"""A notebook output's text cut to its cap without joining it whole first.

An output's text is a list of lines in the file (or one string). A 95 MB stream output
joined, stripped of terminal colours and then cut made two more copies of it beside the
parsed notebook. Here the lines are joined and stripped a block of about a megabyte at
a time, keeping only the head and the tail that the cut shows, and the length of the
whole: the same text and the same count as joining it all. A block ends only before a
line break, which no colour code holds (`ANSI_RE`), so stripping by blocks removes
exactly what stripping the whole would.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ... import quoting

ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
# About this many characters are joined and stripped at once.
BLOCK_CHARS = 1 << 20


def joined(value: Any, separator: str = "") -> str:
    """An output field as one string (a list of strings joined, anything else empty)."""
    if isinstance(value, list):
        return separator.join(str(v) for v in value)
    return value if isinstance(value, str) else ""


def _stripped_blocks(value: Any, separator: str) -> Iterator[str]:
    """`joined(value, separator)` without colour codes, in blocks."""
    if not isinstance(value, list):
        yield ANSI_RE.sub("", joined(value))
        return
    block: list[str] = []
    size = 0
    for index, item in enumerate(value):
        piece = str(item)
        if index and separator:
            piece = separator + piece
        # A block may end here when a line break follows (no colour code spans it).
        if size >= BLOCK_CHARS and (piece.startswith("\n") or block[-1].endswith("\n")):
            yield ANSI_RE.sub("", "".join(block))
            block, size = [], 0
        block.append(piece)
        size += len(piece)
    if block:
        yield ANSI_RE.sub("", "".join(block))


def capped(value: Any, limit: int, keep: str, separator: str = "") -> tuple[str, int]:
    """The output's text without colour codes, cut to `limit` characters: its head and
    tail (`keep="both"`, the cut marked in the middle) or its tail alone (`"tail"`);
    with how many characters were cut (0: none)."""
    head_room = limit * 2 // 3 if keep == "both" else 0
    tail_room = limit - head_room
    head, tail, total = "", "", 0
    for block in _stripped_blocks(value, separator):
        total += len(block)
        if len(head) < head_room:
            taken = head_room - len(head)
            head, block = head + block[:taken], block[taken:]
        tail = (tail + block)[-tail_room:] if tail_room else ""
    # A cut marker's `[` of the output's own is escaped (quoting.marks): only the
    # marker readkeeper adds here is raw.
    if total <= limit:
        return quoting.marks(head + tail), 0
    cut = total - limit
    marker = f"\n… [{cut:,} characters cut] …\n"
    if keep == "tail":
        return marker.lstrip("\n") + quoting.marks(tail), cut
    return quoting.marks(head) + marker + quoting.marks(tail), cut


__all__ = ["ANSI_RE", "BLOCK_CHARS", "capped", "joined"]
