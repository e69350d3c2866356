"""One budget for git status: whatever held libgit2 past git_timeout_ms (a FIFO loose
object, a FIFO pack index, an object inflating to gigabytes, a FIFO `.gitignore` beyond
the bounded look), a later status of the unchanged repository is not run again, and the
answer names what is known with a next step that can help. Every call waited 2 s and
said "Ask for the attachments again, or ask the user to raise git_timeout_ms" (attack
round 26). A `.git` that names no git folder is `corrupt`, never a status gone without
a word; a repository's pointer outside names the setting of every front end."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from mcp_helpers import mcp_env, private_runtime_dir, stdio_client, text_of
from readkeeper.attachments import gitstatus, gitstatus_kinds, gitstatus_stalls, gitstatus_workers
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import AttachmentsParams

SETTINGS = {"git_timeout_ms": 2_000, "attachments_timeout_ms": 30_000}
NOT_RUN_AGAIN = "not run again"


def git(root: Path, *args: str) -> str:
    env = {"LC_ALL": "C", "PATH": os.environ["PATH"], "HOME": str(root.parent)}
    command = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-C", str(root)]
    done = subprocess.run([*command, *args], check=True, env=env, capture_output=True, text=True)
    return done.stdout.strip()


def repository(root: Path) -> None:
    git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("one\n")
    git(root, "add", "a.txt")
    git(root, "commit", "-q", "-m", "one")


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times the worker was asked for a status (gitstatus._run), each run real."""
    counted = [0]
    real = gitstatus._run

    def counting(*args: Any) -> dict[str, Any]:
        counted[0] += 1
        return real(*args)

    monkeypatch.setattr(gitstatus, "_run", counting)
    return counted


def reasons(core: Readkeeper) -> str:
    result = core.attachments(AttachmentsParams(types=["git_status"]))
    assert [a for a in result["attachments"] if a["type"] == "git_status"] == [], result
    [dropped] = result["dropped"]
    reason: str = dropped["reason"]
    assert "Ask for the attachments again" not in reason, reason
    return reason


def one_reason(workspace: Path) -> str:
    """The reason git status is dropped, asked once of a new core of `workspace`."""
    core = Readkeeper(roots=[str(workspace)], client_settings=SETTINGS)
    try:
        return reasons(core)
    finally:
        core.close()


def fifo_for_head_commit(root: Path) -> tuple[Path, bytes]:
    commit = git(root, "rev-parse", "HEAD")
    loose = root / ".git" / "objects" / commit[:2] / commit[2:]
    kept = loose.read_bytes()
    loose.unlink()
    os.mkfifo(loose)
    return loose, kept


def test_a_fifo_loose_object_is_named_and_not_run_again(workspace: Path, runs: list[int]) -> None:
    repository(workspace)
    loose, kept = fifo_for_head_commit(workspace)
    named = f"objects/{loose.parent.name}/{loose.name} in its git folder is a named pipe (FIFO)"
    core = Readkeeper(roots=[str(workspace)], client_settings=SETTINGS)
    try:
        first = reasons(core)
        assert first.startswith("corrupt: git status could not read the repository: "), first
        assert named in first, first
        assert "ask the user to remove or replace it" in first
        assert "git_timeout_ms" not in first
        second = reasons(core)
        assert second.startswith("corrupt: "), second
        assert NOT_RUN_AGAIN in second, second
        assert named in second, second
        assert runs == [1]  # the second call did not wait on the FIFO again
        loose.unlink()  # put back: objects/xx changed, so it runs again
        loose.write_bytes(kept)
        [item] = core.attachments(AttachmentsParams(types=["git_status"]))["attachments"]
        assert "branch main, clean" in item["content"], item
        assert runs == [2]
    finally:
        core.close()


def test_a_fifo_pack_index_is_named_before_git_status_runs(
    workspace: Path, runs: list[int]
) -> None:
    repository(workspace)
    git(workspace, "repack", "-a", "-d", "-q")
    [index] = (workspace / ".git" / "objects" / "pack").glob("*.idx")
    index.unlink()
    os.mkfifo(index)
    reason = one_reason(workspace)
    assert reason.startswith("corrupt: "), reason
    assert f"objects/pack/{index.name} in its git folder is a named pipe (FIFO)" in reason
    assert runs == [0]


