"""Notebook cells' names (read/readers/notebook_ids.py): one per cell, never the same for
two, and `@N` for a cell by its position."""

from __future__ import annotations

from typing import Any

from readkeeper.read.readers.notebook_ids import by_position, cell_names


def cell(cell_id: Any = None) -> dict[str, Any]:
    return {"cell_type": "code", "source": "", "id": cell_id} if cell_id else {"source": ""}


def test_no_two_cells_are_named_the_same() -> None:
    cells = [cell("same"), cell("same"), cell("cell-3"), cell(), cell("ok"), cell(7), cell("")]
    assert cell_names(cells) == ["@0", "@1", "@2", "@3", "ok", "cell-5", "cell-6"]
    assert cell_names([cell("@1"), cell()]) == ["cell-0", "cell-1"]
    assert by_position("@4", 5) == 4
    assert by_position("@5", 5) is None
    assert by_position("@" + "9" * 5000, 5) is None
    assert by_position("@٣", 5) is None  # a digit of another script is not a position
    # Upgraded from nbformat 3: the ids nbformat invented are not names.
    assert cell_names([cell("x1"), cell("x2")], has_ids=False) == ["cell-0", "cell-1"]
