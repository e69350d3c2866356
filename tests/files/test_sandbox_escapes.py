"""No way out of the workspace (issue 10): the deterministic ways out, through the real
server over LSP.

Every filesystem operation on a workspace path must resolve beneath the root and follow
no symlink out (DESIGN.md, "The sandbox"): memory files, change notices, git status,
reads, edits, writes and creates alike. Each test puts a file holding `SECRET` (or a
file that must stay unchanged, or a marker that must not appear) outside the workspace
and a way to it inside, then checks that the server's replies never carry the secret
and that nothing outside changed. The legitimate neighbour of each case (a symlink to
another file inside the workspace, a memory file of its own) must keep working.
"""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from sandbox_helpers import SECRET, leaked, outside_folder

from conftest import Session, start_session
from readkeeper.client import JsonRpcException

DEADLINE_S = 15.0


async def until(condition: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + DEADLINE_S
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {DEADLINE_S:g} s waiting for {what}")
        await asyncio.sleep(0.01)


async def attachments(lsp: Session, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = await lsp.client.request("readkeeper/attachments", params)
    return result


def contents(result: dict[str, Any], kind: str) -> list[str]:
    return [str(a["content"]) for a in result["attachments"] if a["type"] == kind]


async def refusal(lsp: Session, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """The error data of a request that must be refused; never the secret."""
    error = await lsp.error(method, params)
    assert isinstance(error.data, dict), (error.code, error.message)
    assert "kind" in error.data, (error.code, error.message)
    assert not leaked({"message": error.message, "data": error.data}), error.message
    return error.data


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the workspace holding secret.md and copilot-instructions.md."""
    folder = outside_folder(tmp_path)
    (folder / "secret.md").write_text(f"{SECRET}: rules from outside\n")
    (folder / "copilot-instructions.md").write_text(f"{SECRET}: copilot rules\n")
    return folder


# --- 1. memory files ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["AGENTS.md", "CLAUDE.md"])
async def test_a_root_memory_file_linking_out_is_not_attached(
    lsp: Session, workspace: Path, outside: Path, name: str
) -> None:
    (workspace / name).symlink_to(outside / "secret.md")
    (workspace / "QWEN.md").write_text("inside rule: be brief\n")  # the legitimate one
    result = await attachments(lsp, types=["memory"])
    assert not leaked(result), result
    assert any("inside rule: be brief" in c for c in contents(result, "memory")), result


async def test_a_memory_file_above_a_mention_linking_out_is_not_attached(
    lsp: Session, workspace: Path, outside: Path
) -> None:
    (workspace / "sub" / "dir").mkdir(parents=True)
    (workspace / "sub" / "dir" / "file.py").write_text("x = 1\n")
    (workspace / "sub" / "AGENTS.md").symlink_to(outside / "secret.md")
    (workspace / "sub" / "dir" / "CLAUDE.md").write_text("inside rule: tabs\n")
    result = await attachments(lsp, types=["memory"], mentions=["sub/dir/file.py"])
    assert not leaked(result), result
    assert any("inside rule: tabs" in c for c in contents(result, "memory")), result


async def test_a_github_folder_linking_out_is_not_attached(
    lsp: Session, workspace: Path, outside: Path
) -> None:
    (workspace / ".github").symlink_to(outside, target_is_directory=True)
    (workspace / "AGENTS.md").write_text("inside rule: tests first\n")
    result = await attachments(lsp, types=["memory"])
    assert not leaked(result), result
    assert any("inside rule: tests first" in c for c in contents(result, "memory")), result


async def test_a_memory_file_linking_inside_the_workspace_is_attached(
    lsp: Session, workspace: Path
) -> None:
    """The legitimate case: AGENTS.md a symlink to a guide kept elsewhere in the same
    workspace, and .github a symlink to a folder inside it."""
    (workspace / "docs").mkdir()
    (workspace / "docs" / "agents-guide.md").write_text("linked rule: small commits\n")
    (workspace / "AGENTS.md").symlink_to(Path("docs") / "agents-guide.md")
    (workspace / "shared-github").mkdir()
    (workspace / "shared-github" / "copilot-instructions.md").write_text("linked rule: ruff\n")
    (workspace / ".github").symlink_to("shared-github", target_is_directory=True)
    result = await attachments(lsp, types=["memory"])
    memory = contents(result, "memory")
    assert any("linked rule: small commits" in c for c in memory), result
    assert any("linked rule: ruff" in c for c in memory), result


# --- 2. change notices --------------------------------------------------------------------


@pytest_asyncio.fixture
async def watching(workspace: Path) -> AsyncIterator[Session]:
    session = await start_session(workspace)
    try:

        async def watcher_state() -> str:
            state: str = (await session.client.request("readkeeper/stats"))["watcher"]["state"]
            return state

        deadline = time.monotonic() + DEADLINE_S
        while (state := await watcher_state()) in ("off", "starting"):
            assert time.monotonic() < deadline, f"the watcher did not start: {state}"
            await asyncio.sleep(0.01)
        yield session
    finally:
        await session.client.close()


def pushed(session: Session, path: Path) -> list[dict[str, Any]]:
    return [
        change
        for notice in session.client.change_notices
        for change in notice["changes"]
        if change["file_path"] == str(path)
    ]


@pytest.mark.parametrize("channel", ["readkeeper/changes", "readkeeper/attachments"])
async def test_a_read_file_replaced_by_a_link_out_is_not_diffed_against_the_outside(
    watching: Session, workspace: Path, outside: Path, channel: str
) -> None:
    notice = workspace / "notice.txt"
    notice.write_text("what the agent read\n")
    sentinel = workspace / "sentinel.txt"
    sentinel.write_text("0\n")
    await watching.read(notice)
    await watching.read(sentinel)
    link = workspace / ".notice.txt.swap"
    link.symlink_to(outside / "secret.md")
    os.replace(link, notice)  # the name now leads out of the workspace
    # A later change to another read file: its notice comes only after every earlier
    # event was looked at (the watcher's order), so notice.txt's has been decided.
    sentinel.write_text("1\n")
    await until(lambda: pushed(watching, sentinel), "the sentinel's notice")
    assert not leaked(watching.client.change_notices), watching.client.change_notices
    if channel == "readkeeper/changes":
        result = await watching.client.request(channel, {})
        told = [c for c in result["changes"] if c["file_path"] == str(notice)]
    else:
        result = await watching.client.request(channel, {"types": ["changes"]})
        told = [c for c in contents(result, "changes") if str(notice) in c]
    assert not leaked(result), result
    # The agent is told the file it read is no longer what it read (what it is told is
    # the server's choice: deleted, outside the workspace, ...), just never the secret.
    assert told, f"{channel} said nothing about notice.txt: {result}"


# --- 3. git status ------------------------------------------------------------------------


def git(*args: str | Path) -> None:
    subprocess.run(["git", *map(str, args)], check=True, capture_output=True)


async def test_git_status_does_not_follow_a_dot_git_link_out(
    lsp: Session, workspace: Path, tmp_path: Path
) -> None:
    repo = outside_folder(tmp_path, "outside-repo")
    git("init", "-q", "-b", f"{SECRET}-branch", repo)
    (repo / f"{SECRET}-tracked.txt").write_text("tracked\n")
    git("-C", repo, "add", ".")
    git("-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    (workspace / ".git").symlink_to(repo / ".git", target_is_directory=True)
    (workspace / "AGENTS.md").write_text("inside rule\n")
    result = await attachments(lsp, types=["git_status", "memory"])
    assert not leaked(result), result
    assert contents(result, "memory"), result  # the request itself worked


async def test_git_status_does_not_follow_a_gitdir_file_out(
    lsp: Session, workspace: Path, tmp_path: Path
) -> None:
    """A `.git` file (`gitdir: ...`, as worktrees and submodules have) naming an outside
    repository, even one shaped like a worktree's folder, is not followed."""
    repo = outside_folder(tmp_path, "outside-repo")
    git("init", "-q", "-b", f"{SECRET}-branch", repo)
    (repo / f"{SECRET}-tracked.txt").write_text("tracked\n")
    git("-C", repo, "add", ".")
    git("-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    git("-C", repo, "worktree", "add", "-q", tmp_path / "wt")
    worktree_dir = repo / ".git" / "worktrees" / "wt"
    assert worktree_dir.is_dir()
    for target in (repo / ".git", worktree_dir):
        (workspace / ".git").write_text(f"gitdir: {target}\n")
        result = await attachments(lsp, types=["git_status"])
        assert not leaked(result), result
        # Said in the attachment itself: the user is asked, no command named for the agent.
        [refusal] = contents(result, "git_status")
        assert "outside the workspace" in refusal
        assert "Ask the user about it" in refusal
        assert "`git status`" not in refusal


def _marker_hook(tmp_path: Path, marker: Path) -> Path:
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch '{marker}'\ncat\n")
    hook.chmod(0o755)
    return hook


async def test_git_status_does_not_run_a_workspace_fsmonitor(
    lsp: Session, workspace: Path, tmp_path: Path
) -> None:
    """A workspace's .git/config is the workspace's content: its core.fsmonitor is a
    command anyone who wrote the repository chose, and git status would run it."""
    marker = tmp_path / "fsmonitor-ran"
    git("init", "-q", workspace)
    git("-C", workspace, "config", "core.fsmonitor", _marker_hook(tmp_path, marker))
    (workspace / "a.txt").write_text("a\n")
    result = await attachments(lsp, types=["git_status"])
    assert not marker.exists(), f"git status ran the workspace's fsmonitor: {result}"


async def test_git_status_does_not_run_a_workspace_clean_filter(
    lsp: Session, workspace: Path, tmp_path: Path
) -> None:
    """Beyond the brief, the same hole by another config key: a clean filter named in
    .gitattributes, which git status runs to re-hash a tracked file whose stat changed."""
    marker = tmp_path / "filter-ran"
    git("init", "-q", workspace)
    (workspace / ".gitattributes").write_text("*.txt filter=evil\n")
    (workspace / "a.txt").write_text("a\n")
    git("-C", workspace, "add", ".")
    git("-C", workspace, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    git("-C", workspace, "config", "filter.evil.clean", _marker_hook(tmp_path, marker))
    st = (workspace / "a.txt").stat()  # same bytes, another mtime: git must re-hash it
    os.utime(workspace / "a.txt", ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    marker.unlink(missing_ok=True)
    result = await attachments(lsp, types=["git_status"])
    assert not marker.exists(), f"git status ran the workspace's clean filter: {result}"


# --- 4. symlinked parents and final components pointing out -------------------------------


@pytest.fixture
def linked(workspace: Path, outside: Path) -> Path:
    """ws/linked -> the outside folder; ws/link.md -> outside/secret.md."""
    (workspace / "linked").symlink_to(outside, target_is_directory=True)
    (workspace / "link.md").symlink_to(outside / "secret.md")
    return outside


async def test_a_read_through_a_parent_linking_out_is_outside(lsp: Session, linked: Path) -> None:
    for path in ("linked/secret.md", "link.md"):
        data = await refusal(lsp, "readkeeper/read", {"file_path": path})
        assert data["kind"] == "outside_workspace", (path, data)


@pytest.mark.parametrize("path", ["linked/secret.md", "link.md"])
async def test_an_edit_or_write_through_a_link_out_is_refused(
    lsp: Session, linked: Path, path: str
) -> None:
    before = (linked / "secret.md").read_bytes()
    edit = {"file_path": path, "old_string": "rules", "new_string": "changed"}
    write = {"file_path": path, "content": "overwritten\n"}
    for method, params in (("readkeeper/edit", edit), ("readkeeper/write", write)):
        data = await refusal(lsp, method, params)
        assert data["kind"] == "outside_workspace", (method, path, data)
    assert (linked / "secret.md").read_bytes() == before


@pytest.mark.parametrize("path", ["linked/new.txt", "linked/deeper/new.txt", "dangling.txt"])
async def test_a_create_through_a_link_out_is_refused(
    lsp: Session, workspace: Path, linked: Path, path: str
) -> None:
    (workspace / "dangling.txt").symlink_to(linked / "not-yet.txt")
    before = sorted(p.name for p in linked.rglob("*"))
    data = await refusal(lsp, "readkeeper/write", {"file_path": path, "content": "new\n"})
    assert data["kind"] == "outside_workspace", (path, data)
    assert sorted(p.name for p in linked.rglob("*")) == before


# --- 5. a sibling whose name starts with the root's ---------------------------------------


@pytest.fixture
def evil(workspace: Path) -> Path:
    """ws-evil/secret.txt beside the root ws: the same prefix, another folder."""
    folder = workspace.parent / f"{workspace.name}-evil"
    folder.mkdir()
    (folder / "secret.txt").write_text(f"{SECRET}\n")
    return folder


async def test_a_sibling_with_the_roots_name_as_prefix_is_outside(
    lsp: Session, workspace: Path, evil: Path
) -> None:
    relative = f"../{workspace.name}-evil/secret.txt"
    for path in (relative, str(evil / "secret.txt")):
        data = await refusal(lsp, "readkeeper/read", {"file_path": path})
        assert data["kind"] == "outside_workspace", (path, data)
        edit = {"file_path": path, "old_string": SECRET, "new_string": "changed"}
        data = await refusal(lsp, "readkeeper/edit", edit)
        assert data["kind"] == "outside_workspace", (path, data)
        data = await refusal(lsp, "readkeeper/write", {"file_path": path, "content": "w\n"})
        assert data["kind"] == "outside_workspace", (path, data)
    new = f"../{workspace.name}-evil/new.txt"
    data = await refusal(lsp, "readkeeper/write", {"file_path": new, "content": "w\n"})
    assert data["kind"] == "outside_workspace", data
    assert (evil / "secret.txt").read_text() == f"{SECRET}\n"
    assert sorted(p.name for p in evil.iterdir()) == ["secret.txt"]


# --- 7. set-id bits of a file owned by someone else ---------------------------------------

NOBODY = 65534


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
@pytest.mark.parametrize("mode", [0o4755, 0o2755], ids=["setuid", "setgid"])
async def test_a_write_never_silently_drops_set_id_bits(
    lsp: Session, workspace: Path, mode: int
) -> None:
    """PROVISIONAL: the lead decides the behaviour. Accepted either way: the write is
    refused with a clear kind and the file is untouched, or it is written and keeps its
    set-id bits and its owner (a root-owned set-id file would be worse than a dropped
    bit). Not accepted: new content with the bits silently gone."""
    path = workspace / "tool.sh"
    path.write_text("#!/bin/sh\necho old\n")
    os.chown(path, NOBODY, NOBODY)
    path.chmod(mode)  # after chown, which clears set-id bits
    assert stat.S_IMODE(path.stat().st_mode) == mode
    await lsp.read(path)
    error: JsonRpcException | None = None
    try:
        await lsp.client.request(
            "readkeeper/write", {"file_path": str(path), "content": "#!/bin/sh\necho new\n"}
        )
    except JsonRpcException as exc:
        error = exc
    st = path.stat()
    if error is not None:
        assert isinstance(error.data, dict), (error.code, error.message)
        assert error.data.get("kind") not in (None, "internal"), (error.code, error.message)
        assert path.read_text() == "#!/bin/sh\necho old\n"
        assert stat.S_IMODE(st.st_mode) == mode
    else:
        assert path.read_text() == "#!/bin/sh\necho new\n"
        assert (oct(stat.S_IMODE(st.st_mode)), st.st_uid, st.st_gid) == (oct(mode), NOBODY, NOBODY)
