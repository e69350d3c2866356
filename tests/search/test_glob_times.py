"""glob's cache of modification times (search/mtimes.py), kept across calls while the
watcher hears every change: a file touched, written in place, added or removed, a folder
moved, and an ignore file changed each show in the next globs, and nothing is cached
without a watcher or for a folder the watcher does not watch.

Waiting for the watcher is a poll with a deadline (watch_core_helpers.wait_for)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.search import listing
from watch_core_helpers import Watching, wait_for

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")

BASE_NS = 10**18


def _files(root: Path, names: list[str]) -> None:
    """`names`, the first the newest, one second apart."""
    for age, name in enumerate(names):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
        os.utime(path, ns=(BASE_NS - age * 10**9, BASE_NS - age * 10**9))


def _glob(core: Readkeeper, pattern: str = "**/*.py") -> list[str]:
    result: dict[str, Any] = calls.call(core, "glob", {"pattern": pattern})
    return [os.path.relpath(p, core.workspace.roots[0]) for p in result["paths"]]


@pytest.fixture
def watching(workspace: Path) -> Any:
    _files(workspace, ["a.py", "sub/b.py", "sub/c.py", "d.py"])
    (workspace / ".gitignore").write_text("*.log\n")
    watched = Watching(workspace).start()
    assert watched.status()["state"] == "watching"
    yield watched
    watched.core.close()


def _cached(watching: Watching) -> int:
    """Files whose time came from the cache, over a fresh glob."""
    before = watching.core.file_times.hits
    _glob(watching.core)
    return watching.core.file_times.hits - before


def test_times_are_kept_across_globs_while_the_watcher_hears(watching: Watching) -> None:
    core = watching.core
    assert _glob(core) == ["a.py", "sub/b.py", "sub/c.py", "d.py"]
    assert _cached(watching) == 5  # the second glob stat-ed none of the 5 (.gitignore too)


def test_a_touched_file_moves_to_the_top(watching: Watching, workspace: Path) -> None:
    core = watching.core
    _glob(core)
    # utime changes neither the folder's time nor the listing: only the event tells.
    os.utime(workspace / "sub" / "c.py", ns=(BASE_NS + 10**9, BASE_NS + 10**9))
    wait_for(lambda: _glob(core)[0] == "sub/c.py", "the touched file first")
    assert _glob(core) == ["sub/c.py", "a.py", "sub/b.py", "d.py"]


def test_a_file_written_in_place_moves_to_the_top(watching: Watching, workspace: Path) -> None:
    core = watching.core
    _glob(core)
    with open(workspace / "d.py", "r+") as file:  # the same inode: the folder keeps its time
        file.write("y")
    wait_for(lambda: _glob(core)[0] == "d.py", "the written file first")


def test_added_and_removed_files_show_at_once(watching: Watching, workspace: Path) -> None:
    core = watching.core
    _glob(core)
    _files(workspace, ["sub/new.py"])
    os.utime(workspace / "sub" / "new.py", ns=(BASE_NS + 10**9, BASE_NS + 10**9))
    (workspace / "a.py").unlink()
    # No wait: the listing is ripgrep's own, the new file's time is looked up.
    assert _glob(core) == ["sub/new.py", "sub/b.py", "sub/c.py", "d.py"]


def test_a_folder_moved_keeps_no_stale_time(watching: Watching, workspace: Path) -> None:
    core = watching.core
    _glob(core)
    (workspace / "sub").rename(workspace / "moved")
    assert _glob(core) == ["a.py", "moved/b.py", "moved/c.py", "d.py"]
    os.utime(workspace / "moved" / "c.py", ns=(BASE_NS + 10**9, BASE_NS + 10**9))
    wait_for(lambda: _glob(core)[0] == "moved/c.py", "the moved, touched file first")


def test_an_ignore_file_changed_applies_to_the_next_glob(
    watching: Watching, workspace: Path
) -> None:
    core = watching.core
    _glob(core)
    (workspace / ".ignore").write_text("sub/\n")  # ripgrep reads it outside git too
    assert _glob(core) == ["a.py", "d.py"]
    (workspace / ".ignore").write_text("")
    os.utime(workspace / "sub" / "b.py", ns=(BASE_NS + 10**9, BASE_NS + 10**9))
    wait_for(lambda: _glob(core)[0] == "sub/b.py", "the un-ignored, touched file first")
    assert _glob(core) == ["sub/b.py", "a.py", "sub/c.py", "d.py"]


def test_nothing_is_cached_without_a_watcher(core: Readkeeper, workspace: Path) -> None:
    _files(workspace, ["a.py", "b.py"])
    assert _glob(core) == ["a.py", "b.py"]
    os.utime(workspace / "b.py", ns=(BASE_NS + 10**9, BASE_NS + 10**9))
    assert _glob(core) == ["b.py", "a.py"]
    assert core.file_times.hits == 0


def test_a_folder_the_watcher_skips_is_never_cached(workspace: Path) -> None:
    _files(workspace, ["a.py", "skipped/b.py"])
    watched = Watching(workspace, {"watchExclude": ["skipped"]}).start()
    try:
        core = watched.core
        assert _glob(core) == ["a.py", "skipped/b.py"]
        assert _cached(watched) == 1  # a.py only
        os.utime(workspace / "skipped" / "b.py", ns=(BASE_NS + 10**9, BASE_NS + 10**9))
        assert _glob(core) == ["skipped/b.py", "a.py"]  # no event comes: stat-ed afresh
    finally:
        watched.core.close()


def test_a_path_through_a_symlink_out_is_never_stat_ed(core: Readkeeper, tmp_path: Path) -> None:
    """What ripgrep prints when a folder is swapped for a symlink mid-walk: the file
    beyond it is not stat-ed through the link, and is left out."""
    workspace = Path(core.workspace.roots[0])
    _files(workspace, ["a.py"])
    outside = tmp_path / "outside"
    _files(outside, ["secret.py"])
    os.utime(outside / "secret.py", ns=(BASE_NS + 10**9, BASE_NS + 10**9))
    (workspace / "link").symlink_to(outside, target_is_directory=True)
    opener = listing._opener(core, str(workspace), "")
    names = [b"a.py", b"link/secret.py"]
    newest, late = core.file_times.newest(str(workspace), names, 10, 10**12, opener)
    assert (newest, late) == ([(BASE_NS, b"a.py")], False)
