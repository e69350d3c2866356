"""search/gitchain.py against the real thing: for worktrees and submodules made by git
(absolute and relative `gitdir:`, `commondir` chains), the exclude file the chain names
is the one whose patterns the installed `rg` applies, and a kept listing and a search's
FIFO check (kept.py, stalls.py) both follow that chain."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from glob_trees import make

from readkeeper import calls
from readkeeper.search import rg, stalls
from readkeeper.search.gitchain import exclude_chain
from watch_core_helpers import Watching

_GIT = ["git", "-c", "user.email=t@t", "-c", "user.name=t", "-c", "protocol.file.allow=always"]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run([*_GIT, *args], cwd=cwd, check=True, capture_output=True)


def _rg_lists(cwd: Path) -> set[str]:
    """What the installed `rg` lists in `cwd` (unconfined: it may read what it names)."""
    out = subprocess.run(
        [rg.binary(), "--no-config", "--files", "--hidden", "--glob=!.git"],
        cwd=cwd,
        capture_output=True,
        check=False,
        timeout=60,
    ).stdout
    return set(os.fsdecode(out).split())


def _applies(exclude: Path, cwd: Path, victim: str) -> bool:
    """Whether `rg` in `cwd` applies the patterns of `exclude`: one naming `victim`
    (a file `rg` lists without it) hides it."""
    assert victim in _rg_lists(cwd)
    exclude.parent.mkdir(parents=True, exist_ok=True)
    before = exclude.read_bytes() if exclude.exists() else None
    exclude.write_text(f"{os.path.basename(victim)}\n")
    try:
        return victim not in _rg_lists(cwd)
    finally:
        if before is None:
            exclude.unlink()
        else:
            exclude.write_bytes(before)


def _chain(root: Path, cwd: Path, folder: Path) -> list[Path]:
    found = exclude_chain(*map(os.fsencode, (root, cwd, folder)), confined=False)
    return [Path(os.fsdecode(path)) for path in found]


@pytest.fixture
def main(workspace: Path) -> Path:
    repo = workspace / "main"
    repo.mkdir()
    _git(repo, "init", "-q")
    make(repo, ["m.txt"])
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "one")
    return repo


@pytest.mark.parametrize("relative", [False, True], ids=["absolute", "relative"])
def test_a_worktree_s_chain_names_the_exclude_rg_applies(
    workspace: Path, main: Path, relative: bool
) -> None:
    """`git worktree add` writes an absolute `gitdir:` and `commondir` "../..";
    `git worktree add --relative-paths` (git 2.48) or a hand-moved worktree has a
    relative one, which ripgrep takes from its own working folder."""
    _git(main, "worktree", "add", "-q", str(workspace / "wt"))
    wt = workspace / "wt"
    if relative:
        (wt / ".git").write_text("gitdir: ../main/.git/worktrees/wt\n")
    make(wt, ["x.txt", "sub/y.txt"])
    common = main / ".git" / "info" / "exclude"
    chain = _chain(workspace, wt, wt)
    assert chain[0] == wt / ".git"
    assert chain[-1].resolve() == common.resolve()
    assert _applies(chain[-1], wt, "x.txt")
    # The worktree's own git folder's exclude file is never read (only the common one).
    own = main / ".git" / "worktrees" / "wt" / "info" / "exclude"
    assert own not in chain
    assert not _applies(own, wt, "x.txt")
    # Run in the worktree's parent: a relative `gitdir:` leads nowhere from there.
    from_parent = _chain(workspace, workspace, wt)
    if relative:
        assert common.resolve() not in [p.resolve() for p in from_parent]
        assert not _applies(common, workspace, "wt/x.txt")
    else:
        assert from_parent[-1].resolve() == common.resolve()
        assert _applies(common, workspace, "wt/x.txt")


def test_a_commondir_not_starting_with_a_dot_is_taken_from_rg_s_folder(
    workspace: Path, main: Path
) -> None:
    _git(main, "worktree", "add", "-q", str(workspace / "wt"))
    wt = workspace / "wt"
    make(wt, ["x.txt"])
    (main / ".git" / "worktrees" / "wt" / "commondir").write_text("main/.git\n")
    chain = _chain(workspace, workspace, wt)
    assert chain[-1] == workspace / "main" / ".git" / "info" / "exclude"
    assert _applies(chain[-1], workspace, "wt/x.txt")
    assert _chain(workspace, wt, wt)[-1] == wt / "main" / ".git" / "info" / "exclude"
    assert not _applies(main / ".git" / "info" / "exclude", wt, "x.txt")
    # An absolute one is taken as it is.
    (main / ".git" / "worktrees" / "wt" / "commondir").write_text(f"{main / '.git'}\n")
    chain = _chain(workspace, wt, wt)
    assert chain[-1] == main / ".git" / "info" / "exclude"
    assert _applies(chain[-1], wt, "x.txt")


def test_a_submodule_s_chain_has_no_exclude_file(workspace: Path, main: Path) -> None:
    """A submodule's `.git` is "gitdir: ../.git/modules/<name>" and its git folder has no
    `commondir`: ripgrep applies no `info/exclude` there, not even the git folder's own
    (git does: a difference of ripgrep's)."""
    upstream = workspace.parent / "upstream"
    upstream.mkdir()
    _git(upstream, "init", "-q")
    make(upstream, ["u.txt"])
    _git(upstream, "add", ".")
    _git(upstream, "commit", "-q", "-m", "one")
    _git(main, "submodule", "add", "-q", str(upstream), "sm")
    sm = main / "sm"
    assert (sm / ".git").read_text().startswith("gitdir: ../")
    make(sm, ["z.txt"])
    modules = main / ".git" / "modules" / "sm"
    chain = _chain(workspace, sm, sm)
    assert chain == [sm / ".git", sm / "../.git/modules/sm/commondir"]
    assert not _applies(modules / "info" / "exclude", sm, "z.txt")
    # A `commondir` written there is followed (git's linked worktrees of a submodule).
    (modules / "commondir").write_text(".\n")
    assert _applies(_chain(workspace, sm, sm)[-1], sm, "z.txt")


def test_a_confined_chain_ends_at_the_root(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "gd"
    (outside / "info").mkdir(parents=True)
    make(workspace, ["linked/b.py"])
    (workspace / "linked" / ".git").write_text(f"gitdir: {outside}\n")
    root, linked = os.fsencode(workspace), os.fsencode(workspace / "linked")
    assert exclude_chain(root, linked, linked, confined=True) == [linked + b"/.git"]
    named = exclude_chain(root, linked, linked, confined=False)
    assert named == [linked + b"/.git", os.fsencode(outside / "commondir")]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")
@pytest.mark.skipif(rg.landlock_abi() < 1, reason="a listing is kept only under Landlock")
def test_a_kept_listing_depends_on_the_exclude_file_rg_reads(workspace: Path, main: Path) -> None:
    """A worktree whose relative `gitdir:` ripgrep, run in the root, finds (it takes it
    from its own folder, git from the worktree's): a `commondir` written there (in
    `.git`, where no watch hears) makes ripgrep apply the common folder's exclude file,
    which shows in the next glob, not the kept listing."""
    _git(main, "worktree", "add", "-q", str(workspace / "wt"))
    wt = workspace / "wt"
    (wt / ".git").write_text("gitdir: main/.git/worktrees/wt\n")
    commondir = main / ".git" / "worktrees" / "wt" / "commondir"
    commondir.unlink()  # as a submodule's git folder: no exclude file applied
    (main / ".git" / "info" / "exclude").write_text("x.txt\n")
    make(wt, ["x.txt", "keep.txt"])
    watching = Watching(workspace).start()
    try:

        def paths() -> set[str]:
            result: dict[str, Any] = calls.call(watching.core, "glob", {"pattern": "wt/*"})
            return {os.path.relpath(p, workspace) for p in result["paths"]}

        assert paths() == {"wt/x.txt", "wt/keep.txt", "wt/m.txt"} == _rg_wt(workspace)
        used = watching.core.file_times.listings_used
        assert paths() == {"wt/x.txt", "wt/keep.txt", "wt/m.txt"}
        assert watching.core.file_times.listings_used == used + 1, "the listing was not kept"
        commondir.write_text("../..\n")
        assert paths() == _rg_wt(workspace) == {"wt/keep.txt", "wt/m.txt"}
    finally:
        watching.core.close()


def _rg_wt(workspace: Path) -> set[str]:
    return {path for path in _rg_lists(workspace) if path.startswith("wt/")}


def test_a_worktree_s_own_exclude_file_never_turns_the_exclude_files_off(
    workspace: Path, main: Path
) -> None:
    """ripgrep never opens a worktree's own git folder's `info/exclude` (only the
    common folder's): a FIFO there costs nothing, so the repository's exclude file
    stays applied (before, the search turned every `info/exclude` off)."""
    _git(main, "worktree", "add", "-q", str(workspace / "wt"))
    wt = workspace / "wt"
    own = main / ".git" / "worktrees" / "wt" / "info" / "exclude"
    own.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(own)
    make(wt, ["x.txt"])
    assert "x.txt" in _rg_lists(wt)  # (a hang detector: rg never opens the FIFO)
    assert stalls.avoid(str(workspace), str(wt), None).exclude_off is False
