"""A FIFO (or a device) named like an ignore file never makes a search wait
(search/stalls.py): ripgrep opens every ignore file of the folders it walks with a
blocking open, so the watcher names the suspects (watch/suspects.py) and the folder
holding one is left out, the answer whole for the rest of the tree and its note naming
the folder; one at or above the folder searched is refused at once, naming the file.

"Never waits" is asserted as behaviour, not time: the answer is not partial (a ripgrep
that waited would be killed at its deadline and the answer marked partial), every file
outside the folder left out is found, and the note says what was left out and why.
A hang detector (a thread joined with a generous bound) turns a real hang into a
failure rather than a stuck suite."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from glob_trees import make

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.search import rg, stalls
from readkeeper.search.ahead import ListingAhead
from readkeeper.watch import suspects
from watch_core_helpers import Watching, wait_for_ahead, watching_core

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")

FILES = ["a.py", "src/b.py", "src/deep/c.py", "sub/d.py", "sub/inner/e.py", "subway/f.py"]
OUTSIDE_SUB = {"a.py", "src/b.py", "src/deep/c.py", "subway/f.py"}
# Where a FIFO is planted (the folder it leaves out: "sub"), made after `git init`.
PLANTS = {
    ".gitignore": "sub/.gitignore",
    ".ignore": "sub/.ignore",
    ".rgignore": "sub/.rgignore",
    "deeper": "sub/inner/.gitignore",
    "nested_exclude": "sub/.git/info/exclude",
}


@pytest.fixture(autouse=True)
def _short_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that waits is killed sooner (the answer is then partial: the failure)."""
    monkeypatch.setattr(rg, "DEADLINE_S", 4.0)


