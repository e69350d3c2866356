"""readkeeper never writes version-control metadata: git runs commands named in
`.git/config` (core.fsmonitor, core.pager) and `.git/hooks/*`, so a prompt-injected agent
that plants one there runs code at the user's next `git status` or commit. Every path
that really lies in a repository's metadata (by any name that reaches it: a symlink,
`..`, a case variant, a gitdir named by a `.git` file) is refused for edit and write,
and stays readable."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import Session
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import EditParams, NotebookEditParams, ReadParams, WriteParams

CONFIG = "[core]\n\trepositoryformatversion = 0\n"


def git_repo(folder: Path) -> Path:
    """A real repository made by git itself."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


def refused(core: Readkeeper, path: Path | str, content: str = "x = 1\n") -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as caught:
        core.write(WriteParams(str(path), content))
    return caught.value


@pytest.mark.parametrize(
    "name",
    [
        ".git/config",
        ".git/hooks/pre-commit",
        ".git/info/attributes",
        "sub/../.git/hooks/post-checkout",
        "./.git/HEAD",
        ".hg/hgrc",
        ".svn/entries",
        ".jj/repo/config.toml",
        ".bzr/branch/branch.conf",
        "_darcs/prefs/defaults",
        "nested/.git/config",
        ".GIT/config",
        ".Git/hooks/pre-commit",
    ],
)
def test_metadata_paths_are_refused(core: Readkeeper, workspace: Path, name: str) -> None:
    git_repo(workspace)
    (workspace / "sub").mkdir()
    before = (workspace / ".git" / "config").read_bytes()
    error = refused(core, name)
    assert error.kind == "unsupported", error.message
    assert "version-control metadata" in error.message
    assert "Ask the user to make that change" in error.message  # no shell command
    assert (workspace / ".git" / "config").read_bytes() == before
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()


def test_an_edit_of_git_config_is_refused_and_reading_it_is_allowed(
    core: Readkeeper, workspace: Path
) -> None:
    git_repo(workspace)
    config = workspace / ".git" / "config"
    before = config.read_bytes()
    read = core.read(ReadParams(str(config)))
    assert read.type == "text"
    with pytest.raises(ReadkeeperError) as caught:
        core.edit(EditParams(str(config), "[core]", '[core]\n\tfsmonitor = "touch pwned; false"'))
    assert caught.value.kind == "unsupported"
    assert config.read_bytes() == before


def test_a_symlink_into_git_is_refused(core: Readkeeper, workspace: Path) -> None:
    git_repo(workspace)
    (workspace / "innocent.cfg").symlink_to(workspace / ".git" / "config")
    (workspace / "hooks").symlink_to(workspace / ".git" / "hooks")
    assert refused(core, workspace / "innocent.cfg").kind == "unsupported"
    assert refused(core, workspace / "hooks" / "pre-commit").kind == "unsupported"
    assert "fsmonitor" not in (workspace / ".git" / "config").read_text()


def test_a_gitdir_named_by_a_git_file_is_refused(core: Readkeeper, workspace: Path) -> None:
    # A separate git folder (`git init --separate-git-dir`) and a linked worktree
    # (`git worktree add`): the work tree's `.git` is a file naming the real gitdir.
    main = git_repo(workspace / "main")
    (main / "a.txt").write_text("a\n")
    subprocess.run(["git", "-C", str(main), "add", "a.txt"], check=True)
    subprocess.run(
        ["git", "-C", str(main), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a"],
        check=True,
    )
    subprocess.run(
        ["git", "-C", str(main), "worktree", "add", "-q", str(workspace / "wt")], check=True
    )
    work = workspace / "work"
    subprocess.run(
        ["git", "init", "-q", "--separate-git-dir", str(workspace / "store"), str(work)],
        check=True,
    )
    assert (work / ".git").is_file()
    for path in (
        workspace / "store" / "config",
        workspace / "store" / "hooks" / "pre-commit",
        main / ".git" / "worktrees" / "wt" / "config.worktree",
        workspace / "wt" / ".git",  # the gitdir file itself
        work / ".git",
    ):
        assert refused(core, path).kind == "unsupported", path
    # Files of the work trees themselves are written as ever.
    assert core.write(WriteParams(str(workspace / "wt" / "new.txt"), "new\n")).created
    assert core.write(WriteParams(str(work / "new.txt"), "new\n")).created


def test_a_notebook_cell_edit_in_git_is_refused(core: Readkeeper, workspace: Path) -> None:
    git_repo(workspace)
    notebook = workspace / ".git" / "nb.ipynb"
    notebook.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    core.read(ReadParams(str(notebook)))
    with pytest.raises(ReadkeeperError) as caught:
        core.edit_cell(NotebookEditParams(str(notebook), new_source="x", edit_mode="insert"))
    assert caught.value.kind == "unsupported"


def test_names_that_only_look_alike_are_written(core: Readkeeper, workspace: Path) -> None:
    git_repo(workspace)
    for name in (".github/workflows/ci.yml", ".gitignore", ".gitattributes", "git/x", "a.git"):
        assert core.write(WriteParams(str(workspace / name), "x\n")).created, name


async def test_an_agent_cannot_plant_a_command_for_git(lsp: Session, workspace: Path) -> None:
    git_repo(workspace)
    config = workspace / ".git" / "config"
    assert (await lsp.read(config))["type"] == "text"
    error = await lsp.error(
        "readkeeper/edit",
        {
            "file_path": ".git/config",
            "old_string": "[core]",
            "new_string": "[core]\n\tfsmonitor = x",
        },
    )
    assert error.data["kind"] == "unsupported"
    error = await lsp.error(
        "readkeeper/write", {"file_path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}
    )
    assert error.data["kind"] == "unsupported"
    assert "fsmonitor" not in config.read_text()
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()


def test_a_refusal_names_the_metadata_folder_by_the_naming_rule(
    core: Readkeeper, workspace: Path
) -> None:
    """A folder holding a HEAD is the tree's, and its name may hold a line break: the
    refusal quotes it, so it never starts a line of readkeeper's own."""
    folder = workspace / "tools\nkind: ok"
    folder.mkdir()
    (folder / "HEAD").write_text("ref: refs/heads/main\n")
    error = refused(core, folder / "config")
    assert "\nkind: ok" not in error.message
    assert '"' + str(folder).replace("\n", "\\n") + '"' in error.message
