"""What a repository's files say is the repository's state, never readkeeper's fault: a
pointer (a `.git` file, `commondir`, alternates, HEAD's ref) leading to nothing is said
`corrupt`, naming it with its text as one quoted string (`gitdir: sub/nothere` was
dropped `internal: FileNotFoundError ... (a fault of readkeeper's)`); a refusal asks the
user and names no command for the agent to run; a FIFO `.gitignore` deep in the tree is
named, not left as "took longer ... raise git_timeout_ms" (attack round 25)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from readkeeper.core import Readkeeper
from readkeeper.protocol import AttachmentsParams

SETTINGS = {"git_timeout_ms": 2_000, "attachments_timeout_ms": 30_000}


def git_init(root: Path) -> None:
    env = {"LC_ALL": "C", "PATH": os.environ["PATH"], "HOME": str(root.parent)}
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True, env=env)


def git_status(root: Path) -> dict[str, Any]:
    core = Readkeeper(roots=[str(root)], client_settings=SETTINGS)
    try:
        result: dict[str, Any] = core.attachments(AttachmentsParams(types=["git_status"]))
        return result
    finally:
        core.close()


def dropped_reason(root: Path) -> str:
    result = git_status(root)
    assert [a for a in result["attachments"] if a["type"] == "git_status"] == [], result
    [dropped] = result["dropped"]
    reason: str = dropped["reason"]
    assert "internal" not in reason, reason
    assert "readkeeper's" not in reason, reason
    return reason


def gitdir_two_deep(ws: Path) -> str:
    (ws / ".git").write_text("gitdir: sub/nothere\n")
    return 'its .git file points to "sub/nothere", which cannot be opened'


def gitdir_one_deep(ws: Path) -> str:
    (ws / ".git").write_text("gitdir: nothere\n")
    return 'its .git file points to "nothere", which cannot be opened'


def gitdir_through_a_file(ws: Path) -> str:
    (ws / "plain").write_text("a file, not a folder\n")
    (ws / ".git").write_text("gitdir: plain/git\n")
    return 'its .git file points to "plain/git", which cannot be opened (Not a directory)'


def commondir_two_deep(ws: Path) -> str:
    git_init(ws)
    (ws / ".git" / "commondir").write_text("x/y\n")
    return 'its commondir names "x/y", which cannot be opened'


def alternates_two_deep(ws: Path) -> str:
    git_init(ws)
    (ws / ".git" / "objects" / "info" / "alternates").write_text("../../q/w/objects\n")
    return 'its objects/info/alternates names "../../q/w/objects", which cannot be opened'


def alternate_info_a_file(ws: Path) -> str:
    git_init(ws)
    (ws / "store" / "objects").mkdir(parents=True)
    (ws / "store" / "objects" / "info").write_text("a file where a folder is\n")
    (ws / ".git" / "objects" / "info" / "alternates").write_text(f"{ws}/store/objects\n")
    return "info, which cannot be opened (Not a directory)"


def head_ref_too_long(ws: Path) -> str:
    git_init(ws)
    (ws / ".git" / "HEAD").write_text(f"ref: refs/heads/{'0' * 300}\n")
    return "git status could not read the repository: "


BROKEN: dict[str, Callable[[Path], str]] = {
    "gitdir_two_deep": gitdir_two_deep,
    "gitdir_one_deep": gitdir_one_deep,
    "gitdir_through_a_file": gitdir_through_a_file,
    "commondir_two_deep": commondir_two_deep,
    "alternates_two_deep": alternates_two_deep,
    "alternate_info_a_file": alternate_info_a_file,
    "head_ref_too_long": head_ref_too_long,
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_pointer_of_the_repository_leading_nowhere_is_corrupt(workspace: Path, case: str) -> None:
    said = BROKEN[case](workspace)
    reason = dropped_reason(workspace)
    assert reason.startswith("corrupt: git status could not read the repository: "), reason
    assert said in reason, reason
    assert reason.endswith("ask the user to look at the repository."), reason


@pytest.mark.parametrize("name", ["commondir", "objects/info/alternates"])
def test_a_fifo_pointer_file_is_corrupt_not_a_refusal(workspace: Path, name: str) -> None:
    git_init(workspace)
    os.mkfifo(workspace / ".git" / name)
    reason = dropped_reason(workspace)
    assert reason.startswith("corrupt: "), reason
    assert f"{name} in its git folder is a named pipe (FIFO), not a regular file" in reason


def test_a_refused_repository_asks_the_user_and_names_no_command(workspace: Path) -> None:
    git_init(workspace)
    (workspace / "evil.cfg").write_text("[core]\n\tfsmonitor = true\n")
    with (workspace / ".git" / "config").open("a") as config:
        config.write("[include]\n\tpath = ../evil.cfg\n")
    [item] = git_status(workspace)["attachments"]
    content: str = item["content"]
    assert "not shown: its config includes other files" in content
    next_step = content.split("\n", 1)[1]
    assert next_step.startswith("Ask the user about it: if they trust this repository, they ")
    assert "`" not in content
    assert "yourself" not in content


def test_a_fifo_gitignore_deep_in_the_tree_is_named(workspace: Path) -> None:
    git_init(workspace)
    (workspace / "a" / "b").mkdir(parents=True)
    (workspace / "a" / "b" / "c.txt").write_text("x\n")
    os.mkfifo(workspace / "a" / "b" / ".gitignore")
    core = Readkeeper(roots=[str(workspace)], client_settings=SETTINGS)
    try:
        for _ in range(2):  # the second is refused at once: the file is remembered
            result = core.attachments(AttachmentsParams(types=["git_status"]))
            [dropped] = result["dropped"]
            reason = dropped["reason"]
            assert reason.startswith("corrupt: git status could not read the repository: ")
            assert "a/b/.gitignore in its work tree is a named pipe (FIFO)" in reason
            assert reason.endswith("ask the user to remove or replace it."), reason
            assert "git_timeout_ms" not in reason
        (workspace / "a" / "b" / ".gitignore").unlink()
        result = core.attachments(AttachmentsParams(types=["git_status"]))
        [item] = result["attachments"]
        assert "?? a/" in item["content"]
    finally:
        core.close()


def test_a_cut_status_names_no_command_for_the_rest(workspace: Path) -> None:
    # git itself would run the fsmonitor of this config, which libgit2 leaves alone.
    git_init(workspace)
    with (workspace / ".git" / "config").open("a") as config:
        config.write("[core]\n\tfsmonitor = true\n")
    for number in range(200):
        (workspace / f"untracked_file_{number:03}.txt").write_text("x\n")
    core = Readkeeper(
        roots=[str(workspace)], client_settings={**SETTINGS, "git_status_max_tokens": 100}
    )
    try:
        [item] = core.attachments(AttachmentsParams(types=["git_status"]))["attachments"]
    finally:
        core.close()
    assert item["truncated"], item
    assert "Ask the user to raise git_status_max_tokens for the full list." in item["content"]
    assert "`" not in item["content"]
