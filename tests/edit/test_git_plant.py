"""No call of the agent makes a folder that git takes for a repository, in any order of
steps: git needs a valid HEAD in the folder itself (setup.c, is_git_directory), so the
agent never gives a file or a link a name git reads as HEAD, and a folder that holds
one (made by the user) is metadata, refused for every change. Proved with real git."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from gitplant import CONFIG, HEAD, ORDERS, git_dir_of

from conftest import Session
from readkeeper import calls
from readkeeper.client import JsonRpcException
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError


def step(core: Readkeeper, action: tuple[str, ...]) -> None:
    kind, *names = action
    if kind == "write":
        calls.call(core, "write", {"file_path": names[0], "content": names[1]})
    elif kind == "mkdir":
        calls.call(core, "mkdir", {"path": names[0]})
    else:
        calls.call(core, "move", {"source": names[0], "destination": names[1]})


def made(action: tuple[str, ...]) -> str:
    """The name a step makes: a move's destination, else its path."""
    return action[2] if action[0] == "move" else action[1]


def heads(path: str) -> bool:
    return os.path.basename(path).replace("\u200d", "").upper() == "HEAD"


def refusal(core: Readkeeper, action: tuple[str, ...]) -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as caught:
        step(core, action)
    return caught.value


@pytest.mark.parametrize("order", sorted(ORDERS))
def test_no_order_of_steps_plants_a_repository(
    core: Readkeeper, workspace: Path, order: str
) -> None:
    refused: list[tuple[str, str]] = []
    for action in ORDERS[order]:
        try:
            step(core, action)
        except ReadkeeperError as error:
            refused.append((made(action), error.kind))
    # Only the step that names a HEAD is refused, whichever comes; the rest are free.
    assert refused, "every step was done"
    assert all(kind == "unsupported" and heads(name) for name, kind in refused), refused
    folder = workspace / ("s" if (workspace / "s").is_dir() else "prep")
    assert git_dir_of(folder) is None, sorted(os.listdir(folder))


def test_the_check_is_git_s_own_verdict(workspace: Path) -> None:
    # The control: the same folder, with the HEAD readkeeper refuses, is a repository.
    folder = workspace / "s"
    (folder / "objects").mkdir(parents=True)
    (folder / "refs").mkdir()
    (folder / "config").write_text(CONFIG)
    assert git_dir_of(folder) is None
    (folder / "HEAD").write_text(HEAD)
    assert git_dir_of(folder) == "."


def test_a_folder_holding_a_head_is_metadata_for_every_change(
    core: Readkeeper, workspace: Path
) -> None:
    # A HEAD the user made (a half-built repository, a fixture): objects and refs are
    # all git lacks, so nothing is made, written or moved in that folder.
    folder = workspace / "half"
    folder.mkdir()
    (folder / "HEAD").write_text(HEAD)
    (workspace / "cfg").write_text(CONFIG)
    (workspace / "r").mkdir()
    for action in (
        ("mkdir", "half/objects"),
        ("mkdir", "half/refs/heads"),
        ("write", "half/config", CONFIG),
        ("move", "cfg", "half/config"),
        ("move", "r", "half/refs"),
        ("move", "half/HEAD", "HEAD.txt"),
        ("move", "half", "whole"),
    ):
        error = refusal(core, action)
        assert error.kind == "unsupported", action
        assert "version-control metadata" in error.message
    assert sorted(os.listdir(folder)) == ["HEAD"]


def test_a_symlink_or_a_user_s_file_never_becomes_head(core: Readkeeper, workspace: Path) -> None:
    # git reads a HEAD symlink's target name ("refs/..."), not its content.
    folder = workspace / "s"
    (folder / "objects").mkdir(parents=True)
    (folder / "refs").mkdir()
    (workspace / "link").symlink_to("refs/heads/main")
    (workspace / "users.txt").write_text(HEAD)
    for source in ("link", "users.txt"):
        error = refusal(core, ("move", source, "s/HEAD"))
        assert error.kind == "unsupported"
        assert "HEAD" in error.message
    assert not os.path.lexists(folder / "HEAD")
    assert git_dir_of(folder) is None


