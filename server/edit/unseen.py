"""What the agent knows after a change made over content it never saw.

The rule (SECURITY.md, "A merge never counts as seeing the other change"): when an edit
is merged with another program's change, or an undo puts back content that holds one,
the session's read-state is not the file as it now is but what the agent knows of it:
the content it last knew, with its own change applied. The other change stays unseen,
so a whole-file write is refused `stale` with that change's diff, an edit of its lines
needs a read (or is merged again only where provably disjoint), and `changes` reports it.

`known_after` carries the agent's change (`before` -> `after`, line by line) over to the
content it knew (`known`): the hunks of its change must lie where `known` and `before`
agree, which the disjoint merge has proven for an edit. When that cannot be shown (the
two changes meet, or comparing them is too costly), there is no known content: the
session then knows nothing it may write over, and must read the file again.
"""

from __future__ import annotations

from ..read.diffs import TooCostly, text_hunks
from ..read.partial_seen import lines_of

Hunk = tuple[int, int, int, int]


def known_after(known: str, before: str, after: str) -> str | None:
    """`known` with the change `before` -> `after` applied, or None when the change
    meets the difference between `known` and `before` (or is too costly to compare)."""
    try:
        theirs, _, _ = text_hunks(known, before)
        mine, _, _ = text_hunks(before, after)
    except TooCostly:
        return None
    known_lines, after_lines = lines_of(known), lines_of(after)
    before_lines = lines_of(before)
    pieces: list[str] = []
    kept = 0  # lines of `known` already copied
    for i1, i2, j1, j2 in mine:
        if any(_meet((i1, i2), (c1, c2)) for _, _, c1, c2 in theirs):
            return None
        start = i1 + _shift(theirs, i1)
        stop = start + (i2 - i1)
        if start < kept or known_lines[start:stop] != before_lines[i1:i2]:
            return None
        pieces += known_lines[kept:start] + after_lines[j1:j2]
        kept = stop
    pieces += known_lines[kept:]
    return "".join(pieces)


def _meet(mine: tuple[int, int], theirs: tuple[int, int]) -> bool:
    """Whether two changed ranges of the same lines (half-open; empty ones are points
    between lines) overlap, or are points at the same place (which goes first is not
    known)."""
    (a1, a2), (b1, b2) = mine, theirs
    if a1 < a2 and b1 < b2:
        return a1 < b2 and b1 < a2
    if a1 == a2 and b1 == b2:
        return a1 == b1
    point, (low, high) = (a1, (b1, b2)) if a1 == a2 else (b1, (a1, a2))
    return low < point < high


def _shift(theirs: list[Hunk], line: int) -> int:
    """How far line `line` of `before` sits from the same line of `known`: the lines
    the other change removed minus those it added, above it."""
    return sum((k2 - k1) - (c2 - c1) for k1, k2, c1, c2 in theirs if c2 <= line)
