"""A glob whose ripgrep run did not list every file says why (the run's own failure, as
grep does: a path it could not read, a signal, its deadline) and what to do next; and
with no watcher, a glob whose time-sorted run passed its deadline (ripgrep prints
nothing until its sort ends) still answers the newest of what an unsorted listing found
in the time left, marked partial."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from deep_chain import LONG_NAME, PAST_PATH_MAX, MakeChain, chains
from glob_trees import make
from test_rg_failures import _kill_rg_under

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.search import rg

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="FIFOs, PATH_MAX")

GENERIC = "The walk stopped early"


@pytest.fixture
def deep_chain() -> Iterator[MakeChain]:
    yield from chains()


def _glob(core: Readkeeper) -> dict[str, Any]:
    result: dict[str, Any] = calls.call(core, "glob", {"pattern": "**/*.py"})
    return result


def test_a_path_ripgrep_cannot_reach_is_named_in_glob_s_note(
    core: Readkeeper, workspace: Path, deep_chain: MakeChain
) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    deep_chain(workspace, PAST_PATH_MAX, LONG_NAME)  # ripgrep cannot open deepest.txt
    result = _glob(core)
    assert result["partial"] is True
    assert "ripgrep could not read 1 path" in result["note"], result["note"]
    assert "narrow path" in result["note"]
    assert GENERIC not in result["note"]


def test_ripgrep_killed_is_named_in_glob_s_note(core: Readkeeper, workspace: Path) -> None:
    make(workspace, ["a.py", "sub/b.py"])
    os.mkfifo(workspace / "sub" / ".gitignore")  # holds ripgrep until it is killed
    stop = threading.Event()
    killer = threading.Thread(target=_kill_rg_under, args=(workspace, stop), daemon=True)
    killer.start()
    try:
        result = _glob(core)
    finally:
        stop.set()
        killer.join()
    assert result["partial"] is True
    assert "ripgrep was stopped by signal 9" in result["note"], result["note"]
    assert GENERIC not in result["note"]


def _times(workspace: Path, names: list[str]) -> None:
    """Distinct modification times, the later names the newer."""
    for index, name in enumerate(names):
        os.utime(workspace / name, ns=(0, (1_600_000_000 + index) * 10**9))


def test_a_sorted_glob_past_its_deadline_answers_what_it_listed(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No watcher (the CLI): ripgrep sorts by time itself and prints nothing until the
    sort ends. A tree it cannot finish within the deadline (lowered here; a FIFO ignore
    file holds its one-thread walk for good, as a tree too big for the deadline would)
    still gets the newest of the files an unsorted listing found, partial, with a note
    saying so."""
    monkeypatch.setattr(rg, "DEADLINE_S", 3.0)
    names = [f"d{i}/f{j}.py" for i in range(40) for j in range(25)] + ["sub/b.py"]
    make(workspace, names)
    _times(workspace, names[:-1])
    os.mkfifo(workspace / "sub" / ".gitignore")
    result = _glob(core)
    assert result["partial"] is True, result
    assert result["paths"], result
    times = [os.stat(path).st_mtime_ns for path in result["paths"]]
    assert times == sorted(times, reverse=True), "not newest first"
    assert "not sorted by ripgrep" in result["note"], result["note"]
    assert "ran out of time" in result["note"], result["note"]
    assert GENERIC not in result["note"]


def test_a_grep_past_its_deadline_answers_the_matches_printed(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ripgrep's output to a pipe is block-buffered: killed at its deadline (a FIFO
    ignore file holds one thread of its walk for good), what it found but had not yet
    flushed was lost, and a search that found matches answered none."""
    monkeypatch.setattr(rg, "DEADLINE_S", 3.0)
    names = [f"d{i}/f.py" for i in range(50)] + ["sub/b.py"]
    make(workspace, names)
    for name in names:
        (workspace / name).write_text("needle = 1\n")
    os.mkfifo(workspace / "sub" / ".gitignore")
    for output in ("matches", "files", "counts"):
        result: dict[str, Any] = calls.call(core, "grep", {"pattern": "needle", "output": output})
        assert result["partial"] is True, result
        found = result.get("matches") or result.get("files") or result.get("counts")
        assert found, (output, result)


def test_grep_files_keeps_a_name_holding_line_breaks_whole(
    core: Readkeeper, workspace: Path
) -> None:
    """grep's file list is read from ripgrep's counts (`--count --null`): a name with
    line breaks, even one that ends in a number line, is one name."""
    names = ["plain.py", "a\nb.py", "7\n8", "x\n"]
    for name in names:
        (workspace / name).write_text("needle\n")
    result: dict[str, Any] = calls.call(core, "grep", {"pattern": "needle", "output": "files"})
    assert sorted(result["files"]) == sorted(str(workspace / name) for name in names)
    one: dict[str, Any] = calls.call(
        core, "grep", {"pattern": "needle", "output": "files", "path": "a\nb.py"}
    )
    assert one["files"] == [str(workspace / "a\nb.py")]
