"""glob's kept listing (search/kept.py): a repeat glob of a tree the watcher hears runs
no ripgrep, and every change that alters what ripgrep would list shows in the very next
glob, with no wait: the watcher tells every change made before a call first (`quiet`).

Each case globs once (the listing is kept), checks that the next glob used it, changes
the tree, and compares the next glob with the files that are there (for ignore rules:
with `git check-ignore`)."""

from __future__ import annotations

import contextlib
import json
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
from readkeeper.search import listing, rg
from watch_core_helpers import Watching, wait_for

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify"),
    pytest.mark.skipif(rg.landlock_abi() < 1, reason="a listing is kept only under Landlock"),
]

FILES = ["a.py", "b.txt", "sub/c.py", "sub/deep/d.py", "other/e.md", "logs/x.log"]


def _paths(core: Readkeeper, pattern: str = "**/*") -> set[str]:
    result: dict[str, Any] = calls.call(core, "glob", {"pattern": pattern})
    return {os.path.relpath(p, core.workspace.roots[0]) for p in result["paths"]}


@pytest.fixture
def watched(workspace: Path) -> Any:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    make(workspace, FILES)
    (workspace / ".gitignore").write_text("*.log\n")
    watching = Watching(workspace).start()
    assert watching.status()["state"] == "watching"
    yield watching
    watching.core.close()


def _kept(core: Readkeeper) -> set[str]:
    """Glob twice: the second must be answered from the kept listing."""
    first = _paths(core)
    used = core.file_times.listings_used
    assert _paths(core) == first
    assert core.file_times.listings_used == used + 1, "the listing was not kept"
    return first


def test_a_repeat_glob_runs_no_ripgrep(watched: Watching, workspace: Path) -> None:
    assert _kept(watched.core) == git_listed(workspace)
    assert _paths(watched.core, "**/*.py") == {"a.py", "sub/c.py", "sub/deep/d.py"}


def test_a_written_file_keeps_the_listing(watched: Watching, workspace: Path) -> None:
    core = watched.core
    _kept(core)
    (workspace / "sub" / "c.py").write_text("changed\n")
    used = core.file_times.listings_used
    assert _paths(core, "**/*.py") == {"a.py", "sub/c.py", "sub/deep/d.py"}
    assert core.file_times.listings_used == used + 1
    assert calls.call(core, "glob", {"pattern": "**/*.py"})["paths"][0].endswith("sub/c.py")


@pytest.mark.parametrize(
    "change",
    [
        "file created",
        "file removed",
        "file renamed",
        "folder created with files",
        "folder moved in with files",
        "folder removed",
        "folder renamed",
        "folder swapped for a symlink",
        "file swapped for a folder",
    ],
)
def test_a_change_to_the_tree_shows_in_the_next_glob(
    watched: Watching, workspace: Path, tmp_path: Path, change: str
) -> None:
    core = watched.core
    _kept(core)
    if change == "file created":
        make(workspace, ["sub/deep/new.py"])
    elif change == "file removed":
        (workspace / "sub" / "c.py").unlink()
    elif change == "file renamed":
        (workspace / "a.py").rename(workspace / "sub" / "renamed.py")
    elif change == "folder created with files":
        make(workspace, ["fresh/one/two/f.py", "fresh/g.py"])
    elif change == "folder moved in with files":
        make(tmp_path / "elsewhere", ["in/h.py", "in/deeper/i.py"])
        (tmp_path / "elsewhere" / "in").rename(workspace / "in")
    elif change == "folder removed":
        shutil.rmtree(workspace / "sub")
    elif change == "folder renamed":
        (workspace / "sub").rename(workspace / "moved")
    elif change == "folder swapped for a symlink":
        make(tmp_path / "outside", ["secret.py"])
        (workspace / "sub").rename(tmp_path / "gone")
        (workspace / "sub").symlink_to(tmp_path / "outside", target_is_directory=True)
    elif change == "file swapped for a folder":
        (workspace / "b.txt").unlink()
        make(workspace, ["b.txt/inner.py"])
    expected = git_listed(workspace)
    if change == "folder swapped for a symlink":
        expected.discard("sub")  # a symlink to a folder: not followed, not listed
    assert _paths(core) == expected
    assert _kept(core) == expected  # kept again afterwards


