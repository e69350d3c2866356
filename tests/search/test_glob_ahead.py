"""Each root's glob listing built ahead, between calls (search/ahead.py): the first glob
after the build runs no ripgrep and stats no file, a change made after the build shows
in it, a call arriving mid-build stops the build at its next step, the `read_ahead`
setting off builds nothing; and a subfolder's glob answers from the root's listing,
which must be what ripgrep lists run in that folder (checked against fresh ripgrep runs
and `git check-ignore` on trees of nested ignore files)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from glob_trees import git_listed, make, there

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.search import ahead as search_ahead
from readkeeper.search import rg
from readkeeper.search.ahead import ListingAhead
from watch_core_helpers import Watching, wait_for_ahead

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify"),
    pytest.mark.skipif(rg.landlock_abi() < 1, reason="a listing is kept only under Landlock"),
]

FILES = ["a.py", "b.txt", "sub/c.py", "sub/deep/d.py", "other/e.md", "logs/x.log"]


def _glob(core: Readkeeper, path: str | None = None, pattern: str = "**/*") -> set[str]:
    params: dict[str, Any] = {"pattern": pattern}
    if path is not None:
        params["path"] = path
    result = calls.call(core, "glob", params)
    return {os.path.relpath(p, core.workspace.roots[0]) for p in result["paths"]}


def _job(core: Readkeeper) -> ListingAhead:
    return next(job for job in core.ahead.jobs if isinstance(job, ListingAhead))


def _watching(root: Path, **settings: object) -> Watching:
    """A core watching `root`, the machine said idle before the setup ends (so that
    its end triggers the build whatever the shared machine's load)."""
    watching = Watching(root, settings or None)
    watching.core.ahead.busy = lambda: False
    return watching.start()


def _built(core: Readkeeper) -> None:
    root = core.workspace.roots[0]
    wait_for_ahead(lambda: core.file_times.ready(root), "the listing built ahead")


@pytest.fixture
def built(workspace: Path) -> Any:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    make(workspace, FILES)
    (workspace / ".gitignore").write_text("*.log\n")
    watching = _watching(workspace)
    _built(watching.core)
    yield watching.core
    watching.core.close()


def test_the_first_glob_after_the_build_runs_no_ripgrep(built: Readkeeper, workspace: Path) -> None:
    times = built.file_times
    # (the job counts its build just after the listing is ready: waited for)
    wait_for_ahead(lambda: _job(built).counts["built"] == 1, "the build counted")
    hits = times.hits
    assert _glob(built) == git_listed(workspace)
    assert times.listings_used == 1  # no ripgrep run
    assert times.hits - hits == len(git_listed(workspace))  # no file stat-ed
    assert _glob(built, pattern="**/*.py") == {"a.py", "sub/c.py", "sub/deep/d.py"}


def test_the_first_glob_of_a_subfolder_answers_from_the_root_s_listing(
    built: Readkeeper, workspace: Path
) -> None:
    times = built.file_times
    assert _glob(built, "sub") == {"sub/c.py", "sub/deep/d.py"}
    assert _glob(built, "sub/deep", "*.py") == {"sub/deep/d.py"}
    assert times.listings_used == 2
    ordered = calls.call(built, "glob", {"pattern": "**/*", "path": "sub"})["paths"]
    assert ordered == sorted(ordered, key=lambda p: (os.stat(p).st_mtime_ns, p), reverse=True)
    # A folder the root's listing holds nothing of (all its files ignored): ripgrep runs.
    used = times.listings_used
    assert _glob(built, "logs") == set()
    assert times.listings_used == used


@pytest.mark.parametrize(
    "change",
    [
        "file created",
        "file removed",
        "folder renamed",
        "ignore file edited",
        "nested ignore file created",
        "exclude file edited",
    ],
)
@pytest.mark.parametrize("path", [None, "sub"])
def test_a_change_after_the_build_shows_in_the_first_glob(
    built: Readkeeper, workspace: Path, change: str, path: str | None
) -> None:
    if change == "file created":
        make(workspace, ["sub/deep/new.py"])
    elif change == "file removed":
        (workspace / "sub" / "c.py").unlink()
    elif change == "folder renamed":
        (workspace / "sub" / "deep").rename(workspace / "sub" / "moved")
    elif change == "ignore file edited":
        (workspace / ".gitignore").write_text("*.log\n*.py\n")
    elif change == "nested ignore file created":
        (workspace / "sub" / ".gitignore").write_text("deep/\n")
    elif change == "exclude file edited":
        (workspace / ".git" / "info" / "exclude").write_text("c.py\n")
    expected = git_listed(workspace)
    if path is not None:
        expected = {name for name in expected if name.startswith(path + "/")}
    assert _glob(built, path) == expected


@pytest.mark.parametrize("at_check", [1, 2, 3, 8])
def test_a_call_arriving_mid_build_stops_it_at_its_next_step(
    workspace: Path, at_check: int
) -> None:
    """The call arrives at the build's `at_check`th look (the roots' loop, then after
    each chunk of ripgrep's output and every few hundred stats): the build stops there,
    orders nothing, and the call answers with the tree as it is."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    # Enough files that the stats alone look a dozen times, however ripgrep's output
    # arrives (in one chunk on an idle machine: 3,000 files left the 8th look to chance).
    make(workspace, [f"f{n // 100}/m{n}.py" for n in range(6000)])
    watching = _watching(workspace, read_ahead=False)  # the test drives the worker
    core = watching.core
    try:
        ahead, job = core.ahead, _job(core)
        trigger = ahead._calls
        looks = 0
        arrived = threading.Event()
        held = core.ahead.call()

        def interrupted() -> bool:
            nonlocal looks
            looks += 1
            if looks == at_check:
                held.__enter__()  # a call is in flight from here on
                arrived.set()
            return ahead._interrupted(trigger)

        assert job(interrupted) == 0
        assert arrived.is_set(), "the build ended before the call came"
        assert looks == at_check  # it stopped at the very look that saw the call
        assert job.counts["stopped_by_call"] == 1
        assert not core.file_times.ready(str(workspace))
        try:
            assert _glob(core, pattern="f1/*") == {f"f1/m{n}.py" for n in range(100, 200)}
        finally:
            held.__exit__(None, None, None)
    finally:
        core.close()


def test_a_listing_dropped_is_built_again_once_calls_are_quiet(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_ahead, "REBUILD_S", 0.0)  # no wait between two builds
    make(workspace, FILES)
    watching = _watching(workspace)
    core = watching.core
    try:
        _built(core)
        make(workspace, ["new/file.py"])  # the listing is dropped
        wait_for_ahead(lambda: not core.file_times.ready(str(workspace)), "the listing dropped")
        calls.call(core, "stats", {})  # a call ends: a trigger
        _built(core)
        used = core.file_times.listings_used
        assert "new/file.py" in _glob(core)
        assert core.file_times.listings_used == used + 1
    finally:
        core.close()


def test_the_setting_off_builds_nothing(workspace: Path) -> None:
    make(workspace, FILES)
    watching = _watching(workspace, read_ahead=False)
    core = watching.core
    try:
        calls.call(core, "stats", {})
        assert core.ahead.settle(10.0)
        assert core.ahead.run_once() == 0
        assert _job(core).counts == {"built": 0, "stopped_by_call": 0}
        assert not core.file_times.ready(str(workspace))
        _glob(core)
        assert core.file_times.listings_used == 0  # ripgrep ran
    finally:
        core.close()


# Nested ignore files of every kind ripgrep honours, negations, a nested repository
# with its own exclude file, hidden files: "plain" has only patterns by name above the
# deepest folders, "slashed" patterns with slashes everywhere (which ripgrep run in a
# subfolder applies unlike git and unlike ripgrep run in the root: kept.plain_above).
TREES = {
    "plain": {
        ".gitignore": "*.log\n!keep.log\ncache/\ngenerated\nonly_ignored/\n",
        ".rgignore": "secret*\n",
        "sub/.gitignore": "*.md\n!important.md\nnested/\n",
        "sub/deep/.ignore": "*.py\n!main.py\n",
        "sub/deep/deeper/.gitignore": "/*.txt\n",
        "inner/.gitignore": "*.dat\n",
    },
    "slashed": {
        ".gitignore": "*.log\n/out/\nsub/generated/\n**/cache/\n!keep.log\nsub/deep/skip.txt\n"
        "deep/*.tmp\n",
        ".rgignore": "secret*\n",
        "sub/.gitignore": "*.md\n/local.txt\n!important.md\nnested/\n",
        "sub/deep/.ignore": "*.py\n!main.py\n",
        "sub/deep/deeper/.gitignore": "/*.txt\n",
        "inner/.gitignore": "*.dat\n",
    },
}
NESTED_FILES = [
    "a.py", "keep.log", "x.log", "out/o.o", "sub/out/kept.o", "sub/generated/g.py",
    "sub/cache/c.bin", "cache/c.bin", "sub/a.md", "sub/important.md", "sub/local.txt",
    "sub/deep/local.txt", "sub/deep/skip.txt", "sub/deep/x.py", "sub/deep/main.py",
    "sub/deep/t.tmp", "deep/t.tmp", "sub/deep/deeper/y.txt", "sub/deep/deeper/z/y.txt",
    "sub/nested/n.py", "secret.key", "sub/secret2", ".hidden/h.py", "sub/.env",
    "inner/i.dat", "inner/i.py", "inner/ex.py", "inner/sub/j.py", "only_ignored/z.log",
]  # fmt: skip
# Hidden by ripgrep's own ignore files (.rgignore, .ignore), which git does not read.
RG_ONLY = {"secret.key", "sub/secret2", "sub/deep/x.py"}


def _rg_in(root: Path, folder: str) -> set[str]:
    """What ripgrep lists run in `folder` (confined to the root, as a glob runs it)."""
    ran = rg.run(str(root / folder), ["--files", "--null"], max_lines=10**6, sep=b"\0",
                 readable=str(root))  # fmt: skip
    return {os.path.normpath(os.path.join(folder, os.fsdecode(n))) for n in ran.lines if n}


def _git_ignores(root: Path, folder: str) -> bool:
    """Whether git ignores `folder` or a folder above it."""
    parts = folder.split("/")
    above = ["/".join(parts[: n + 1]) + "/" for n in range(len(parts))]
    ran = subprocess.run(["git", "-C", str(root), "check-ignore", *above], capture_output=True)
    return bool(ran.stdout.strip())


def _nested(root: Path, tree: str, repository: str) -> None:
    if repository == "git":
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        subprocess.run(["git", "init", "-q", str(root / "inner")], check=True)
        (root / "inner" / ".git" / "info" / "exclude").write_text("ex.py\n")
    make(root, NESTED_FILES)
    for name, text in TREES[tree].items():
        (root / name).write_text(text)


@pytest.mark.parametrize("tree", sorted(TREES))
@pytest.mark.parametrize("repository", ["git", "none"])
def test_a_subfolder_s_glob_is_git_s_answer(workspace: Path, tree: str, repository: str) -> None:
    """For every folder of a tree of nested ignore files, the glob of the folder is what
    ripgrep run in the root lists beneath it (ripgrep run in it, for a folder ignored
    itself); it is answered from the root's listing when that lists
    the folder's files and the patterns above it are plain, and that is then the
    root's listing beneath it."""
    _nested(workspace, tree, repository)
    everything = _rg_in(workspace, ".")
    if repository == "git":
        # (git check-ignore from outside does not look into the inner repository)
        git = git_listed(workspace) - {n for n in there(workspace) if n.startswith("inner/")}
        assert git - RG_ONLY == {n for n in everything if not n.startswith("inner/")}
    watching = _watching(workspace)
    core = watching.core
    answered_from_root = 0
    try:
        if repository == "git":
            _built(core)
        else:  # .gitignore applies to the watcher but not to ripgrep: no listing kept
            assert core.ahead.settle(10.0)
            assert not core.file_times.ready(str(workspace))
        folders = sorted({os.path.dirname(n) for n in there(workspace)} - {""})
        for folder in folders:
            beneath = {n for n in everything if n.startswith(folder + "/")}
            fresh = _rg_in(workspace, folder)
            used = core.file_times.listings_used
            # What the root's ripgrep lists beneath it (git's answer, search/above.py),
            # but for a folder ignored itself, searched by name: ripgrep's run in it.
            ignored = repository == "git" and _git_ignores(workspace, folder)
            assert _glob(core, folder) == (fresh if ignored else beneath), folder
            if core.file_times.listings_used > used:
                assert fresh == beneath, folder
                answered_from_root += 1
    finally:
        core.close()
    if repository == "git" and tree == "plain":
        assert answered_from_root >= 8  # sub, sub/deep, inner, inner/sub, .hidden, ...
    else:  # "slashed": the root's .gitignore lies above every folder; "none": no listing
        assert answered_from_root == 0


def test_a_parent_pattern_with_a_slash_makes_the_subfolder_s_glob_run_ripgrep(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ripgrep run in `sub` lists `sub/deep/skip.txt`, which the root's `.gitignore`
    names (and git ignores): the glob of `sub` runs ripgrep, never answers from the
    root's listing whatever was built ahead, and drops what git ignores
    (search/above.py)."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    make(workspace, ["a.py", "sub/deep/skip.txt", "sub/deep/kept.txt"])
    (workspace / ".gitignore").write_text("sub/deep/skip.txt\n")
    watching = _watching(workspace)
    core = watching.core
    try:
        _built(core)
        assert "sub/deep/skip.txt" not in _glob(core)
        used = core.file_times.listings_used
        assert "sub/deep/skip.txt" in _rg_in(workspace, "sub")  # ripgrep's issue 1757
        assert _glob(core, "sub") == {"sub/deep/kept.txt"}
        assert core.file_times.listings_used == used  # ripgrep ran
        monkeypatch.setattr(search_ahead, "REBUILD_S", 0.0)  # no wait between two builds
        (workspace / ".gitignore").write_text("skip.txt\n")  # by name: plain
        wait_for_ahead(lambda: not core.file_times.ready(str(workspace)), "the listing dropped")
        calls.call(core, "stats", {})  # a call ends: a trigger
        _built(core)
        assert _glob(core, "sub") == {"sub/deep/kept.txt"} == _rg_in(workspace, "sub")
    finally:
        core.close()


def test_a_folder_of_the_tree_removed_after_the_build(built: Readkeeper, workspace: Path) -> None:
    shutil.rmtree(workspace / "sub")
    assert _glob(built) == git_listed(workspace)
