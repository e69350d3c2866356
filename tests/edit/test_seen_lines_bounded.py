"""An edit of a file seen only through search keeps the lines the search showed at their
new numbers, found without a quadratic comparison of the whole file: the lines both
ends share are kept as they are, and only the changed middle is compared, within the
diffs' budget (read/diffs.Bounded). A one-line edit among 16,000 alike lines took 42 s
(found checking round 38's fix). A spy records what the line matcher is given."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.edit import seen_lines


def _grep(core: Readkeeper, pattern: str) -> None:
    calls.call(core, "grep", {"pattern": pattern, "path": "f.txt"})
    core.read_states.later.settle()


def test_lines_a_search_showed_stay_editable_after_an_edit_of_alike_lines(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "f.txt").write_text("x\n" * 8000 + "UNIQUE\n" + "x\n" * 8000 + "TWO\n")
    _grep(core, "UNIQUE|TWO")
    compared: list[tuple[int, int]] = []
    bounded = seen_lines.Bounded

    def spy(a: list[str], b: list[str], *rest: Any) -> Any:
        compared.append((len(a), len(b)))
        return bounded(a, b, *rest)

    monkeypatch.setattr(seen_lines, "Bounded", spy)
    edit = {"file_path": "f.txt", "old_string": "UNIQUE", "new_string": "ONE\nMORE"}
    calls.call(core, "edit", edit)
    assert compared == [(1, 2)], compared  # the changed middle alone
    # TWO, shown by the search, is now one line lower: still editable without a read.
    calls.call(core, "edit", {"file_path": "f.txt", "old_string": "TWO", "new_string": "2"})
    assert (workspace / "f.txt").read_text().endswith("x\n2\n")


def test_a_line_a_search_showed_between_two_changes_stays_editable(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "f.txt").write_text("FIRST\n" + "x\n" * 1500 + "MID\n" + "x\n" * 1500 + "LAST\n")
    _grep(core, "FIRST|MID|LAST")
    pairs = [{"old_string": "FIRST", "new_string": "1"}, {"old_string": "LAST", "new_string": "2"}]
    calls.call(core, "edit", {"file_path": "f.txt", "edits": pairs})
    calls.call(core, "edit", {"file_path": "f.txt", "old_string": "MID", "new_string": "m"})
    assert "\nm\n" in (workspace / "f.txt").read_text()
