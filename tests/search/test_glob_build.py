"""The times glob orders by, read from nothing (search/lookup.py, search/mtimes.py): the
names of a folder looked up in runs however they come, the times read kept whole and
then told of changes as any, the files gone since ripgrep listed them left out, a
symlink's and a FIFO's own times (never a target's, never opened), ties ordered by the
greater name first, a look stopped by its caller keeping what it read, the root's
listing built (search/ahead.py) leaving out an ignored folder, and a listing not yet
in order answering by its matches' times (its order made after the answer).

Each answer is checked against the times `os.lstat` reads now."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from glob_trees import git_listed

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.search import listing, rg
from readkeeper.search.ahead import ListingAhead
from readkeeper.search.lookup import CHECK_EVERY
from watch_core_helpers import Watching, wait_for

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")

BASE_NS = 10**18
FOLDERS = ["a", "b", "c"]
FAR = 10**12  # a deadline never met (time.monotonic() seconds)


def _tree(root: Path, per_folder: int) -> list[bytes]:
    """`per_folder` files in each of FOLDERS, three times among them all (ties within a
    folder and across folders), as names interleaved folder by folder."""
    names = []
    for n in range(per_folder):
        for folder in FOLDERS:
            path = root / folder / f"m{n:04d}.py"
            path.parent.mkdir(exist_ok=True)
            path.write_text("x\n")
            when = BASE_NS + (n % 3) * 10**9
            os.utime(path, ns=(when, when))
            names.append(f"{folder}/m{n:04d}.py".encode())
    return names


def _odd_ones(root: Path, outside: Path) -> list[bytes]:
    """A symlink to a newer file outside, a FIFO, and two names gone since listed."""
    outside.mkdir()
    (outside / "target.py").write_text("x\n")
    os.utime(outside / "target.py", ns=(BASE_NS * 2, BASE_NS * 2))
    (root / "a" / "link.py").symlink_to(outside / "target.py")
    os.utime(root / "a" / "link.py", ns=(BASE_NS + 10**9, BASE_NS + 10**9), follow_symlinks=False)
    os.mkfifo(root / "b" / "pipe")
    os.utime(root / "b" / "pipe", ns=(BASE_NS + 5 * 10**9, BASE_NS + 5 * 10**9))
    return [b"a/link.py", b"b/pipe", b"c/gone.py", b"gone/x.py"]


def _by_lstat(root: Path, names: list[bytes]) -> list[tuple[int, bytes]]:
    """`names` there now with their own times, newest first, ties by the greater name."""
    found = []
    for name in names:
        try:
            found.append((os.lstat(root / os.fsdecode(name)).st_mtime_ns, name))
        except FileNotFoundError:
            continue
    return sorted(found, reverse=True)


@pytest.fixture
def watched(workspace: Path) -> Any:
    watching = Watching(workspace, {"readAhead": False})
    yield watching
    watching.core.close()


def _start(watching: Watching) -> Readkeeper:
    watching.start()
    assert watching.status()["state"] == "watching"
    return watching.core


def test_times_read_from_nothing_are_kept_and_told_of_changes(
    watched: Watching, workspace: Path, tmp_path: Path
) -> None:
    names = _tree(workspace, 40) + _odd_ones(workspace, tmp_path / "outside")
    core = _start(watched)
    times, root = core.file_times, str(workspace)
    opener = listing._opener(core, root, "")
    there = len(names) - 2
    newest, late = times.newest(root, names, len(names), FAR, opener)
    assert (newest, late) == (_by_lstat(workspace, names), False)
    assert (BASE_NS + 10**9, b"a/link.py") in newest  # the link's own time
    hits = times.hits
    assert times.newest(root, names, 5, FAR, opener) == (_by_lstat(workspace, names)[:5], False)
    assert times.hits - hits == there  # every time kept; the gone ones looked for again
    os.utime(workspace / "c" / "m0007.py", ns=(BASE_NS * 3, BASE_NS * 3))
    wait_for(
        lambda: times.newest(root, names, 1, FAR, opener)[0] == [(BASE_NS * 3, b"c/m0007.py")],
        "the touched file first",
    )
    assert times.newest(root, names, len(names), FAR, opener)[0] == _by_lstat(workspace, names)


def test_a_look_stopped_by_its_caller_keeps_the_times_it_read(
    watched: Watching, workspace: Path
) -> None:
    names = _tree(workspace, 400)  # 1,200 files: the stop is asked after 512 stats
    core = _start(watched)
    times, root = core.file_times, str(workspace)
    opener = listing._opener(core, root, "")
    asked = []

    def stop() -> bool:
        asked.append(True)
        return True

    assert times.newest(root, names, 1, FAR, opener, stop=stop) == ([], True)
    assert asked == [True]
    hits = times.hits
    assert times.newest(root, names, 10, FAR, opener) == (_by_lstat(workspace, names)[:10], False)
    assert CHECK_EVERY <= times.hits - hits < len(names)  # read before the stop: not again


@pytest.mark.skipif(rg.landlock_abi() < 1, reason="a listing is kept only under Landlock")
def test_the_root_s_build_orders_ties_by_name_and_leaves_out_an_ignored_folder(
    watched: Watching, workspace: Path
) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    names = _tree(workspace, 30)
    (workspace / "build").mkdir()
    (workspace / "build" / "out.py").write_text("x\n")
    os.utime(workspace / "build" / "out.py", ns=(BASE_NS * 2, BASE_NS * 2))
    (workspace / ".gitignore").write_text("build/\n")
    os.utime(workspace / ".gitignore", ns=(BASE_NS - 10**9, BASE_NS - 10**9))
    core = _start(watched)
    assert ListingAhead(core.file_times, lambda: core.workspace)(lambda: False) == 1
    used = core.file_times.listings_used
    result = calls.call(core, "glob", {"pattern": "**/*"})
    assert core.file_times.listings_used == used + 1  # answered from the build
    shown = [os.path.relpath(path, workspace).encode() for path in result["paths"]]
    listed = sorted(name.encode() for name in git_listed(workspace))
    assert shown == [name for _, name in _by_lstat(workspace, listed)]
    assert b"build/out.py" not in shown
    assert len(shown) == len(names) + 1  # and .gitignore


@pytest.mark.skipif(rg.landlock_abi() < 1, reason="a listing is kept only under Landlock")
def test_a_listing_not_yet_in_order_answers_by_its_matches_and_is_ordered_after(
    watched: Watching, workspace: Path
) -> None:
    """A listing ripgrep made but no build ordered (a build stopped by a call): a glob
    looks up its matches' times only, and the order of all is made after its answer."""
    names = _tree(workspace, 30)
    core = _start(watched)
    times, root = core.file_times, str(workspace)
    token = times.listing(root, used=False)[1]
    assert listing.list_files(root, root, times, token)[1] == ""
    assert not times.ordered(root)
    started = times.builds.counts["started"]
    result = calls.call(core, "glob", {"pattern": "b/*.py"})
    shown = [os.path.relpath(path, workspace).encode() for path in result["paths"]]
    b_files = [name for name in names if name.startswith(b"b/")]
    assert shown == [name for _, name in _by_lstat(workspace, b_files)]
    assert times.builds.counts["started"] == started + 1  # the order, after the answer
    times.builds.wait()
    assert times.ordered(root)
    used, hits = times.listings_used, times.hits
    result = calls.call(core, "glob", {"pattern": "**/*.py"})
    shown = [os.path.relpath(path, workspace).encode() for path in result["paths"]]
    assert shown == [name for _, name in _by_lstat(workspace, names)]
    assert (times.listings_used, times.hits) == (used + 1, hits + len(names))