def test_a_timeout_with_nothing_named_is_not_run_again_until_the_git_folder_changes(
    workspace: Path, runs: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    repository(workspace)
    (workspace / "a" / "b").mkdir(parents=True)
    os.mkfifo(workspace / "a" / "b" / ".gitignore")
    monkeypatch.setattr(gitstatus_kinds, "_LOOK_FOLDERS", 1)  # beyond the bounded look
    core = Readkeeper(roots=[str(workspace)], client_settings=SETTINGS)
    try:
        first = reasons(core)
        assert first.startswith("too_large: git status took longer than 2 s"), first
        assert "ask the user to look at the repository" in first.lower(), first
        second = reasons(core)
        assert second.startswith("too_large: git status was not run again: "), second
        assert "the git folder has not changed since" in second
        assert runs == [1]
        git(workspace, "update-ref", "refs/heads/other", "HEAD")  # the git folder changed
        third = reasons(core)
        assert third.startswith("too_large: git status took longer than 2 s"), third
        assert runs == [2]
    finally:
        core.close()


def empty(dot_git: Path) -> str:
    dot_git.write_text("")
    return "its .git file is empty"


def garbage(dot_git: Path) -> str:
    dot_git.write_text("garbage\n")
    return 'its .git file does not name a git folder (its first line "garbage" does not'


def fifo(dot_git: Path) -> str:
    os.mkfifo(dot_git)
    return ".git at its root is a named pipe (FIFO)"


def unix_socket(dot_git: Path) -> str:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(dot_git))  # a path of the workspace: short enough under tmp
    server.close()
    return ".git at its root is a socket"


@pytest.mark.parametrize("make", [empty, garbage, fifo, unix_socket])
def test_a_dot_git_naming_no_git_folder_is_said(workspace: Path, make: Any) -> None:
    said = make(workspace / ".git")
    reason = one_reason(workspace)
    assert reason.startswith("corrupt: git status could not read the repository: "), reason
    assert said in reason, reason


def test_a_reference_that_cannot_be_peeled_is_quoted_once(workspace: Path) -> None:
    repository(workspace)
    (workspace / ".git" / "refs" / "heads" / "main").write_text("1" * 40 + "\n")
    reason = one_reason(workspace)
    assert reason.startswith('corrupt: git status could not read the repository: "'), reason
    assert '\\"' not in reason, reason


async def test_a_fifo_loose_object_over_mcp_is_not_waited_on_twice(workspace: Path) -> None:
    repository(workspace)
    loose, _ = fifo_for_head_commit(workspace)
    env = {**mcp_env(private_runtime_dir()), "READKEEPER_GIT_TIMEOUT_MS": "2000"}
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        said = []
        for _ in range(2):
            result = await client.call_tool("attachments", {"types": ["git_status"]})
            said.append(text_of(result))
    for text in said:
        assert f"objects/{loose.parent.name}/{loose.name} in its git folder is a named pipe" in text
        assert "Ask for the attachments again" not in text, text
    assert NOT_RUN_AGAIN not in said[0], said
    assert NOT_RUN_AGAIN in said[1], said


async def test_a_pointer_outside_names_the_mcp_setting(workspace: Path) -> None:
    repository(workspace)
    (workspace / ".git" / "commondir").write_text("../../nowhere\n")
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        result = await client.call_tool("attachments", {"types": ["git_status"]})
    text = text_of(result)
    assert 'its commondir names "../../nowhere", outside the workspace' in text, text
    assert "READKEEPER_ALLOWED_PATHS" in text, text


