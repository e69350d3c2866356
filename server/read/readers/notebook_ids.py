"""The names an agent gives notebook cells: one per cell, never the same for two.

A cell is named by its own `id` when it has one (a non-empty string), else `cell-N`
after its index, because the ids nbformat would invent are random and would not survive
the next read. Two cells may still claim one name: a notebook with a duplicated id (a
copy-paste in an editor that does not renumber, a merge of two branches), or a real id
`cell-1` beside an id-less cell at index 1. Each cell of such a name is named `@N`
instead (N its index), which no own id can shadow: a name starting with `@` is never
taken from the file. `@N` also addresses any cell by its index, so an edit can always
name the one it means.

The read and the edit name cells with this one function, so a name the read showed is
the cell the edit changes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

POSITION = "@"


def _own(cell: Mapping[str, Any], index: int, has_ids: bool) -> str:
    own = cell.get("id") if has_ids else None
    if isinstance(own, str) and own and not own.startswith(POSITION):
        return own
    return f"cell-{index}"


def cell_names(cells: Sequence[Mapping[str, Any]], has_ids: bool = True) -> list[str]:
    """Each cell's name, in order; no two the same. `has_ids` False names every cell by
    its position (a notebook upgraded from nbformat 3, whose ids nbformat invented)."""
    own = [_own(cell, index, has_ids) for index, cell in enumerate(cells)]
    claimed = Counter(own)
    return [name if claimed[name] == 1 else f"{POSITION}{index}" for index, name in enumerate(own)]


def claimants(cells: Sequence[Mapping[str, Any]], wanted: str) -> list[int]:
    """The indexes of the cells whose own name is `wanted` (more than one: the name is
    ambiguous, and the read named them `@N`)."""
    return [i for i, cell in enumerate(cells) if _own(cell, i, True) == wanted]


def by_position(wanted: str, total: int) -> int | None:
    """The index `wanted` names as `@N`, when it is one and in range."""
    digits = wanted[len(POSITION) :]
    if wanted.startswith(POSITION) and digits.isascii() and digits.isdigit() and len(digits) < 10:
        index = int(digits)
        return index if index < total else None
    return None


def positional(name: str) -> bool:
    """Whether `name` names a cell by its position (so a cell inserted or deleted before
    it changes what it names)."""
    return name.startswith(POSITION) or (name.startswith("cell-") and name[5:].isdigit())
