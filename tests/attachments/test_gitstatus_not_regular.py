"""A repository file libgit2 opens by path that is not a regular file (a FIFO, a
socket, a device) ends git status at once, saying which file and what it is: a FIFO
`.git/index` made every attachments call wait its whole git_timeout_ms and then said
"took longer ... ask again or raise git_timeout_ms", next steps that could never work
(attack round 24)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from mcp_helpers import mcp_env, private_runtime_dir, stdio_client, text_of
from readkeeper.core import Readkeeper
from readkeeper.protocol import AttachmentsParams

# Past the point where a wait would show: a status that waits is dropped `too_large`.
SETTINGS = {"git_timeout_ms": 2_000, "attachments_timeout_ms": 30_000}


def repository(root: Path) -> None:
    env = {"LC_ALL": "C", "PATH": os.environ["PATH"], "HOME": str(root.parent)}
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-C", str(root)]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True, env=env)
    (root / "a.txt").write_text("one\n")
    subprocess.run([*git, "add", "a.txt"], check=True, env=env)
    subprocess.run([*git, "commit", "-q", "-m", "one"], check=True, env=env)
    subprocess.run([*git, "pack-refs", "--all"], check=True, env=env)  # packed-refs made
    subprocess.run([*git, "update-ref", "refs/heads/main", "HEAD"], check=True, env=env)


@pytest.mark.parametrize(
    "name", ["index", "HEAD", "config", "packed-refs", "refs/heads/main", "info/exclude"]
)
def test_a_fifo_among_the_repositorys_files_ends_git_status_at_once(
    workspace: Path, name: str
) -> None:
    repository(workspace)
    entry = workspace / ".git" / name
    entry.unlink(missing_ok=True)
    os.mkfifo(entry)
    (workspace / "AGENTS.md").write_text("rules\n")
    core = Readkeeper(roots=[str(workspace)], client_settings=SETTINGS)
    try:
        result = core.attachments(AttachmentsParams(types=["git_status", "memory"]))
    finally:
        core.close()
    assert [a["type"] for a in result["attachments"]] == ["memory"]
    [dropped] = result["dropped"]
    assert dropped["type"] == "git_status"
    reason = dropped["reason"]
    assert reason.startswith("corrupt: git status could not read the repository: "), reason
    assert f"{name} in its git folder is a named pipe (FIFO), not a regular file" in reason
    assert "took longer" not in reason
    assert "git_timeout_ms" not in reason
    assert reason.endswith("ask the user to look at the repository.")


def test_a_folder_of_the_repository_that_is_not_one_is_said(workspace: Path) -> None:
    repository(workspace)
    (workspace / ".git" / "info" / "exclude").unlink()
    (workspace / ".git" / "info").rmdir()
    os.mkfifo(workspace / ".git" / "info")
    core = Readkeeper(roots=[str(workspace)], client_settings=SETTINGS)
    try:
        [dropped] = core.attachments(AttachmentsParams(types=["git_status"]))["dropped"]
    finally:
        core.close()
    assert "info in its git folder is a named pipe (FIFO), not a folder" in dropped["reason"]
    assert dropped["reason"].startswith("corrupt: ")


async def test_a_fifo_index_is_said_over_mcp_without_a_wait(workspace: Path) -> None:
    repository(workspace)
    (workspace / ".git" / "index").unlink()
    os.mkfifo(workspace / ".git" / "index")
    env = {**mcp_env(private_runtime_dir()), "READKEEPER_GIT_TIMEOUT_MS": "2000"}
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        for _ in range(2):  # every call, not just the first
            result = await client.call_tool("attachments", {"types": ["git_status"]})
            text = text_of(result)
            assert "index in its git folder is a named pipe (FIFO)" in text, text
            assert '"corrupt: git status could not read the repository: ' in text
            assert "took longer" not in text