@pytest.mark.parametrize("ignore_file", [".gitignore", "sub/.gitignore", ".git/info/exclude"])
@pytest.mark.parametrize("how", ["created", "edited in place", "removed"])
def test_an_ignore_file_changed_applies_to_the_next_glob(
    watched: Watching, workspace: Path, ignore_file: str, how: str
) -> None:
    core = watched.core
    path = workspace / ignore_file
    path.parent.mkdir(parents=True, exist_ok=True)
    if how != "created":
        path.write_text("*.md\n*.txt\n")
    else:
        path.unlink(missing_ok=True)
    _kept(core)
    if how == "created":
        path.write_text("*.py\n")
    elif how == "edited in place":
        with open(path, "r+") as file:  # the same inode and size
            file.write("*.py\n")
    else:
        path.unlink()
    assert _paths(core) == git_listed(workspace)


@pytest.mark.parametrize("ignore_file", [".ignore", ".rgignore", "sub/.ignore"])
def test_ripgrep_s_own_ignore_files_apply_to_the_next_glob(
    watched: Watching, workspace: Path, ignore_file: str
) -> None:
    core = watched.core
    everything = _kept(core)
    under = os.path.dirname(ignore_file)

    def without(suffix: str) -> set[str]:
        hidden = {p for p in everything if p.endswith(suffix) and p.startswith(under)}
        return everything - hidden | {ignore_file}

    path = workspace / ignore_file
    path.write_text("*.py\n")
    assert _paths(core) == without(".py")
    with open(path, "r+") as file:  # the same inode
        file.write("*.md")
    assert _paths(core) == without(".md")
    path.unlink()
    assert _paths(core) == everything


def test_a_glob_of_a_subfolder_sees_its_parent_s_ignore_file(
    watched: Watching, workspace: Path
) -> None:
    core = watched.core

    def sub() -> set[str]:
        result = calls.call(core, "glob", {"pattern": "**/*", "path": "sub"})
        return {os.path.relpath(p, workspace) for p in result["paths"]}

    assert sub() == {"sub/c.py", "sub/deep/d.py"}
    used = core.file_times.listings_used
    assert sub() == {"sub/c.py", "sub/deep/d.py"}
    assert core.file_times.listings_used == used + 1
    (workspace / ".gitignore").write_text("*.log\ndeep/\n")  # outside the folder globbed
    assert sub() == {"sub/c.py"}


def test_an_unwatched_folder_ripgrep_walks_keeps_no_listing(workspace: Path) -> None:
    """A folder `watch_exclude` skips but ripgrep walks, empty when listed: a file made
    in it raises no event, so no listing may be kept."""
    make(workspace, ["a.py"])
    (workspace / "skipped").mkdir()
    watching = Watching(workspace, {"watchExclude": ["skipped/"]}).start()
    try:
        core = watching.core
        assert _paths(core) == {"a.py"}
        make(workspace, ["skipped/b.py"])
        assert _paths(core) == {"a.py", "skipped/b.py"}
        assert core.file_times.listings_used == 0
    finally:
        watching.core.close()


def test_a_restarted_watcher_keeps_nothing_of_the_last(watched: Watching, workspace: Path) -> None:
    core = watched.core
    _kept(core)
    core.watching.stop()
    make(workspace, ["while_stopped.py"])
    (workspace / "a.py").unlink()
    Watching.start(watched)
    assert _paths(core) == git_listed(workspace)
    assert _kept(core) == git_listed(workspace)


def test_no_listing_is_kept_without_a_watcher(core: Readkeeper, workspace: Path) -> None:
    make(workspace, ["a.py"])
    assert _paths(core) == {"a.py"}
    make(workspace, ["b.py"])
    assert _paths(core) == {"a.py", "b.py"}
    assert core.file_times.listings_used == 0


def _ordered(core: Readkeeper, root: Path) -> list[str]:
    result: dict[str, Any] = calls.call(core, "glob", {"pattern": "**/*"})
    return [os.path.relpath(p, root) for p in result["paths"]]


