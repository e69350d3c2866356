"""The bounded walk (files/walk.py): a folder chain deeper than Python's recursion limit
is a miss with suggestions, never `internal`; the walk keeps to its depth and count and
never follows a symlink out."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from deep_chain import chains

from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.files.ignore import IgnoreRules
from readkeeper.files.walk import MAX_DEPTH, files_beneath
from readkeeper.protocol import ReadParams
from readkeeper.protocol.search import GlobParams


@pytest.fixture
def deep_chain() -> Iterator[Callable[[Path, int], None]]:
    yield from chains()


def test_a_miss_beside_a_deep_chain_is_not_found_with_suggestions(
    core: Readkeeper, workspace: Path, deep_chain: Callable[[Path, int], None]
) -> None:
    (workspace / "a.txt").write_text("hi\n")
    deep_chain(workspace, 1100)
    with pytest.raises(ReadkeeperError) as caught:
        core.read(ReadParams(str(workspace / "a.tx")))
    assert caught.value.kind == "not_found"
    assert str(workspace / "a.txt") in caught.value.to_data()["suggestions"]


def test_the_walk_keeps_to_its_depth_its_count_and_the_root(
    tmp_path: Path, deep_chain: Callable[[Path, int], None]
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    deep_chain(root, MAX_DEPTH + 5)
    (root / "f.txt").write_text("x")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("x")
    (root / "link").symlink_to(outside)
    found = list(files_beneath([str(root)], 1000))
    assert str(root / "f.txt") in found
    assert not any("secret" in path for path in found)
    assert not any(path.endswith("deepest.txt") for path in found)  # below MAX_DEPTH
    assert max(path.count("/d/") for path in found) < MAX_DEPTH
    assert len(list(files_beneath([str(root)], 3))) <= 3
    skipped = list(files_beneath([str(root)], 1000, skip={"d"}))
    assert sorted(skipped) == sorted([str(root / "f.txt"), str(root / "link")])


def test_the_ignore_rules_judge_a_path_deeper_than_the_recursion_limit(
    tmp_path: Path, deep_chain: Callable[[Path, int], None]
) -> None:
    deep_chain(tmp_path, 1100)
    (tmp_path / ".gitignore").write_text("*.log\n")
    deepest = str(tmp_path) + "/d" * 1100
    rules = IgnoreRules(str(tmp_path))
    assert not rules.ignored(deepest + "/deepest.txt")
    assert rules.ignored(deepest + "/x.log")


def test_glob_finds_a_file_at_the_bottom_of_a_deep_chain(
    core: Readkeeper, workspace: Path, deep_chain: Callable[[Path, int], None]
) -> None:
    deep_chain(workspace, 1100)
    found = core.glob(GlobParams("**/deepest.txt", path=str(workspace)))
    assert [path.endswith("/deepest.txt") for path in found["paths"]] == [True]
