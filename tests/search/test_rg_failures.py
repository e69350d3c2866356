"""A search ripgrep could not finish never looks whole: a path it cannot reach (too long
for the kernel) or its death by a signal not of readkeeper's (the out-of-memory killer)
marks grep's and glob's answers partial, with a note that names no path of the
repository's (its words are data)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from deep_chain import LONG_NAME, PAST_PATH_MAX, MakeChain, chains

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.search import rg

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc, PATH_MAX")

CALLS = [
    ("glob", {"pattern": "**/*"}),
    ("grep", {"pattern": "x"}),
    ("grep", {"pattern": "x", "output": "files"}),
    ("grep", {"pattern": "x", "output": "counts"}),
]


@pytest.fixture
def deep_chain() -> Iterator[MakeChain]:
    yield from chains()


def test_a_path_ripgrep_cannot_reach_makes_the_answer_partial(
    core: Readkeeper, workspace: Path, deep_chain: MakeChain
) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    deep_chain(workspace, PAST_PATH_MAX, LONG_NAME)  # ripgrep cannot open deepest.txt
    for method, params in CALLS:
        result: dict[str, Any] = calls.call(core, method, params)
        assert result["partial"] is True, (method, params, result)
        assert "could not read" in result["note"], result["note"]
        assert "/d/d/" not in result["note"]  # ripgrep's message, a path, is not echoed


def _kill_rg_under(folder: Path, stop: threading.Event) -> None:
    """SIGKILL every ripgrep whose working folder is `folder`, as the kernel's
    out-of-memory killer would, until `stop`."""
    while not stop.is_set():
        for pid in filter(str.isdigit, os.listdir("/proc")):
            with contextlib.suppress(OSError):
                if Path(f"/proc/{pid}/comm").read_text().strip() != "rg":
                    continue
                if os.readlink(f"/proc/{pid}/cwd") == str(folder):
                    os.kill(int(pid), signal.SIGKILL)
        time.sleep(0.01)


def test_ripgrep_killed_by_a_signal_makes_the_answer_partial(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    (workspace / "sub").mkdir()
    (workspace / "sub" / "b.py").write_text("x = 2\n")
    os.mkfifo(workspace / "sub" / ".gitignore")  # holds ripgrep until it is killed
    stop = threading.Event()
    killer = threading.Thread(target=_kill_rg_under, args=(workspace, stop), daemon=True)
    killer.start()
    try:
        for method, params in CALLS:
            result: dict[str, Any] = calls.call(core, method, params)
            assert result["partial"] is True, (method, params, result)
            assert "No matches." not in result.get("note", "")
            assert "No files match." not in result.get("note", "")
    finally:
        stop.set()
        killer.join()


@pytest.mark.skipif(rg.landlock_abi() < 1, reason="the cap is set where ripgrep is confined")
def test_a_huge_ignore_file_cannot_grow_ripgrep_past_its_memory_cap(
    core: Readkeeper, workspace: Path
) -> None:
    """A sparse `.gitignore` of 2 GiB (cheap to make, any user can): ripgrep reads ignore
    files whole, so it meets its data cap (files/landlock.py DATA_LIMIT_BYTES, 1 GiB)
    and dies there; the answer is partial, never a server or a machine out of memory."""
    (workspace / "a.py").write_text("x = 1\n")
    (workspace / "sub").mkdir()
    (workspace / "sub" / "b.py").write_text("x = 2\n")
    with open(workspace / "sub" / ".gitignore", "wb") as file:
        file.truncate(2 << 30)
    for method, params in CALLS[:2]:
        result: dict[str, Any] = calls.call(core, method, params)
        assert result["partial"] is True, (method, params, result)
    # It died at its cap (an allocation failure aborts it), not at the search's deadline.
    result = calls.call(core, "grep", {"pattern": "x"})
    assert "ripgrep was stopped by signal" in result["note"], result["note"]
    assert "ran out of time" not in result["note"], result["note"]


@pytest.mark.parametrize("status", [125, 127])
def test_a_run_the_launcher_never_made_is_failed_not_empty(status: int) -> None:
    """The launchers' own statuses (125: Landlock could not be applied, 127: the program
    could not be started) mean ripgrep never searched: the answer is partial and says
    so, never "No matches." (ripgrep itself ends 0, 1 or 2)."""
    ran = rg.Run(returncode=status, error="readkeeper: Landlock could not be applied\n")
    result = rg.said_failed({"matches": [], "partial": False, "note": "No matches."}, ran)
    assert result["partial"] is True
    assert "No matches." not in result["note"]
    assert "nothing was searched" in result["note"]
