"""An ignore-side file too large for ripgrep to read never empties a search
(search/stalls.py): ripgrep reads every ignore file, `.git` file and `commondir` it
meets whole, so one of gigabytes (a sparse file costs the attacker no disk) takes it
past its memory cap (files/landlock.py) and it dies, every glob answering with no
files. The watcher notes such files by size (watch/suspects.py), the folder holding
one is left out, its note naming the file and its size; one at or above the folder
searched is refused at once.

Asserted as behaviour: the answer is not partial (a ripgrep that died would make it
so), every file outside the folder left out is found, and the note says why."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from glob_trees import make

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.watch import suspects
from watch_core_helpers import watching_core

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")

FILES = ["a.py", "src/b.py", "sub/d.py", "sub/inner/e.py", "subway/f.py"]
HUGE = 8 << 30  # sparse: no disk used
PLANTS = [
    "sub/.gitignore",
    "sub/.ignore",
    "sub/.rgignore",
    "sub/inner/.gitignore",
    "sub/.git/info/exclude",
]


def _tree(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    make(root, FILES)


def _huge(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    # A `.git` file begins as a real one would: ripgrep reads on to its first line break.
    path.write_bytes(b"gitdir: " if path.name == ".git" else b"")
    os.truncate(path, HUGE)
    return path


def _found(core: Readkeeper, answer: dict[str, Any]) -> set[str]:
    paths = answer.get("paths") or answer.get("files") or []
    paths = paths or [m["file_path"] for m in answer.get("matches", [])]
    return {os.path.relpath(p, core.workspace.roots[0]) for p in paths}


def _searches(core: Readkeeper) -> dict[str, dict[str, Any]]:
    return {
        name: calls.call(core, method, params)
        for name, method, params in [
            ("glob", "glob", {"pattern": "**/*.py"}),
            ("glob again", "glob", {"pattern": "**/*.py"}),
            ("grep", "grep", {"pattern": "x"}),
            ("grep files", "grep", {"pattern": "x", "output": "files"}),
        ]
    }


def _assert_left_out(
    core: Readkeeper, answers: dict[str, dict[str, Any]], folder: str, file: str, files: set[str]
) -> None:
    for name, answer in answers.items():
        assert answer["partial"] is False, (name, answer)
        assert f"Not searched: {folder} (" in answer["note"], (name, answer)
        assert f": {file} of 8.0 GiB)" in answer["note"], (name, answer)
        assert "make it a regular file under 1 MiB" in answer["note"], (name, answer)
        assert _found(core, answer) == files, (name, answer)


@pytest.mark.parametrize("plant", PLANTS)
def test_a_huge_ignore_file_beneath_leaves_out_only_its_folder(workspace: Path, plant: str) -> None:
    _tree(workspace)
    if plant.startswith("sub/.git/"):
        subprocess.run(["git", "init", "-q", str(workspace / "sub")], check=True)
    _huge(workspace / plant)
    folder = "sub/inner" if "inner" in plant else "sub"
    with watching_core(workspace) as core:
        outside = {f for f in FILES if not f.startswith(folder + "/")}
        _assert_left_out(core, _searches(core), folder, plant, outside)


def test_a_huge_ignore_file_of_the_folder_searched_is_refused_naming_it(workspace: Path) -> None:
    _tree(workspace)
    huge = _huge(workspace / "sub" / ".gitignore")
    with watching_core(workspace) as core:
        for method, params in [
            ("glob", {"pattern": "*", "path": "sub/inner"}),
            ("grep", {"pattern": "x", "path": "sub"}),
        ]:
            with pytest.raises(ReadkeeperError) as refused:
                calls.call(core, method, params)
            assert refused.value.kind == "unsupported"
            assert str(huge) in refused.value.message
            assert "8.0 GiB" in refused.value.message
            assert "under 1 MiB" in refused.value.message


def test_an_ignore_file_grown_while_watching_is_left_out_and_searched_again_once_small(
    workspace: Path,
) -> None:
    """A write that grows a regular ignore file is an event the watcher hears: no
    creation, no move, only a modification."""
    _tree(workspace)
    ignore = workspace / "sub" / ".gitignore"
    ignore.write_text("inner/\n")
    with watching_core(workspace) as core:
        first = calls.call(core, "glob", {"pattern": "**/*.py"})
        assert _found(core, first) == set(FILES) - {"sub/inner/e.py"}
        os.truncate(ignore, HUGE)
        outside = {f for f in FILES if not f.startswith("sub/")}
        _assert_left_out(core, _searches(core), "sub", "sub/.gitignore", outside)
        os.truncate(ignore, 7)  # back to "inner/\n"
        again = calls.call(core, "glob", {"pattern": "**/*.py"})
        assert again["partial"] is False
        assert "note" not in again
        assert _found(core, again) == set(FILES) - {"sub/inner/e.py"}


def test_an_ignore_file_just_under_the_limit_is_read_and_applied(workspace: Path) -> None:
    """The limit leaves ripgrep room: an ignore file of nearly 1 MiB of one-letter
    patterns (the most patterns per byte) is read within its memory cap and applied."""
    _tree(workspace)
    (workspace / "sub" / ".gitignore").write_bytes(
        b"q\n" * ((suspects.MAX_IGNORE_BYTES - 8) // 2) + b"inner/\n"
    )
    with watching_core(workspace) as core:
        for name, answer in _searches(core).items():
            assert answer["partial"] is False, (name, answer)
            assert "note" not in answer or "Not searched" not in answer["note"], (name, answer)
            assert _found(core, answer) == set(FILES) - {"sub/inner/e.py"}, name


def _worktree(root: Path, huge: str) -> None:
    """A worktree `wt` whose `.git` file names the git folder `gd`, its `commondir`
    leading to `common`; `huge` is the one of them made 8 GiB."""
    make(root, ["wt/g.py"])
    (root / "common" / "info").mkdir(parents=True)
    (root / "gd").mkdir()
    (root / "gd" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / "wt" / ".git").write_text(f"gitdir: {root / 'gd'}\n")
    (root / "gd" / "commondir").write_text("../common\n")
    _huge(root / huge)


@pytest.mark.parametrize("huge", ["wt/.git", "gd/commondir", "common/info/exclude"])
def test_a_nested_worktree_leading_to_a_huge_file_is_left_out_naming_it(
    workspace: Path, huge: str
) -> None:
    _tree(workspace)
    _worktree(workspace, huge)
    with watching_core(workspace) as core:
        _assert_left_out(core, _searches(core), "wt", huge, set(FILES))


def test_the_root_s_huge_git_file_turns_info_exclude_off(workspace: Path) -> None:
    """ripgrep reads a `.git` file (to find `info/exclude`) only with exclude files on:
    for the root's own, `--no-ignore-exclude` is enough, and the answer says so."""
    make(workspace, FILES)
    _huge(workspace / ".git")
    with watching_core(workspace) as core:
        for name, answer in _searches(core).items():
            assert answer["partial"] is False, (name, answer)
            assert "The repository's .git (8.0 GiB) is larger" in answer["note"], (name, answer)
            assert _found(core, answer) == set(FILES), name


def test_the_watcher_notes_ignore_files_by_size_from_its_events(tmp_path: Path) -> None:
    kept = suspects.Suspects()
    small, big = tmp_path / "a" / ".gitignore", tmp_path / "b" / ".ignore"
    small.parent.mkdir()
    small.write_text("x\n")
    _huge(big)
    for path in (small, big):
        kept.heard(str(path), None, False, "modified")
    assert kept.under(os.fsencode(tmp_path)) == [bytes(big)]
    assert suspects.is_suspect(".gitignore", True, suspects.MAX_IGNORE_BYTES + 1)
    assert not suspects.is_suspect(".gitignore", True, suspects.MAX_IGNORE_BYTES)
