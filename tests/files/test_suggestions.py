"""Did-you-mean suggestions: the very name elsewhere first, the root's prefix restored, then close
names; never a folder, never a path outside the workspace, and no guess when nothing is
close."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from readkeeper.errors import ReadkeeperError
from readkeeper.files.paths import Workspace, suggest


def workspace_at(root: Path) -> Workspace:
    workspace = Workspace()
    workspace.set_roots([str(root)])
    return workspace


def missing(workspace: Workspace, path: str) -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as caught:
        workspace.resolve(path)
    assert caught.value.kind == "not_found"
    return caught.value


def test_the_very_name_elsewhere_comes_before_similar_names(workspace: Path) -> None:
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "colorsys.py").write_text("")
    for name in ("glob.py", "colors.py", "calendar.py"):
        (workspace / name).write_text("")
    error = missing(workspace_at(workspace), "colorsys.py")
    assert error.data["suggestions"][0] == str(workspace / "pkg" / "colorsys.py")
    assert error.message.endswith(f"Did you mean {workspace / 'pkg' / 'colorsys.py'}?")


def test_the_nearest_of_several_files_with_the_name_comes_first(workspace: Path) -> None:
    for folder in ("far/away/deep", "src/app", "src"):
        (workspace / folder).mkdir(parents=True, exist_ok=True)
        (workspace / folder / "util.py").write_text("")
    found = suggest(str(workspace / "src" / "app" / "lib" / "util.py"), [str(workspace)])
    assert found[0] == str(workspace / "src" / "app" / "util.py")
    assert found[1] == str(workspace / "src" / "util.py")


def test_a_path_missing_the_workspace_prefix_finds_the_file_under_the_root(
    workspace: Path,
) -> None:
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "colorsys.py").write_text("")
    # "/pkg/colorsys.py" is outside by its text: refused as such (nothing there is looked
    # up), with the guess made of what is inside.
    with pytest.raises(ReadkeeperError) as caught:
        workspace_at(workspace).resolve("/pkg/colorsys.py")
    error = caught.value
    assert error.kind == "outside_workspace"
    assert error.data["suggestions"] == [str(workspace / "pkg" / "colorsys.py")]
    assert f"Did you mean {workspace / 'pkg' / 'colorsys.py'}?" in error.message


def test_the_root_prefix_restored_comes_before_the_same_name_elsewhere(workspace: Path) -> None:
    # "/pkg/mod.py" typed for "<root>/pkg/mod.py": that file, not the nearest or shortest
    # other "mod.py" ("x/mod.py" is shorter, and shares as few folders with the path).
    for folder in ("pkg", "x"):
        (workspace / folder).mkdir()
        (workspace / folder / "mod.py").write_text("")
    found = suggest("/pkg/mod.py", [str(workspace)])
    assert found[:2] == [str(workspace / "pkg" / "mod.py"), str(workspace / "x" / "mod.py")]


def test_nothing_close_means_no_guess(workspace: Path) -> None:
    (workspace / ".git").mkdir()
    (workspace / "main.py").write_text("")
    error = missing(workspace_at(workspace), "zqxjv.bin")
    assert error.data["suggestions"] == []
    assert "Did you mean" not in error.message
    assert f"The workspace root is {workspace}." in error.message


def test_a_folder_is_never_suggested(workspace: Path) -> None:
    (workspace / "config").mkdir()
    (workspace / "configs").mkdir()
    (workspace / "settings").mkdir()
    (workspace / "settings" / "confg.toml").write_text("")
    found = suggest(str(workspace / "confg"), [str(workspace)])
    assert str(workspace / "config") not in found
    assert str(workspace / "configs") not in found
    assert all(os.path.isfile(p) for p in found)


def test_a_link_to_a_file_outside_is_never_suggested(workspace: Path, tmp_path: Path) -> None:
    secret = tmp_path / "outside" / "credentials"
    secret.parent.mkdir()
    secret.write_text("key")
    (workspace / "credentials").symlink_to(secret)
    (workspace / "credential.txt").write_text("")
    found = suggest(str(workspace / "credentials.txt"), [str(workspace)])
    assert str(workspace / "credentials") not in found
    assert found == [str(workspace / "credential.txt")]


def test_a_folder_swapped_for_a_link_out_after_the_walk_is_never_listed_for_guesses(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 47: a miss beside a folder that another process kept swapping for a link to
    /etc guessed /etc's files (`passwd`, `shadow`): the walk found the folder inside,
    then it was listed by its path, through the link put there since. The folder is
    listed, and each guess looked at, beneath the root following no symlink. Here the
    walk's word is taken as it was before the swap: the folder is a link out now."""
    from readkeeper.files import guesses

    outside = tmp_path / "outside"
    outside.mkdir()
    for name in ("passwd", "passwd-", "shadow"):
        (outside / name).write_text("secret\n")
    (workspace / "d").mkdir()
    (workspace / "d" / "d").symlink_to(outside, target_is_directory=True)
    monkeypatch.setattr(guesses, "_real", lambda path, reaches: path)  # "inside", it said
    guessed = suggest(str(workspace / "d" / "d" / "passwdd"), [str(workspace)])
    assert not any("passwd" in guess or "shadow" in guess for guess in guessed), guessed
    reaches = [guesses.Reach(str(workspace), str(workspace))]
    assert guesses.nearest_folder(str(workspace / "d" / "d" / "x" / "y"), reaches) == str(
        workspace / "d"
    )
