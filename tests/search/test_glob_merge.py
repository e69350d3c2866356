"""glob's cold answer, ripgrep's sort split over runs and merged (search/merge.py): the
same files as one run and as git lists, every folder's ignore files kept to whatever the
split, tied files in the kept listing's order (newest first, the greater name first),
cold and kept alike, a next page continuing the merge; and the merge itself: a file gone
since its run listed it left out, a symlink's and a FIFO's own times (never followed,
never opened), an entry listed by two runs taken once."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from glob_trees import git_listed, make

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.search import merge, rg
from readkeeper.search.listing import opener_at
from watch_core_helpers import Watching

BASE_NS = 1_700_000_000 * 10**9
FAR = 10**12  # a deadline never met (time.monotonic() seconds)


@pytest.fixture(params=[1, 2, 3], ids=["one run", "two runs", "three runs"])
def runs(request: pytest.FixtureRequest) -> Iterator[int]:
    before = merge.SPLIT
    merge.SPLIT = request.param
    yield request.param
    merge.SPLIT = before


def _glob(core: Readkeeper, pattern: str = "**/*", offset: int = 0) -> dict[str, Any]:
    result: dict[str, Any] = calls.call(core, "glob", {"pattern": pattern, "offset": offset})
    root = core.workspace.roots[0]
    result["paths"] = [os.path.relpath(p, root) for p in result["paths"]]
    return result


def _cold(root: Path, pattern: str = "**/*", offset: int = 0) -> dict[str, Any]:
    """The answer of a core with no watcher (nothing kept: ripgrep sorts)."""
    core = Readkeeper(roots=[str(root)])
    try:
        return _glob(core, pattern, offset)
    finally:
        core.close()


def _tied(root: Path, names: list[str], groups: int = 3) -> None:
    """`names` made, in `groups` times among them (ties within a folder and across)."""
    make(root, names)
    for n, name in enumerate(names):
        when = BASE_NS + (n % groups) * 10**9
        os.utime(root / name, ns=(when, when))


def _expected(root: Path, names: set[str]) -> list[str]:
    """`names` newest first by their own times now, ties the greater name first."""
    timed = [(os.lstat(root / name).st_mtime_ns, name) for name in names]
    return [name for _, name in sorted(timed, reverse=True)]


def _git_tree(root: Path) -> list[str]:
    """A repository with an ignore file at the root and one in a top-level folder, an
    ignored top-level folder and an ignored folder inside a kept one, names with glob
    characters, and ties."""
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    names = [
        *(f"p{n % 5}/m{n}.py" for n in range(40)),
        "p1/.gitignore",
        "p1/gen/skip.py",
        "p1/keep.log",
        "build/out.py",
        "a[b]*/c.py",
        "{x,y}/d.py",
        "top.py",
        "top.log",
    ]
    (root / "p1").mkdir()
    (root / "p1" / ".gitignore").write_text("gen/\n!keep.log\n")
    _tied(root, [n for n in names if n != "p1/.gitignore"])
    return names


def test_the_split_keeps_every_folder_s_ignore_files(workspace: Path, runs: int) -> None:
    _git_tree(workspace)
    got = _cold(workspace)
    assert got["paths"] == _expected(workspace, git_listed(workspace))
    assert "build/out.py" not in got["paths"]
    assert "p1/gen/skip.py" not in got["paths"]
    assert "p1/keep.log" in got["paths"]  # re-included by the folder's own file
    assert not got["partial"]
    named = _cold(workspace, "*.py")  # a name-only pattern: ripgrep selects the files
    assert named["paths"] == [p for p in got["paths"] if p.endswith(".py")]


def test_the_split_leaves_no_entry_out_and_none_twice(workspace: Path) -> None:
    names = [f"d{n:02d}/f{m}.txt" for n in range(12) for m in range(3)] + ["loose.txt"]
    _tied(workspace, names, groups=5)
    split = merge.parts(opener_at(_anchor(workspace), str(workspace)), 3)
    assert sorted(name for part in split for name in part) == sorted(os.listdir(workspace))
    before = merge.SPLIT
    try:
        answers = []
        for count in (1, 2, 3, 4):
            merge.SPLIT = count
            answers.append(_cold(workspace)["paths"])
    finally:
        merge.SPLIT = before
    assert all(answer == _expected(workspace, set(names)) for answer in answers)


def _anchor(root: Path) -> Any:
    core = Readkeeper(roots=[str(root)])
    try:
        where = core.workspace.locate(str(root), "")
        assert where is not None
        return where.anchor
    finally:
        core.close()


@pytest.mark.parametrize("groups", [200, 2], ids=["small ties", "ties across the cap"])
def test_a_next_page_continues_the_merge(workspace: Path, runs: int, groups: int) -> None:
    names = [f"q{n % 7}/f{n:04d}.py" for n in range(1100)]
    _tied(workspace, names, groups)
    pages = [_cold(workspace, "**/*.py")]
    while "next" in pages[-1]:  # cut by the count's cap or the token cap: either way
        pages.append(_cold(workspace, "**/*.py", offset=pages[-1]["next"]["offset"]))
    assert len(pages) > 1
    assert [p for page in pages for p in page["paths"]] == _expected(workspace, set(names))
    assert not pages[-1]["partial"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")
@pytest.mark.skipif(rg.landlock_abi() < 1, reason="a listing is kept only under Landlock")
def test_tied_files_come_in_one_order_cold_and_kept(workspace: Path, runs: int) -> None:
    _git_tree(workspace)
    watching = Watching(workspace, {"readAhead": False}).start()
    try:
        core = watching.core
        cold = _glob(core)["paths"]  # ripgrep's sort, merged
        core.file_times.builds.wait()
        assert core.file_times.ready(str(workspace))
        kept = _glob(core)["paths"]
        assert core.file_times.listings_used == 1  # answered from the kept listing
        assert cold == kept == _expected(workspace, git_listed(workspace))
    finally:
        watching.core.close()


def _streams_opener(root: Path) -> Any:
    return opener_at(_anchor(root), str(root))


def test_the_merge_stats_by_name_and_leaves_out_what_is_gone(
    workspace: Path, tmp_path: Path
) -> None:
    make(workspace, ["a/x.py", "a/y.py", "b/z.py", "b/gone.py"])
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "target.py").write_text("x\n")
    os.utime(outside / "target.py", ns=(BASE_NS * 2, BASE_NS * 2))
    (workspace / "a" / "link.py").symlink_to(outside / "target.py")
    os.mkfifo(workspace / "b" / "pipe")
    times = {"a/x.py": 5, "a/y.py": 3, "b/z.py": 4, "b/gone.py": 6, "a/link.py": 2, "b/pipe": 1}
    for name, when in times.items():
        os.utime(workspace / name, ns=(BASE_NS + when, BASE_NS + when), follow_symlinks=False)
    # Each stream newest first, as its run sorted it; b/gone.py goes after the listing.
    first = [b"b/gone.py", b"a/x.py", b"a/link.py"]
    second = [b"b/z.py", b"a/y.py", b"b/pipe", b"c/none.py"]
    (workspace / "b" / "gone.py").unlink()
    opener = _streams_opener(workspace)
    got, late, more = merge.newest([first, second], 10, opener, FAR)
    # The link's own time (not its target's, newer than all), the FIFO's (never opened).
    assert got == [b"a/x.py", b"b/z.py", b"a/y.py", b"a/link.py", b"b/pipe"]
    assert not late
    assert not more
    assert merge.newest([first, second], 2, opener, FAR)[0] == [b"a/x.py", b"b/z.py"]


def test_the_merge_orders_ties_by_name_and_takes_an_entry_once(workspace: Path) -> None:
    names = ["b/m.py", "a/m.py", "c/m.py", "a/n.py", "new/f.py"]
    make(workspace, names)
    for name in names:
        os.utime(workspace / name, ns=(BASE_NS, BASE_NS))
    later = BASE_NS + 10**9
    os.utime(workspace / "a" / "n.py", ns=(later, later))
    # Ties in walk order, as ripgrep prints them; an entry made after the split is in
    # every run's output.
    first = [b"a/n.py", b"c/m.py", b"new/f.py", b"a/m.py"]
    second = [b"new/f.py", b"b/m.py"]
    opener = _streams_opener(workspace)
    got = merge.newest([first, second], 10, opener, FAR)[0]
    assert got == [b"a/n.py", b"new/f.py", b"c/m.py", b"b/m.py", b"a/m.py"]
    # A run cut at its line cap inside a tie may have left out a tied name that comes
    # first here: the merge says so (the caller lists again, uncut).
    assert merge.newest([first[:2]], 2, opener, FAR, cut=[True])[2]
    assert not merge.newest([first[:2]], 1, opener, FAR, cut=[True])[2]
    assert not merge.newest([first[:2]], 2, opener, FAR, cut=[False])[2]


def test_a_top_level_no_glob_names_exactly_is_sorted_in_one_run(workspace: Path) -> None:
    opener = _streams_opener(workspace)
    make(workspace, ["a/x.py", "b/y.py"])
    assert len(merge.parts(opener, 2)) == 2
    assert merge.parts(opener, 1) == []
    odd = os.fsencode(str(workspace)) + b"/odd\xff"
    os.mkdir(odd)
    assert merge.parts(opener, 2) == []  # not UTF-8: ripgrep takes no such glob
    os.rmdir(odd)
    for n in range(merge.MAX_ENTRIES):
        (workspace / f"f{n}").write_text("")
    assert merge.parts(opener, 2) == []  # too many globs


def test_links_and_a_fifo_are_neither_followed_nor_opened(
    workspace: Path, tmp_path: Path, runs: int
) -> None:
    """Links out (to a newer file, to a folder of files) and a FIFO at the top level and
    beneath: the split's answer is one run's, with nothing reached through a link."""
    _tied(workspace, ["a/x.py", "b/y.py", "c/z.py", "top.py"])
    outside = tmp_path / "outside"
    make(outside, ["newer.py", "folder/inner.py"])
    later = BASE_NS + 10 * 10**9
    os.utime(outside / "newer.py", ns=(later, later))
    (workspace / "a" / "link.py").symlink_to(outside / "newer.py")
    (workspace / "linked").symlink_to(outside / "folder")
    os.mkfifo(workspace / "b" / "pipe.py")
    os.mkfifo(workspace / "pipe.py")
    before = merge.SPLIT
    try:
        merge.SPLIT = 1
        one = _cold(workspace)["paths"]
    finally:
        merge.SPLIT = before
    got = _cold(workspace)["paths"]  # with `runs` runs; a FIFO opened would block here
    assert got == one
    assert not {"a/link.py", "linked/inner.py", "inner.py"} & set(got)
    assert {"a/x.py", "b/y.py", "c/z.py", "top.py"} <= set(got)