def _by_time(root: Path, names: set[str]) -> list[str]:
    """Newest first, ties by the greater name first (glob's order)."""
    stamped = [(os.stat(root / n).st_mtime_ns, n) for n in names]
    return [n for _, n in sorted(stamped, reverse=True)]


@pytest.mark.parametrize("age_s", [10**6, -(10**6), 0])
def test_written_files_move_to_their_places_in_the_kept_order(
    watched: Watching, workspace: Path, age_s: int
) -> None:
    """Newer, older (a time set back) and the same time as another: each written file
    moves to where a fresh sort puts it."""
    core = watched.core
    for n, name in enumerate(sorted(there(workspace) - {"logs/x.log"})):
        os.utime(workspace / name, ns=(10**18 + n * 10**9, 10**18 + n * 10**9))
    listed = _kept(core)
    assert _ordered(core, workspace) == _by_time(workspace, listed)
    for name in ("sub/c.py", "a.py"):
        (workspace / name).write_text("written\n")
        when = 10**18 + age_s * 10**9 if age_s else os.stat(workspace / "b.txt").st_mtime_ns
        os.utime(workspace / name, ns=(when, when))
    used = core.file_times.listings_used
    assert _ordered(core, workspace) == _by_time(workspace, listed)
    assert core.file_times.listings_used == used + 1


_OVER_THE_LIMIT = """
import json, os, sys, time
from readkeeper import calls
from readkeeper.core import Readkeeper

root = sys.argv[1]
core = Readkeeper(roots=[root])
core.start_watching()
ends = time.monotonic() + 30
while core.watcher_status()["state"] != "watching" and time.monotonic() < ends:
    time.sleep(0.01)

def paths():
    found = calls.call(core, "glob", {"pattern": "**/*"})["paths"]
    return sorted(os.path.relpath(p, root) for p in found)

out = {"state": core.watcher_status()["state"], "before": paths(), "again": paths()}
out["used"] = core.file_times.listings_used
os.makedirs(os.path.join(root, "new", "deeper"))  # the second folder gets no watch
with open(os.path.join(root, "new", "deeper", "f.py"), "w") as file:
    file.write("x")
out["after"] = paths()
with open(os.path.join(root, "new", "deeper", "g.py"), "w") as file:
    file.write("x")  # no watch hears it
out["later"] = paths()
out["used_after"] = core.file_times.listings_used
core.close()
print(json.dumps(out))
"""