@pytest.mark.parametrize(
    "name", ["s/HEAD::$DATA", "s/HEAD. ", "s/hEaD", "s/.git::$INDEX_ALLOCATION"]
)
def test_every_spelling_of_head_or_git_is_refused(
    core: Readkeeper, workspace: Path, name: str
) -> None:
    # Names macOS or Windows take for HEAD (case, a stream suffix, trailing dots).
    error = refusal(core, ("write", name, HEAD))
    assert error.kind == "unsupported"
    assert not (workspace / name).exists()


def test_a_git_file_or_a_link_never_leads_to_a_head(core: Readkeeper, workspace: Path) -> None:
    # A `.git` file naming a folder prepared as a repository is refused by its name; a
    # link whose target is named HEAD is refused by the target's name.
    folder = workspace / "prep"
    (folder / "objects").mkdir(parents=True)
    (folder / "refs").mkdir()
    (workspace / "w").mkdir()
    (workspace / "innocent.txt").symlink_to(folder / "HEAD")
    (workspace / "gitfile").write_text("gitdir: ../prep\n")
    assert refusal(core, ("write", "w/.git", "gitdir: ../prep\n")).kind == "unsupported"
    assert refusal(core, ("move", "gitfile", "w/.git")).kind == "unsupported"
    error = refusal(core, ("write", "innocent.txt", HEAD))
    assert error.kind == "unsupported"
    assert "HEAD" in error.message
    assert not os.path.lexists(folder / "HEAD")
    assert git_dir_of(folder) is None
    assert git_dir_of(workspace / "w") is None


def test_what_a_source_tree_holds_is_written_as_ever(core: Readkeeper, workspace: Path) -> None:
    # The false positives the rule avoids: config files, objects/ and refs/ folders,
    # and a folder named HEAD (git never takes a folder for HEAD).
    for action in (
        ("write", "app/config", "[section]\nkey = 1\n"),
        ("mkdir", "app/objects"),
        ("mkdir", "app/refs/heads"),
        ("mkdir", "app/HEAD/partials"),
        ("mkdir", "app/head"),
        ("write", "app/HEAD/partials/x.html", "<p>x</p>\n"),
        ("write", "app/headers.h", "#pragma once\n"),
        ("write", "app/HEAD.md", "# head\n"),
    ):
        step(core, action)
    assert git_dir_of(workspace / "app") is None


def test_undo_never_writes_in_a_folder_that_became_metadata(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "s" / "notes.txt"
    path.parent.mkdir()
    path.write_text("one\n")
    calls.call(core, "read", {"file_path": str(path)})
    calls.call(core, "edit", {"file_path": str(path), "old_string": "one", "new_string": "two"})
    subprocess.run(["git", "init", "-q", "--bare", str(path.parent)], check=True)
    with pytest.raises(ReadkeeperError) as caught:
        calls.call(core, "undo", {})
    assert caught.value.kind == "unsupported"
    assert path.read_text() == "two\n"


@pytest.mark.parametrize("name", [".sl/config", ".pijul/config", "_FOSSIL_", ".fslckout"])
def test_the_other_version_control_systems_are_refused(
    core: Readkeeper, workspace: Path, name: str
) -> None:
    error = refusal(core, ("write", name, "x\n"))
    assert error.kind == "unsupported"
    assert not (workspace / name).exists()


async def lsp_step(lsp: Session, action: tuple[str, ...]) -> Any:
    kind, *names = action
    root = lsp.root
    if kind == "write":
        params: dict[str, Any] = {"file_path": str(root / names[0]), "content": names[1]}
    elif kind == "mkdir":
        params = {"path": str(root / names[0])}
    else:
        params = {"source": str(root / names[0]), "destination": str(root / names[1])}
    return await lsp.client.request(f"readkeeper/{kind}", params)


@pytest.mark.parametrize("order", sorted(ORDERS))
async def test_over_lsp_no_order_of_steps_plants_a_repository(
    lsp: Session, workspace: Path, order: str
) -> None:
    refused = []
    for action in ORDERS[order]:
        try:
            await lsp_step(lsp, action)
        except JsonRpcException as error:
            refused.append((made(action), error.data["kind"]))
    assert all(kind == "unsupported" and heads(name) for name, kind in refused), refused
    assert refused
    folder = workspace / ("s" if (workspace / "s").is_dir() else "prep")
    assert git_dir_of(folder) is None, sorted(os.listdir(folder))
