"""The first glob of a server whose watcher hears the tree is answered as a glob with no
watcher is (ripgrep sorts by time), and the listing is kept after the answer
(search/deferred.py): a change made between the answer and the kept listing shows in
the next glob, a glob arriving mid-build joins it and answers what a fresh ripgrep run
answers, and a closed core leaves no build running."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from glob_trees import git_listed, make

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.search import rg
from watch_core_helpers import Watching

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify"),
    pytest.mark.skipif(rg.landlock_abi() < 1, reason="a listing is kept only under Landlock"),
]

# Distinct times, an hour apart, the last named the newest: the order is never a tie.
FILES = ["a.py", "b.txt", "sub/c.py", "sub/deep/d.py", "other/e.md", "logs/x.log"]
BASE_NS = 1_700_000_000 * 10**9


def _tree(root: Path, names: list[str]) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("*.log\n")
    make(root, names)
    for age, name in enumerate(reversed(names)):
        when = BASE_NS - age * 3600 * 10**9
        os.utime(root / name, ns=(when, when))
    when = BASE_NS - len(names) * 3600 * 10**9
    os.utime(root / ".gitignore", ns=(when, when))


def _glob(core: Readkeeper, pattern: str = "**/*") -> list[str]:
    result: dict[str, Any] = calls.call(core, "glob", {"pattern": pattern})
    return [os.path.relpath(p, core.workspace.roots[0]) for p in result["paths"]]


def _watching(root: Path) -> Watching:
    # Nothing built ahead between calls: only the first glob's own build keeps a listing.
    watching = Watching(root, {"readAhead": False}).start()
    assert watching.status()["state"] == "watching"
    return watching


@pytest.fixture
def watched(workspace: Path) -> Any:
    _tree(workspace, FILES)
    watching = _watching(workspace)
    yield watching
    watching.core.close()


def _no_watcher(root: Path, pattern: str = "**/*") -> list[str]:
    """The answer of a core with no watcher (ripgrep sorts by time: a fresh run)."""
    core = Readkeeper(roots=[str(root)])
    try:
        return _glob(core, pattern)
    finally:
        core.close()


def test_the_first_glob_is_answered_before_the_listing_is_kept(
    watched: Watching, workspace: Path
) -> None:
    core = watched.core
    times = core.file_times
    newest_first = ["other/e.md", "sub/deep/d.py", "sub/c.py", "b.txt", "a.py", ".gitignore"]
    assert _glob(core) == newest_first
    assert times.builds.counts["started"] == 1  # the listing is built after the answer
    assert times.listings_used == 0
    times.builds.wait()
    assert times.ready(str(workspace))
    assert _glob(core) == newest_first
    assert times.listings_used == 1  # the next glob ran no ripgrep


def test_a_change_between_the_answer_and_the_kept_listing_shows(
    watched: Watching, workspace: Path
) -> None:
    core = watched.core
    _glob(core)
    # Made while the build runs (or before it starts, or after it ends): each is heard.
    make(workspace, ["new/f.py"])
    (workspace / "b.txt").unlink()
    when = (workspace / "new" / "f.py").stat().st_mtime_ns + 10**9
    os.utime(workspace / "a.py", ns=(when, when))  # newer than the new file
    core.file_times.builds.wait()
    got = _glob(core)
    assert got[:2] == ["a.py", "new/f.py"]
    assert set(got) == git_listed(workspace)
    assert got == _no_watcher(workspace)


def test_a_glob_arriving_mid_build_joins_it(workspace: Path) -> None:
    names = [f"p{n // 50}/m{n}.py" for n in range(3000)]
    _tree(workspace, names)
    watching = _watching(workspace)
    core = watching.core
    try:
        first = _glob(core, "**/*.py")
        assert core.file_times.builds.running(os.fsencode(str(workspace))) or (
            core.file_times.ready(str(workspace))
        )
        second = _glob(core, "**/*.py")  # joins the build when it still runs
        assert first == second == _no_watcher(workspace, "**/*.py")
        assert core.file_times.builds.counts["started"] == 1  # joined, or it had ended
        assert core.file_times.ready(str(workspace))
    finally:
        core.close()


def test_closing_the_core_stops_the_build(workspace: Path) -> None:
    names = [f"p{n // 50}/m{n}.py" for n in range(3000)]
    _tree(workspace, names)
    watching = _watching(workspace)
    core = watching.core
    _glob(core, "**/*.py")
    core.close()
    assert not [t for t in threading.enumerate() if t.name == "readkeeper-glob-build"]


@pytest.mark.parametrize("pattern", ["*.{py,md}", "**/*.{py,md}", "[", "*.[pm]*", "c\\.py"])
def test_the_first_answer_and_the_kept_one_read_a_pattern_alike(
    workspace: Path, pattern: str
) -> None:
    """The first glob is answered by ripgrep's sort, the next from the kept listing: one
    syntax for both (gitignore's), whatever ripgrep's own glob syntax makes of it."""
    _tree(workspace, [*FILES, "sub/x.{py,md}"])
    watching = _watching(workspace)
    try:
        core = watching.core
        first = _glob(core, pattern)
        core.file_times.builds.wait()
        assert _glob(core, pattern) == first
        assert _no_watcher(workspace, pattern) == first
    finally:
        watching.core.close()