class Counted:
    """The filesystem calls this thread makes (os.stat, os.lstat, os.scandir's entries)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        self.thread = threading.get_ident()
        for name in ("stat", "lstat", "scandir", "listdir"):
            monkeypatch.setattr(os, name, self.wrap(getattr(os, name), name == "scandir"))

    def wrap(self, real: Any, listing: bool) -> Any:
        def counting(*args: Any, **kwargs: Any) -> Any:
            mine = threading.get_ident() == self.thread
            self.calls += mine
            got = real(*args, **kwargs)
            if listing and mine:
                return self.entries(got)
            return got

        return counting

    def entries(self, listing: Any) -> Any:
        with listing:
            for entry in listing:
                self.calls += 1
                yield entry


def remembered_refusal_calls(root: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """The filesystem calls of a git status of `root` answered from memory (the last one
    ran out of time), in a fresh memory."""
    gitstatus_stalls.forget(str(root))
    core = Readkeeper(roots=[str(root)], client_settings=SETTINGS)
    try:
        with monkeypatch.context() as patched:

            def timed_out(*_args: Any) -> dict[str, Any]:
                raise TimeoutError

            patched.setattr(gitstatus, "_run", timed_out)
            with pytest.raises(ReadkeeperError, match="took longer than"):
                gitstatus.status(core.workspace, str(root), 2.0)
        with monkeypatch.context() as patched:
            counted = Counted(patched)
            with pytest.raises(ReadkeeperError, match=NOT_RUN_AGAIN):
                gitstatus.status(core.workspace, str(root), 2.0)
        return counted.calls
    finally:
        gitstatus_stalls.forget(str(root))
        core.close()


def test_a_remembered_refusal_looks_at_a_fixed_number_of_files(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Junk files in objects/pack (100,000: every call took 2.5 s to say "not run
    again", attack round 28): the remembered refusal lists no folder the repository
    fills, so its filesystem calls do not grow with them."""
    repository(workspace)
    before = remembered_refusal_calls(workspace, monkeypatch)
    pack = workspace / ".git" / "objects" / "pack"
    for n in range(3000):
        (pack / f"junk{n:06d}").touch()
    for n in range(300):
        (workspace / ".git" / "objects" / f"junk{n}").touch()
    after = remembered_refusal_calls(workspace, monkeypatch)
    assert after == before, (before, after)
    assert before < 400, before


def test_a_status_the_attachments_timeout_would_cut_is_remembered(
    workspace: Path, runs: list[int]
) -> None:
    """git_timeout_ms above attachments_timeout_ms (10 s, 3 s: what a too_large message
    suggests for a large repository): the source was cut first, nothing was remembered,
    every call waited 3 s and asked for git status alone, as it was (attack round 28).
    The status is given what the attachments timeout leaves it, one rule for both."""
    repository(workspace)
    loose, _ = fifo_for_head_commit(workspace)
    settings = {"git_timeout_ms": 600_000, "attachments_timeout_ms": 3_000}
    core = Readkeeper(roots=[str(workspace)], client_settings=settings)
    try:
        first = reasons(core)
        second = reasons(core)
    finally:
        core.close()
    named = f"objects/{loose.parent.name}/{loose.name} in its git folder is a named pipe"
    assert named in first, first
    assert NOT_RUN_AGAIN in second, second
    assert runs == [1]
    for said in (first, second):
        assert "Ask for it alone" not in said, said


def test_stalled_roots_are_each_tried_in_the_first_call(tmp_path: Path, runs: list[int]) -> None:
    # Round 29: one worker ran one root's status at a time, so with four roots each
    # stalled on a FIFO the others waited behind it, were told to ask again, and each
    # call found only one more (four calls of 2 s). Side by side, the first call tries
    # every root, and the second waits on none.
    roots = []
    for n in range(gitstatus_workers.MOST_WORKERS):
        root = (tmp_path / f"r{n}").resolve()
        root.mkdir()
        repository(root)
        fifo_for_head_commit(root)
        roots.append(str(root))
    core = Readkeeper(roots=roots, client_settings=SETTINGS)
    try:
        for call in ("first", "second"):
            result = core.attachments(AttachmentsParams(types=["git_status"]))
            said = [d["reason"] for d in result["dropped"]]
            assert len(said) == len(roots), (call, said)
            for reason in said:
                assert "named pipe" in reason, (call, reason)
                assert "Ask for the attachments again" not in reason, (call, reason)
        assert runs == [len(roots)]
    finally:
        core.close()
