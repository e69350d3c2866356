"""search/realdirs.py: a search's folders resolved from their parents' real paths answer
exactly as os.path.realpath does, whatever links, missing folders or files lie on the way
(grep's check that a printed path lies beneath the root, and its proof of the lines
shown, both rely on it)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from readkeeper.files import reach
from readkeeper.search.realdirs import RealFolders


def _tree(workspace: Path, outside: Path) -> list[str]:
    (workspace / "a" / "b" / "c").mkdir(parents=True)
    (workspace / "a" / "file.txt").write_text("x\n")
    (workspace / "link_to_b").symlink_to(workspace / "a" / "b")
    (workspace / "a" / "rel").symlink_to("b/c")  # relative, within
    (workspace / "a" / "chain").symlink_to("../link_to_b")  # a link to a link
    (workspace / "out").symlink_to(outside)  # leads out of the workspace
    (workspace / "loop").symlink_to("loop")  # a link to itself
    (workspace / "dangling").symlink_to("nowhere")
    (outside / "inner").mkdir()
    names = [
        "",
        "a",
        "a/b",
        "a/b/c",
        "link_to_b",
        "link_to_b/c",
        "a/rel",
        "a/chain",
        "a/chain/c",
        "out",
        "out/inner",
        "loop",
        "loop/x",
        "dangling",
        "dangling/x",
        "missing",
        "missing/deeper/still",
        "a/file.txt",
        "a/file.txt/under_a_file",
    ]
    return [str(workspace / name) if name else str(workspace) for name in names]


@pytest.mark.parametrize("deep", [64, 0], ids=["by-path", "through-descriptors"])
def test_each_folder_resolves_as_realpath_does(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, deep: int
) -> None:
    # `deep` 0: every folder looked in through its descriptor (reach.Looker), as one
    # more than 64 names deep is.
    monkeypatch.setattr(reach, "_DEEP", deep)
    outside = tmp_path / "outside"
    outside.mkdir()
    folders = _tree(workspace, outside)
    resolved = RealFolders()
    for folder in folders:  # in order: each parent resolved before its children
        assert resolved(folder) == os.path.realpath(folder), folder
    fresh = RealFolders()
    for folder in reversed(folders):  # children first: the parents found on the way
        assert fresh(folder) == os.path.realpath(folder), folder


def test_a_folder_thousands_deep_resolves_without_recursion(tmp_path: Path) -> None:
    deep = str(tmp_path) + "/d" * 3000  # names only: nothing there, as realpath allows
    assert RealFolders()(deep) == os.path.realpath(deep)


def test_a_folder_that_became_a_link_since_its_parent_was_resolved(
    workspace: Path, tmp_path: Path
) -> None:
    # Each folder is looked at when first asked for: one swapped for a link before then
    # resolves to where the link leads, as realpath would at that moment.
    (workspace / "a" / "b").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    resolved = RealFolders()
    assert resolved(str(workspace / "a")) == str(workspace / "a")
    (workspace / "a" / "b").rmdir()
    (workspace / "a" / "b").symlink_to(elsewhere)
    assert resolved(str(workspace / "a" / "b")) == str(elsewhere)
