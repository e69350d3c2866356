"""A folder moved out of the workspace while a change is written in it (attack round 25,
A20): the folder's descriptor follows it, so a write made through it would land outside
the roots and be reported done at a path that no longer exists. Each test lets another
program (here, the test itself) move the folder out at one exact step of the write, by
wrapping that step of files/atomic.py, and checks that nothing is left changed in the
moved folder and that the call is refused as stale, naming the move."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.edit import moves
from readkeeper.errors import ReadkeeperError
from readkeeper.files import atomic, beneath

ORIGINAL = "keep this line\nand this one\n"


@pytest.fixture
def tree(workspace: Path, tmp_path: Path) -> tuple[Readkeeper, Path, Path]:
    """A core on `workspace`, its folder `d` holding f.txt, and where `d` goes when moved."""
    (workspace / "d").mkdir()
    (workspace / "d" / "f.txt").write_text(ORIGINAL)
    away = tmp_path / "away"
    away.mkdir()
    return Readkeeper(roots=[str(workspace)]), workspace / "d", away / "d"


def moving_after(
    monkeypatch: pytest.MonkeyPatch, step: str, folder: Path, to: Path
) -> Callable[[], bool]:
    """Wrap atomic's `step` so that the first time it has run, `folder` is moved to `to`
    (a racing program's rename); returns whether it was."""
    real = getattr(atomic, step)
    done: list[bool] = []

    def step_then_move(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        if not done:
            done.append(True)
            os.rename(folder, to)
        return result

    monkeypatch.setattr(atomic, step, step_then_move)
    return lambda: bool(done)


def refused(core: Readkeeper, method: str, raw: dict[str, Any]) -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as caught:
        calls.call(core, method, raw)
    return caught.value


def left_as_it_was(moved: Path, names: set[str]) -> None:
    """The moved folder holds what it held, byte for byte, and nothing of ours."""
    assert {p.name for p in moved.iterdir()} == names, sorted(os.listdir(moved))
    if "f.txt" in names:
        assert (moved / "f.txt").read_text() == ORIGINAL


@pytest.mark.parametrize("step", ["_write_temp", "_swap"])
def test_an_edit_whose_folder_moves_out_mid_write_changes_nothing_there(
    tree: tuple[Readkeeper, Path, Path], monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    # `_write_temp`: moved before the rename (the check before it); `_swap`: moved just
    # after the swap put the new text under the name (the check after it takes it back).
    core, folder, away = tree
    calls.call(core, "read", {"file_path": str(folder / "f.txt")})
    happened = moving_after(monkeypatch, step, folder, away)
    edit = {"file_path": str(folder / "f.txt"), "old_string": "keep", "new_string": "EDITED"}
    error = refused(core, "edit", edit)
    assert happened()
    assert error.kind == "stale", error.message
    assert error.data.get("moved") is True
    assert "its folder was moved" in error.message
    left_as_it_was(away, {"f.txt"})


@pytest.mark.parametrize("step", ["_write_temp", "_rename_flags"])
def test_a_new_file_whose_folder_moves_out_mid_write_is_not_left_there(
    tree: tuple[Readkeeper, Path, Path], monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    core, folder, away = tree
    happened = moving_after(monkeypatch, step, folder, away)
    error = refused(core, "write", {"file_path": str(folder / "new.txt"), "content": "ours\n"})
    assert happened()
    assert error.kind == "stale", error.message
    left_as_it_was(away, {"f.txt"})


def test_a_whole_write_whose_folder_moves_out_after_the_swap_is_taken_back(
    tree: tuple[Readkeeper, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    core, folder, away = tree
    calls.call(core, "read", {"file_path": str(folder / "f.txt")})
    happened = moving_after(monkeypatch, "_swap", folder, away)
    error = refused(core, "write", {"file_path": str(folder / "f.txt"), "content": "ours\n"})
    assert happened()
    assert error.kind == "stale"
    left_as_it_was(away, {"f.txt"})


def test_a_move_into_a_folder_moved_out_meanwhile_is_taken_back(
    tree: tuple[Readkeeper, Path, Path], monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    core, folder, away = tree
    (workspace / "g.txt").write_text("moved file\n")
    happened = moving_after(monkeypatch, "rename_new", folder, away)
    move = {"source": str(workspace / "g.txt"), "destination": str(folder / "g.txt")}
    error = refused(core, "move", move)
    assert happened()
    assert error.kind == "stale", error.message
    left_as_it_was(away, {"f.txt"})
    assert (workspace / "g.txt").read_text() == "moved file\n"  # back where it was


@pytest.mark.parametrize("method", ["write", "mkdir"])
def test_folders_made_in_a_folder_moved_out_meanwhile_are_taken_back(
    tree: tuple[Readkeeper, Path, Path], monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    # d/sub is made, then d is moved away as d/sub/deeper is made in it.
    core, folder, away = tree
    real = beneath._open_step
    moves: list[bool] = []

    def step_then_move(parent: int, name: str, flags: int) -> int:
        fd = real(parent, name, flags)
        if name == "sub" and not moves:
            moves.append(True)
            os.rename(folder, away)
        return fd

    monkeypatch.setattr(beneath, "_open_step", step_then_move)
    target = folder / "sub" / "deeper"
    raw = (
        {"file_path": str(target / "new.txt"), "content": "ours\n"}
        if method == "write"
        else {"path": str(target)}
    )
    error = refused(core, method, raw)
    assert moves
    assert error.kind == "stale", error.message
    assert "its folder was moved" in error.message
    left_as_it_was(away, {"f.txt"})


def test_a_change_in_a_folder_that_stays_is_made(
    tree: tuple[Readkeeper, Path, Path],
) -> None:
    # The checks cost a change that meets no move nothing: the same calls succeed.
    core, folder, _ = tree
    calls.call(core, "read", {"file_path": str(folder / "f.txt")})
    edit = {"file_path": str(folder / "f.txt"), "old_string": "keep", "new_string": "EDITED"}
    calls.call(core, "edit", edit)
    calls.call(core, "write", {"file_path": str(folder / "new.txt"), "content": "ours\n"})
    assert (folder / "f.txt").read_text().startswith("EDITED")
    assert (folder / "new.txt").read_text() == "ours\n"


def test_folders_made_for_a_new_file_are_taken_back_when_its_folder_moves_out(
    tree: tuple[Readkeeper, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The folders are made, then `d` moves out as the file is written (round 26, A11):
    # the refusal takes back the file and the folders made for it.
    core, folder, away = tree
    happened = moving_after(monkeypatch, "_write_temp", folder, away)
    target = folder / "n1" / "n2" / "g.txt"
    error = refused(core, "write", {"file_path": str(target), "content": "ours\n"})
    assert happened()
    assert error.kind == "stale", error.message
    left_as_it_was(away, {"f.txt"})


def test_a_change_whose_folder_is_removed_mid_write_is_stale(
    tree: tuple[Readkeeper, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A tree changed under a call is `stale`, never `unsupported` (round 26, A18).
    core, folder, _ = tree
    calls.call(core, "read", {"file_path": str(folder / "f.txt")})
    real = atomic._write_temp

    def removed_first(*args: Any, **kwargs: Any) -> Any:
        shutil.rmtree(folder)
        return real(*args, **kwargs)

    monkeypatch.setattr(atomic, "_write_temp", removed_first)
    edit = {"file_path": str(folder / "f.txt"), "old_string": "keep", "new_string": "EDITED"}
    error = refused(core, "edit", edit)
    assert error.kind == "stale", error.message
    assert not folder.exists()


def test_a_move_whose_source_folder_leaves_is_stale_never_internal(
    tree: tuple[Readkeeper, Path, Path], monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    # Round 26, A07b: the source's folder moved away after the move was resolved.
    core, folder, away = tree
    real = moves._rename

    def moved_first(source: Any, *args: Any) -> Any:
        os.rename(folder, away)
        return real(source, *args)

    monkeypatch.setattr(moves, "_rename", moved_first)
    move = {"source": str(folder / "f.txt"), "destination": str(workspace / "g.txt")}
    error = refused(core, "move", move)
    assert error.kind == "stale", error.message
    left_as_it_was(away, {"f.txt"})
    assert not (workspace / "g.txt").exists()