def _tree(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    make(root, FILES)


def _plant(root: Path, where: str) -> Path:
    path = root / where
    if where.startswith("sub/.git/"):
        subprocess.run(["git", "init", "-q", str(root / "sub")], check=True)
        path.unlink()
    os.mkfifo(path)
    return path


def _unstuck(call: Callable[[], Any], fifos: list[Path]) -> Any:
    """`call()`'s answer; should it hang, the FIFOs are opened for writing (letting the
    reader go) and the test fails."""
    found: list[Any] = []

    def run() -> None:
        try:
            found.append(call())
        except ReadkeeperError as exc:
            found.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(60)  # a hang detector, not a speed check
    if thread.is_alive():
        for fifo in fifos:
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(10)
        pytest.fail("the call waited on a FIFO")
    return found[0]


def _rel(core: Readkeeper, paths: list[str]) -> set[str]:
    return {os.path.relpath(p, core.workspace.roots[0]) for p in paths}


def _searches(core: Readkeeper, fifos: list[Path]) -> dict[str, dict[str, Any]]:
    """glob, grep (matches and files) of the whole root, each twice (the second glob
    may answer from the kept listing)."""
    answers = {}
    for name, method, params in [
        ("glob", "glob", {"pattern": "**/*.py"}),
        ("glob again", "glob", {"pattern": "**/*.py"}),
        ("grep", "grep", {"pattern": "x"}),
        ("grep files", "grep", {"pattern": "x", "output": "files"}),
    ]:
        answers[name] = _unstuck(lambda m=method, p=params: calls.call(core, m, p), fifos)
    return answers


def _assert_only_sub_left_out(
    core: Readkeeper, answers: dict[str, dict[str, Any]], folder: str = "sub"
) -> None:
    for name, answer in answers.items():
        assert isinstance(answer, dict), (name, answer)
        assert answer["partial"] is False, (name, answer)
        assert f"Not searched: {folder} (" in answer["note"], (name, answer)
        assert "make it a regular file" in answer["note"], (name, answer)
        if "paths" in answer:
            found = _rel(core, answer["paths"])
        elif "files" in answer:
            found = _rel(core, answer["files"])
        else:
            found = _rel(core, [m["file_path"] for m in answer["matches"]])
        assert found == {f for f in FILES if not f.startswith(folder + "/")}, name


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_a_fifo_ignore_file_beneath_leaves_out_only_its_folder(workspace: Path, plant: str) -> None:
    _tree(workspace)
    fifo = _plant(workspace, PLANTS[plant])
    with watching_core(workspace) as core:
        folder = os.path.dirname(PLANTS[plant]).removesuffix("/.git/info")
        _assert_only_sub_left_out(core, _searches(core, [fifo]), folder)
        listed = _unstuck(lambda: calls.call(core, "list", {"path": ".", "depth": 3}), [fifo])
        assert listed["partial"] is False  # list reads ignore files itself, regular only
        assert "sub/d.py" in {e["name"] for e in listed["entries"]}


def test_links_to_a_fifo_are_left_out_and_a_worktree_without_commondir_reads_no_exclude(
    workspace: Path,
) -> None:
    """ripgrep's open follows a link (an ignore file's, a `.git` folder's); a git folder
    with no `commondir` has no `info/exclude` read at all, not even its own (ripgrep 14's
    `resolve_git_commondir`, search/gitchain.py), so that worktree is searched whole,
    in the walk and run in it, with every exclude file applied."""
    _tree(workspace)
    make(workspace, ["gd/info/keep", "wt/g.py", "real/info/keep", "v/h.py"])
    fifos = [workspace / "fifo", workspace / "gd/info/exclude", workspace / "real/info/exclude"]
    for fifo in fifos:
        os.mkfifo(fifo)
    (workspace / "sub" / ".ignore").symlink_to("../fifo")
    (workspace / "v" / ".git").symlink_to("../real")
    (workspace / "wt" / ".git").write_text("gitdir: ../gd\n")
    with watching_core(workspace) as core:
        found = _unstuck(lambda: calls.call(core, "glob", {"pattern": "**/*.py"}), fifos)
        assert found["partial"] is False, found
        assert _rel(core, found["paths"]) == OUTSIDE_SUB | {"wt/g.py"}
        assert "Not searched: sub, v (" in found["note"]
        inside = _unstuck(lambda: calls.call(core, "grep", {"pattern": "x", "path": "wt"}), fifos)
        assert inside["partial"] is False, inside
        assert _rel(core, [m["file_path"] for m in inside["matches"]]) == {"wt/g.py"}
        assert "info/exclude" not in inside.get("note", ""), inside


def test_the_root_s_own_fifo_exclude_turns_info_exclude_off(workspace: Path) -> None:
    _tree(workspace)
    exclude = workspace / ".git" / "info" / "exclude"
    exclude.unlink()
    os.mkfifo(exclude)
    with watching_core(workspace) as core:
        for name, answer in _searches(core, [exclude]).items():
            assert answer["partial"] is False, (name, answer)
            assert ".git/info/exclude is a FIFO or a device" in answer["note"], name
            found = answer.get("paths") or answer.get("files") or []
            found = found or [m["file_path"] for m in answer["matches"]]
            assert _rel(core, found) == set(FILES), name


def test_a_fifo_ignore_file_of_the_folder_searched_is_refused_naming_it(workspace: Path) -> None:
    """ripgrep reads the ignore files at and above the folder it runs in whatever its
    flags: the search is refused at once, with the way on."""
    _tree(workspace)
    fifo = workspace / "sub" / ".gitignore"
    os.mkfifo(fifo)
    with watching_core(workspace) as core:
        for method, params in [
            ("glob", {"pattern": "*", "path": "sub/inner"}),
            ("grep", {"pattern": "x", "path": "sub"}),
            ("grep", {"pattern": "x", "path": "sub/d.py"}),
        ]:
            refused = _unstuck(lambda m=method, p=params: calls.call(core, m, p), [fifo])
            assert isinstance(refused, ReadkeeperError), refused
            assert refused.kind == "unsupported"
            assert str(fifo) in refused.message
            assert "Make it a regular file" in refused.message


def test_a_fifo_made_while_watching_is_left_out_and_searched_again_once_regular(
    workspace: Path,
) -> None:
    _tree(workspace)
    with watching_core(workspace) as core:
        first = calls.call(core, "glob", {"pattern": "**/*.py"})
        assert _rel(core, first["paths"]) == set(FILES)
        fifo = workspace / "sub" / ".gitignore"
        os.mkfifo(fifo)
        _assert_only_sub_left_out(core, _searches(core, [fifo]))
        regular = workspace / "sub" / "gitignore.new"
        regular.write_text("inner/\n")
        os.rename(regular, fifo)  # the FIFO replaced: the folder is searched again
        found = calls.call(core, "glob", {"pattern": "**/*.py"})
        assert found["partial"] is False
        assert "note" not in found
        assert _rel(core, found["paths"]) == OUTSIDE_SUB | {"sub/d.py"}
        fifo.unlink()
        os.mkfifo(workspace / "src" / "deep" / ".ignore")  # made again, elsewhere
        found = _unstuck(
            lambda: calls.call(core, "grep", {"pattern": "x", "output": "files"}),
            [workspace / "src" / "deep" / ".ignore"],
        )
        assert found["partial"] is False
        assert "Not searched: src/deep (" in found["note"]
        assert _rel(core, found["files"]) == set(FILES) - {"src/deep/c.py"}


def test_a_folder_moved_keeps_its_fifo_left_out(workspace: Path) -> None:
    _tree(workspace)
    fifo = workspace / "sub" / ".rgignore"
    os.mkfifo(fifo)
    with watching_core(workspace) as core:
        os.rename(workspace / "sub", workspace / "moved")
        found = _unstuck(
            lambda: calls.call(core, "glob", {"pattern": "**/*.py"}),
            [workspace / "moved" / ".rgignore"],
        )
        assert found["partial"] is False, found
        assert "Not searched: moved (" in found["note"]
        assert _rel(core, found["paths"]) == OUTSIDE_SUB


def test_folder_names_are_matched_literally(workspace: Path) -> None:
    """A name with glob characters leaves out that folder only, not its look-alikes; a
    name with a line break or a byte that is not UTF-8 (ripgrep takes UTF-8 globs only)
    is left out too, and shown quoted."""
    _tree(workspace)
    odd, broken = "w[x]*{y},z?", os.fsdecode(b"bad\xff")
    make(workspace, [f"{odd}/g.py", "wx/h.py", "w[x]/i.py", "nl\nx/j.py", f"{broken}/k.py"])
    fifos = [workspace / folder / ".gitignore" for folder in (odd, "nl\nx", broken)]
    for fifo in fifos:
        os.mkfifo(fifo)
    with watching_core(workspace) as core:
        found = _unstuck(lambda: calls.call(core, "glob", {"pattern": "**/*.py"}), fifos)
        assert found["partial"] is False, found
        assert _rel(core, found["paths"]) == set(FILES) | {"wx/h.py", "w[x]/i.py"}
        assert '"nl\\nx"' in found["note"]
        assert '"bad\\udcff"' in found["note"]


def test_a_device_named_like_an_ignore_file_is_left_out(workspace: Path) -> None:
    """/dev/zero's device as an `.ignore`: ripgrep would read it until its memory cap."""
    _tree(workspace)
    device = workspace / "sub" / ".ignore"
    try:
        os.mknod(device, 0o600 | 0o020000, os.makedev(1, 5))
    except PermissionError:
        pytest.skip("no mknod here")
    with watching_core(workspace) as core:
        _assert_only_sub_left_out(core, _searches(core, []))


def test_the_listing_built_ahead_does_not_wait_on_a_fifo(workspace: Path) -> None:
    if rg.landlock_abi() < 1:
        pytest.skip("a listing is kept only under Landlock")
    _tree(workspace)
    fifo = _plant(workspace, "sub/.gitignore")
    watching = Watching(workspace)
    watching.core.ahead.busy = lambda: False
    watching.start()
    try:
        core = watching.core
        job = next(job for job in core.ahead.jobs if isinstance(job, ListingAhead))
        wait_for_ahead(lambda: core.file_times.ready(str(workspace)), "the listing built ahead")
        # (the job counts its build just after the listing is ready: waited for too)
        wait_for_ahead(lambda: job.counts["built"] == 1, "the build counted")
        used = core.file_times.listings_used
        found = _unstuck(lambda: calls.call(core, "glob", {"pattern": "**/*.py"}), [fifo])
        assert core.file_times.listings_used == used + 1
        assert _rel(core, found["paths"]) == OUTSIDE_SUB
        assert "Not searched: sub (" in found["note"]
    finally:
        watching.core.close()


def test_the_suspects_kept_are_bounded_and_those_gone_make_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the cap none is trusted (the deadline is then the bound), after the ones
    no longer there have been let go."""
    monkeypatch.setattr(suspects, "MAX_SUSPECTS", 3)
    kept = suspects.Suspects()
    made = [tmp_path / f"d{index}" / ".gitignore" for index in range(4)]
    for path in made:
        path.parent.mkdir()
        os.mkfifo(path)
        kept.heard(str(path), None, False, "created")
    assert kept.under(os.fsencode(tmp_path)) is None
    again = suspects.Suspects()
    for path in made[:3]:
        again.heard(str(path), None, False, "created")
    made[0].unlink()
    again.heard(str(made[3]), None, False, "created")
    assert sorted(again.under(os.fsencode(tmp_path)) or []) == [bytes(p) for p in made[1:]]
    (tmp_path / "d1" / "plain").mkdir()
    again.heard(str(tmp_path / "d1" / "plain" / ".ignore"), None, False, "created")  # gone
    assert len(again.under(os.fsencode(tmp_path)) or []) == 3


def test_a_folder_left_out_stays_out_of_ripgrep_s_one_thread_walk(workspace: Path) -> None:
    """ripgrep's one-thread walk (one CPU, `-j1`, or a sort) opens a folder's ignore
    files before it applies a `--glob` exclusion: the flags that leave a folder out keep
    ripgrep on its parallel walk (glob never asks it to sort then: the tests above)."""
    _tree(workspace)
    fifo = _plant(workspace, PLANTS[".gitignore"])
    avoided = stalls.avoid(str(workspace), str(workspace), [os.fsencode(fifo)])
    assert avoided.folders == ["sub"]
    flags = ["--files", "--null", "-j1", *avoided.flags()]
    ran = _unstuck(
        lambda: rg.run(str(workspace), flags, max_lines=1000, sep=b"\0", deadline_s=20), [fifo]
    )
    assert not ran.timed_out
    assert {n.decode() for n in ran.lines if n} == {f for f in FILES if not f.startswith("sub/")}


def _worktree(root: Path, at: str, gitdir: str, fifo: str = "") -> Path:
    """A worktree at `at` whose `.git` file names the git folder `gd` (as `gitdir`
    says), that folder's `commondir` leading to `common`; `fifo` is one of those made a
    FIFO (when named)."""
    (root / "common" / "info").mkdir(parents=True)
    (root / "gd").mkdir()
    (root / "gd" / "HEAD").write_text("ref: refs/heads/main\n")  # no "x": not grepped
    (root / at / ".git").write_text(f"gitdir: {gitdir}\n")
    (root / "gd" / "commondir").write_text("../common\n")
    path = root / fifo
    if fifo:
        path.unlink(missing_ok=True)
        os.mkfifo(path)
    return path


@pytest.mark.parametrize("fifo", ["gd/commondir", "common/info/exclude"])
@pytest.mark.parametrize("gitdir", ["absolute", "from ripgrep's folder"])
def test_a_nested_worktree_whose_git_folder_holds_a_fifo_is_left_out_naming_it(
    workspace: Path, fifo: str, gitdir: str
) -> None:
    """ripgrep reads the `commondir` of every `.git` file's git folder it meets in its
    walk, then the `info/exclude` of the folder that names (a relative `gitdir:` taken
    from ripgrep's own folder): the worktree is left out, only it, the file named."""
    _tree(workspace)
    make(workspace, ["wt/g.py"])
    named = str(workspace / "gd") if gitdir == "absolute" else "gd"
    path = _worktree(workspace, "wt", named, fifo)
    with watching_core(workspace) as core:
        for name, answer in _searches(core, [path]).items():
            assert answer["partial"] is False, (name, answer)
            assert "Not searched: wt (" in answer["note"], (name, answer)
            assert f"{fifo})" in answer["note"], (name, answer)
            found = answer.get("paths") or answer.get("files") or []
            found = found or [m["file_path"] for m in answer["matches"]]
            assert _rel(core, found) == set(FILES), name
        beside = _unstuck(lambda: calls.call(core, "glob", {"pattern": "*", "path": "sub"}), [path])
        assert beside["partial"] is False, beside
        assert _rel(core, beside["paths"]) == {"sub/d.py", "sub/inner/e.py"}


@pytest.mark.parametrize("fifo", ["gd/commondir", "common/info/exclude"])
def test_the_root_as_a_worktree_names_the_fifo_its_git_file_leads_to(
    workspace: Path, fifo: str
) -> None:
    make(workspace, FILES)
    path = _worktree(workspace, ".", str(workspace / "gd"), fifo)
    with watching_core(workspace) as core:
        for name, answer in _searches(core, [path]).items():
            assert answer["partial"] is False, (name, answer)
            assert f"The repository's {fifo} is a FIFO or a device" in answer["note"], name
            found = answer.get("paths") or answer.get("files") or []
            found = found or [m["file_path"] for m in answer["matches"]]
            assert _rel(core, found) == set(FILES), name


def test_a_worktree_s_commondir_made_a_fifo_while_watching_is_left_out(workspace: Path) -> None:
    """The `.git` file is the suspect the watcher keeps; what it leads to is looked at
    again at each search, so a FIFO made in the git folder (where no event names a
    suspect) is left out all the same."""
    _tree(workspace)
    make(workspace, ["wt/g.py"])
    with watching_core(workspace) as core:
        _worktree(workspace, "wt", str(workspace / "gd"))
        first = calls.call(core, "glob", {"pattern": "**/*.py"})
        assert _rel(core, first["paths"]) == set(FILES) | {"wt/g.py"}
        commondir = workspace / "gd" / "commondir"
        commondir.unlink()
        os.mkfifo(commondir)
        found = _unstuck(lambda: calls.call(core, "glob", {"pattern": "**/*.py"}), [commondir])
        assert found["partial"] is False, found
        assert "Not searched: wt (" in found["note"]
        assert _rel(core, found["paths"]) == set(FILES)


def test_a_worktree_s_commondir_linked_to_a_device_never_makes_a_search_wait(
    workspace: Path,
) -> None:
    """ripgrep reads a `commondir` whole, through a link: /dev/zero would never end.
    Confined to the root (Landlock), it cannot open it at all: then nothing is left
    out (the search never waits either way)."""
    _tree(workspace)
    make(workspace, ["wt/g.py"])
    _worktree(workspace, "wt", str(workspace / "gd"))
    (workspace / "gd" / "commondir").unlink()
    (workspace / "gd" / "commondir").symlink_to("/dev/zero")
    with watching_core(workspace) as core:
        answers = _searches(core, [])
        if rg.landlock_abi() < 1:
            _assert_only_sub_left_out(core, answers, "wt")
            return
        for name, answer in answers.items():
            assert answer["partial"] is False, (name, answer)
            assert "Not searched" not in answer.get("note", ""), (name, answer)
        assert "wt/g.py" in _rel(core, answers["glob"]["paths"])