def test_a_change_under_a_folder_over_the_watch_limit_shows(workspace: Path) -> None:
    """The kernel's real watch limit (lowered in a user namespace of the test's own):
    a folder made past it has no watch, and what happens in it still shows."""
    from watch_helpers import user_namespaces_work

    if not user_namespaces_work():
        pytest.skip("needs unprivileged user namespaces (unshare -Ur) to lower the limit")
    make(workspace, ["a/one.py", "b/two.py"])  # the root, a and b: three watches
    script = f"echo 4 > /proc/sys/user/max_inotify_watches && exec {sys.executable} -c "
    done = subprocess.run(
        ["unshare", "-Ur", "sh", "-c", script + '"$0" "$1"', _OVER_THE_LIMIT, str(workspace)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["state"] == "watching"
    assert out["before"] == out["again"] == ["a/one.py", "b/two.py"]
    assert out["used"] == 1  # the listing was kept while every folder had a watch
    assert out["after"] == ["a/one.py", "b/two.py", "new/deeper/f.py"]
    assert out["later"] == ["a/one.py", "b/two.py", "new/deeper/f.py", "new/deeper/g.py"]
    assert out["used_after"] == 1


def test_a_nested_repository_s_exclude_file_applies_to_the_next_glob(
    workspace: Path,
) -> None:
    """A repository inside the workspace whose files its own `.git/info/exclude` hides
    (none of its files listed): un-hiding them shows in the next glob."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    subprocess.run(["git", "init", "-q", str(workspace / "inner")], check=True)
    make(workspace, ["a.py", "inner/deep/hidden.py"])
    exclude = workspace / "inner" / ".git" / "info" / "exclude"
    exclude.write_text("*.py\n")
    watching = Watching(workspace).start()
    try:
        core = watching.core
        assert _kept(core) == {"a.py"}  # (git check-ignore from outside does not look in)
        exclude.write_text("")
        assert _paths(core) == {"a.py", "inner/deep/hidden.py"}
    finally:
        watching.core.close()


@pytest.mark.parametrize("named_by", [".gitignore", "info/exclude", "a gitdir file"])
def test_a_folder_the_outer_repository_ignores_inside_a_nested_one_shows_new_files(
    workspace: Path, named_by: str
) -> None:
    """The outer repository's ignore rules name an empty folder of a nested repository
    (a vendored clone, a submodule): the watcher, which follows the outer rules, skips
    it, but ripgrep walks it (no outer ignore file applies in a nested repository), so
    files made there must show in the next glob."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    if named_by == "a gitdir file":  # a submodule's `.git` is a file naming its git folder
        (workspace / ".git" / "modules").mkdir()
        subprocess.run(["git", "init", "-q", "--separate-git-dir",
                        str(workspace / ".git" / "modules" / "inner"),
                        str(workspace / "inner")], check=True)  # fmt: skip
    else:
        subprocess.run(["git", "init", "-q", str(workspace / "inner")], check=True)
    (workspace / "inner" / "gen").mkdir()
    if named_by == "info/exclude":
        (workspace / ".git" / "info" / "exclude").write_text("inner/gen/\n")
    else:
        (workspace / ".gitignore").write_text("inner/gen/\n")
    watching = Watching(workspace).start()
    try:
        core = watching.core
        before = _paths(core)
        _paths(core)
        make(workspace, ["inner/gen/new.py", "inner/gen/sub/deep.py"])
        assert _paths(core) == before | {"inner/gen/new.py", "inner/gen/sub/deep.py"}
    finally:
        watching.core.close()


def _answers(glob: Any, fifos: list[Path]) -> set[str]:
    """`glob()`'s answer, which must come while no one writes the FIFOs (a FIFO opened
    for reading waits for a writer: then the test opens each for writing, to let the
    stuck thread go, and fails)."""
    found: list[set[str]] = []
    thread = threading.Thread(target=lambda: found.append(glob()), daemon=True)
    thread.start()
    thread.join(60)  # a hang detector, not a speed check: an answer takes milliseconds
    if thread.is_alive():
        for fifo in fifos:
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(10)
        pytest.fail("the glob waited on a FIFO")
    return found[0]


def test_a_fifo_where_git_s_own_files_are_read_never_stalls_a_glob(
    workspace: Path, tmp_path: Path
) -> None:
    """readkeeper reads a few small files of git's to know what a listing depends on (a
    `.git` file's `gitdir:`, the `commondir` there): a FIFO planted there is never
    opened, and a `gitdir:` out of the root is not followed. (ripgrep's own ignore
    files: tests/search/test_fifo_ignore.py.)"""
    outside = tmp_path / "outside"
    outside.mkdir()
    os.mkfifo(outside / "commondir")
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    make(workspace, ["vendored/a.py", "linked/b.py", "gd/info/x"])
    (workspace / "vendored" / ".git").write_text("gitdir: ../gd\n")
    os.mkfifo(workspace / "gd" / "commondir")
    (workspace / "linked" / ".git").write_text(f"gitdir: {outside}\n")
    fifos = [workspace / "gd" / "commondir", outside / "commondir"]
    watching = Watching(workspace).start()
    try:
        core = watching.core
        for _ in range(2):
            found = _answers(lambda: _paths(core), fifos)
            assert {"vendored/a.py", "linked/b.py"} <= found
    finally:
        watching.core.close()


def test_a_root_unwatched_and_watched_again_keeps_nothing(
    watched: Watching, workspace: Path, tmp_path: Path
) -> None:
    """Changes made while the root had no watch are not heard: its listing goes."""
    core = watched.core
    _kept(core)
    other = tmp_path / "other"
    other.mkdir()
    watcher = core.watcher
    assert watcher is not None

    def roots(*folders: Path) -> None:
        core.workspace.set_roots([str(f) for f in folders])
        core.roots_changed()

    roots(other)
    wait_for(lambda: not watcher.hears(bytes(workspace)), "the root unwatched")
    make(workspace, ["made_while_unwatched.py"])
    (workspace / "a.py").unlink()
    roots(workspace)
    wait_for(lambda: watcher.hears(bytes(workspace)) and watcher.state == "watching", "watched")
    assert _paths(core) == git_listed(workspace)


def test_a_folder_s_mode_changed_drops_the_listing(watched: Watching, workspace: Path) -> None:
    """A folder made unreadable is one ripgrep no longer enters (for a user other than
    root): its mode change is heard, and the next glob lists afresh."""
    core = watched.core
    listed = _kept(core)
    os.chmod(workspace / "sub", 0o700)
    used = core.file_times.listings_used
    assert _paths(core) == listed
    assert core.file_times.listings_used == used  # ripgrep ran


def test_globs_while_the_tree_changes_end_with_the_tree_as_it_is(
    watched: Watching, workspace: Path
) -> None:
    """Files made, renamed and removed by another thread while globs run: whatever
    each glob answered, the one after the last change lists the tree as it is."""
    import threading

    core = watched.core
    _kept(core)
    done = threading.Event()

    def churn() -> None:
        for n in range(150):
            folder = workspace / f"churn{n % 7}"
            folder.mkdir(exist_ok=True)
            (folder / f"f{n}.py").write_text("x\n")
            if n % 3 == 0:
                (folder / f"f{n}.py").rename(folder / f"g{n}.py")
            if n % 5 == 0:
                (folder / f"f{n - 5}.py").unlink(missing_ok=True)
            if n % 50 == 49:
                shutil.rmtree(workspace / f"churn{(n + 1) % 7}", ignore_errors=True)
        done.set()

    writer = threading.Thread(target=churn)
    writer.start()
    while not done.is_set():
        _paths(core)
    writer.join()
    assert _paths(core) == git_listed(workspace)

    def kept_again() -> bool:
        used = core.file_times.listings_used
        return _paths(core) == git_listed(workspace) and core.file_times.listings_used > used

    # A listing is kept again once the watcher has heard the churn out (on a loaded
    # machine that can take a few globs: a folder watched late is not kept at once).
    wait_for(kept_again, "a listing kept again after the churn")


@pytest.mark.parametrize(
    "link", [".ignore", "sub/.ignore", "sub/.rgignore", "sub/.gitignore", ".git/info/exclude"]
)
def test_an_ignore_file_that_is_a_link_applies_its_target_s_change_to_the_next_glob(
    watched: Watching, workspace: Path, link: str
) -> None:
    """ripgrep follows an ignore file that is a symlink; a change to its target (written
    in place, anywhere) raises no event on the link: such a listing is not trusted."""
    core = watched.core
    rules = workspace / "other" / "rules.txt"
    rules.write_text("nothing-matches\n")
    (workspace / link).unlink(missing_ok=True)
    os.symlink(os.path.relpath(rules, (workspace / link).parent), workspace / link)
    before = _paths(core)
    _paths(core)
    assert "sub/c.py" in before
    with open(rules, "a") as file:  # the same inode, the link untouched
        file.write("*.py\n")
    assert "sub/c.py" not in _paths(core)


@pytest.mark.parametrize("nested", [False, True])
def test_an_unheard_ignore_file_written_while_ripgrep_lists_is_not_kept_as_listed(
    watched: Watching, workspace: Path, nested: bool
) -> None:
    """No watch hears a repository's `.git/info/exclude` (the root's, or a nested
    one's); its stamp is the version ripgrep read only when taken before it ran: a write
    landing while it walks (the listing built ahead or after a first glob runs beside
    calls) must fail the kept listing's check, not pass as the version listed."""
    times = watched.core.file_times
    folder = workspace / "other" if nested else workspace
    if nested:
        subprocess.run(["git", "init", "-q", str(folder)], check=True)
    written: list[bool] = []

    def write_while_listing() -> bool:  # asked after ripgrep's first output
        if not written:
            with open(folder / ".git" / "info" / "exclude", "a") as file:
                file.write("*.md\n*.py\n")
            written.append(True)
        return False

    _, token = times.listing(str(workspace), used=False)
    _, stopped = listing.list_files(
        str(workspace), str(workspace), times, token, write_while_listing
    )
    assert written
    assert not stopped
    assert times.listing(str(workspace), used=False)[0] is None, "a stale listing was kept"
