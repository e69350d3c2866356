"""`list` hides what ripgrep (and so grep and glob) hides: `.rgignore`, `.ignore` and
`.gitignore` with ripgrep's precedence (the file kind first: `.rgignore` over `.ignore`
over `.gitignore` over `info/exclude`, whatever folder each is in; within a kind the
nearest folder's), `.gitignore` only inside a repository and not past a nested one's
root. Compared with the installed `rg --files` on one tree using all three."""

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
from readkeeper.search import rg
from watch_core_helpers import Watching

FILES = [
    "a.py",
    "x.log",
    "keep.log",
    "important.log",
    "t.tmp",
    "d.dat",
    ".hidden/h.txt",
    "sub/a.tmp",
    "sub/b.dat",
    "sub/c.log",
    "sub/secret.txt",
    "sub/plain.txt",
    "sub/deeper/secret.txt",
    "sub/deeper/e.dat",
    "inner/x.cache",
    "inner/y.log",
    "inner/z.py",
    "other/w.cache",
    "nogit/n.py",
]

IGNORES = {
    ".gitignore": "*.log\n*.cache\n",
    ".ignore": "!keep.log\n*.dat\n",
    ".rgignore": "*.tmp\n!important.log\n",
    "sub/.gitignore": "!a.tmp\n!b.dat\n!c.log\n",
    "sub/.rgignore": "secret.txt\n",
    "sub/deeper/.ignore": "!e.dat\n!secret.txt\n",
    "inner/.ignore": "z.py\n",
}


def _rg_files(root: Path) -> set[str]:
    out = subprocess.run(
        [rg.binary(), "--no-config", "--files", "--hidden", "--glob=!.git"],
        cwd=root,
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout
    return set(out.decode().split())


def _listed(core: Readkeeper, path: str = "") -> set[str]:
    result: dict[str, Any] = calls.call(core, "list", {"path": path, "depth": 10})
    return {entry["name"] for entry in result["entries"] if entry["kind"] == "file"}


@pytest.fixture
def tree(workspace: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    subprocess.run(["git", "init", "-q", str(workspace / "inner")], check=True)
    make(workspace, FILES)
    for name, text in IGNORES.items():
        (workspace / name).write_text(text)
    return workspace


def test_list_hides_what_rg_files_hides(core: Readkeeper, tree: Path) -> None:
    expected = _rg_files(tree)
    # The cases this tree is made of, as ripgrep decides them:
    assert "sub/a.tmp" not in expected  # the root's .rgignore over sub's .gitignore
    assert "sub/b.dat" not in expected  # the root's .ignore over sub's .gitignore
    assert "sub/secret.txt" not in expected
    assert "sub/deeper/secret.txt" not in expected  # sub's .rgignore over deeper's .ignore
    assert "sub/deeper/e.dat" in expected  # the nearest .ignore
    assert {"keep.log", "important.log", "sub/c.log"} <= expected
    assert "inner/x.cache" in expected  # no outer .gitignore inside a nested repository
    assert "inner/z.py" not in expected
    assert _listed(core) == expected


def test_list_of_a_subfolder_hides_what_rg_hides_there(core: Readkeeper, tree: Path) -> None:
    expected = {f"sub/{name}" for name in _rg_files(tree / "sub")}
    assert {f"sub/{name}" for name in _listed(core, "sub")} == expected


def test_outside_a_repository_no_gitignore_applies(core: Readkeeper, workspace: Path) -> None:
    make(workspace, ["a.log", "b.tmp", "c.py"])
    (workspace / ".gitignore").write_text("*.log\n")
    (workspace / ".rgignore").write_text("*.tmp\n")
    assert _listed(core) == _rg_files(workspace) == {"a.log", ".gitignore", ".rgignore", "c.py"}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")
@pytest.mark.skipif(rg.landlock_abi() < 1, reason="a listing is kept only under Landlock")
def test_a_folder_the_watcher_skips_and_rg_walks_by_precedence_shows_new_files(
    workspace: Path,
) -> None:
    """The watcher skips `sub/gen` (its `.gitignore` says so), but the root's `.ignore`
    re-includes it, and ripgrep takes `.ignore` over `.gitignore`: it walks there, so a
    glob's kept listing must not hide a file made there (kept.py `skipped_walked`)."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    make(workspace, ["a.py", "sub/b.py"])
    (workspace / "sub" / "gen").mkdir()
    (workspace / ".ignore").write_text("!gen/\n")
    (workspace / "sub" / ".gitignore").write_text("gen/\n")
    watching = Watching(workspace).start()
    try:
        core = watching.core

        def globbed() -> set[str]:
            result: dict[str, Any] = calls.call(core, "glob", {"pattern": "**/*.py"})
            return {os.path.relpath(p, workspace) for p in result["paths"]}

        assert globbed() == globbed() == {"a.py", "sub/b.py"}
        make(workspace, ["sub/gen/new.py"])
        assert "sub/gen/new.py" in _rg_files(workspace)
        assert globbed() == {"a.py", "sub/b.py", "sub/gen/new.py"}
    finally:
        watching.core.close()
