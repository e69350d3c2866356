"""A hostile repository through the real server: `readkeeper/attachments` with
`types: ["git_status"]` runs no program the repository names and shows no name from
outside the workspace.

Each case builds a repository in the workspace that, on a git that trusts its config,
runs `touch MARKER` (MARKER lies outside the workspace) or lists the files of a
repository outside the workspace (one file there is named OUTSIDE_NAME).
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from conftest import start_session

OUTSIDE_NAME = "outside-secret-name.txt"


def git(root: Path, *args: str) -> str:
    env = {"LC_ALL": "C", "PATH": os.environ["PATH"], "HOME": str(root.parent)}
    identity = ("-c", "user.name=t", "-c", "user.email=t@example.invalid")
    done = subprocess.run(
        ["git", *identity, "-C", str(root), *args],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    return done.stdout.strip()


def committed(root: Path, name: str = "kept.txt") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q")
    (root / name).write_text("k\n")
    git(root, "add", name)
    git(root, "commit", "-q", "-m", "first")
    return root


def command(marker: Path) -> str:
    """A shell command that leaves `marker` behind and then fails (as an attacker's
    would, to look like a network error)."""
    return f"sh -c 'touch {marker}'; false"


def promisor(ws: Path, url: str) -> None:
    """Make `ws` a partial clone whose HEAD tree is missing: any git that reads it
    fetches from `url` first."""
    tree = git(ws, "rev-parse", "HEAD^{tree}")
    (ws / ".git" / "objects" / tree[:2] / tree[2:]).unlink()
    git(ws, "config", "core.repositoryformatversion", "1")
    git(ws, "config", "extensions.partialClone", "origin")
    git(ws, "config", "remote.origin.promisor", "true")
    git(ws, "config", "remote.origin.url", url)


@contextmanager
def asks_for_a_password() -> Iterator[str]:
    """A local HTTP server that answers every request with 401, so git asks its
    credential helper and then its askpass program."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="x"')
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/x.git"
    finally:
        server.shutdown()
        server.server_close()


def ssh_command(ws: Path, marker: Path, outside: Path) -> None:
    promisor(ws, "ssh://localhost/x")
    git(ws, "config", "core.sshCommand", command(marker))


def upload_pack(ws: Path, marker: Path, outside: Path) -> None:
    promisor(ws, str(outside))
    git(ws, "config", "remote.origin.uploadpack", command(marker))


def ext_protocol(ws: Path, marker: Path, outside: Path) -> None:
    promisor(ws, f"ext::sh -c touch% {marker}")
    git(ws, "config", "protocol.ext.allow", "always")


def hooks(ws: Path, marker: Path, outside: Path) -> None:
    for name in ("post-index-change", "pre-commit", "post-checkout", "reference-transaction"):
        hook = ws / ".git" / "hooks" / name
        hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
        hook.chmod(0o755)
    (ws / "kept.txt").write_text("changed\n")


def fsmonitor(ws: Path, marker: Path, outside: Path) -> None:
    script = outside / "fsmonitor"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(0o755)
    git(ws, "config", "core.fsmonitor", str(script))
    git(ws, "config", "core.untrackedCache", "true")


def pager_and_editor(ws: Path, marker: Path, outside: Path) -> None:
    for key in ("core.pager", "pager.status", "core.editor", "sequence.editor"):
        git(ws, "config", key, command(marker))
    (ws / "kept.txt").write_text("changed\n")


def filters(ws: Path, marker: Path, outside: Path) -> None:
    (ws / ".gitattributes").write_text("* filter=evil diff=evil\n")
    for key in ("filter.evil.clean", "filter.evil.smudge", "filter.evil.process"):
        git(ws, "config", key, command(marker))
    git(ws, "config", "diff.evil.textconv", command(marker))
    git(ws, "config", "diff.external", command(marker))
    (ws / "kept.txt").write_text("changed\n")
    # A file newer than the index's timestamp makes git hash it (through the filter).
    os.utime(ws / "kept.txt", (2_000_000_000, 2_000_000_000))


def include_outside(ws: Path, marker: Path, outside: Path) -> None:
    fsmonitor(outside, marker, outside)  # the command sits in the included file
    (outside / "evil.config").write_text(
        f"[core]\n\tfsmonitor = {outside / 'fsmonitor'}\n\tworktree = {outside}\n"
    )
    git(ws, "config", "include.path", str(outside / "evil.config"))
    git(ws, "config", f"includeIf.gitdir:{ws}/.path", str(outside / "evil.config"))


def gitfile_into_a_worktree_outside(ws: Path, marker: Path, outside: Path) -> None:
    subprocess.run(["rm", "-rf", str(ws / ".git")], check=True)
    inner = committed(ws / "inner")
    git(inner, "config", "core.worktree", str(outside))
    (ws / ".git").write_text("gitdir: inner/.git\n")


def worktree_outside(ws: Path, marker: Path, outside: Path) -> None:
    git(ws, "config", "core.worktree", str(outside))


def commondir_outside(ws: Path, marker: Path, outside: Path) -> None:
    (ws / ".git" / "commondir").write_text(f"{outside / '.git'}\n")


def alternates_outside(ws: Path, marker: Path, outside: Path) -> None:
    (ws / ".git" / "objects" / "info" / "alternates").write_text(f"{outside}/.git/objects\n")
    # HEAD names the outside commit, whose objects only the alternate holds.
    git(ws, "update-ref", "refs/heads/outside", git(outside, "rev-parse", "HEAD"))
    (ws / ".git" / "HEAD").write_text("ref: refs/heads/outside\n")


def gitdir_outside(ws: Path, marker: Path, outside: Path) -> None:
    subprocess.run(["rm", "-rf", str(ws / ".git")], check=True)
    (ws / ".git").write_text(f"gitdir: {outside / '.git'}\n")


def dot_git_symlink(ws: Path, marker: Path, outside: Path) -> None:
    subprocess.run(["rm", "-rf", str(ws / ".git")], check=True)
    (ws / ".git").symlink_to(outside / ".git")


def exclude_symlink(ws: Path, marker: Path, outside: Path) -> None:
    os.mkfifo(outside / "exclude")
    (ws / ".git" / "info" / "exclude").unlink()
    (ws / ".git" / "info" / "exclude").symlink_to(outside / "exclude")


def ignore_file_outside(ws: Path, marker: Path, outside: Path) -> None:
    os.mkfifo(outside / "ignore")  # git would wait on it for ever
    git(ws, "config", "core.excludesFile", str(outside / "ignore"))


def submodule_outside(ws: Path, marker: Path, outside: Path) -> None:
    head = git(outside, "rev-parse", "HEAD")
    git(ws, "update-index", "--add", "--cacheinfo", f"160000,{head},sub")
    (ws / "sub").mkdir()
    (ws / "sub" / ".git").write_text(f"gitdir: {outside / '.git'}\n")
    (outside / OUTSIDE_NAME).unlink()  # a change git would report inside the submodule
    fsmonitor(ws / "sub", marker, outside)


def index_symlink(ws: Path, marker: Path, outside: Path) -> None:
    (ws / ".git" / "index").unlink()
    (ws / ".git" / "index").symlink_to(outside / ".git" / "index")


Attack = Callable[[Path, Path, Path], None]
ATTACKS: dict[str, Attack] = {
    "ssh_command": ssh_command,
    "upload_pack": upload_pack,
    "ext_protocol": ext_protocol,
    "hooks": hooks,
    "fsmonitor": fsmonitor,
    "pager_and_editor": pager_and_editor,
    "filters": filters,
    "include_outside": include_outside,
    "gitfile_into_a_worktree_outside": gitfile_into_a_worktree_outside,
    "worktree_outside": worktree_outside,
    "commondir_outside": commondir_outside,
    "alternates_outside": alternates_outside,
    "gitdir_outside": gitdir_outside,
    "dot_git_symlink": dot_git_symlink,
    "index_symlink": index_symlink,
    "exclude_symlink": exclude_symlink,
    "ignore_file_outside": ignore_file_outside,
    "submodule_outside": submodule_outside,
}


async def git_status_of(ws: Path) -> dict[str, Any]:
    session = await start_session(ws)
    try:
        result: dict[str, Any] = await session.client.request(
            "readkeeper/attachments", {"types": ["git_status"]}
        )
        return result
    finally:
        await session.client.close()


def assert_harmless(result: dict[str, Any], marker: Path) -> str:
    """No program ran, no outside name shown, and an answer about git status came: the
    status, or an attachment saying why not and what to run instead."""
    assert not marker.exists(), "the repository's command ran"
    assert OUTSIDE_NAME not in json.dumps(result)
    [item] = [a for a in result["attachments"] if a["type"] == "git_status"]
    content: str = item["content"]
    assert content.startswith("git status of ")
    return content


@pytest.mark.parametrize("attack", list(ATTACKS))
async def test_a_hostile_repository_runs_nothing_and_shows_nothing_outside(
    attack: str, workspace: Path, tmp_path: Path
) -> None:
    outside = committed(tmp_path / "outside", OUTSIDE_NAME)
    marker = tmp_path / "marker"
    committed(workspace)
    ATTACKS[attack](workspace, marker, outside)
    assert_harmless(await git_status_of(workspace), marker)


@pytest.mark.parametrize("key", ["credential.helper", "core.askPass"])
async def test_a_password_prompt_runs_no_program_of_the_repository(
    key: str, workspace: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    committed(workspace)
    with asks_for_a_password() as url:
        promisor(workspace, url)
        script = tmp_path / "prompt"
        script.write_text(f"#!/bin/sh\ntouch {marker}\n")
        script.chmod(0o755)
        # A helper that starts with `!` is a shell command; askpass is a program.
        git(workspace, "config", key, f"!{script}" if key == "credential.helper" else str(script))
        result = await git_status_of(workspace)
    assert_harmless(result, marker)


async def test_a_root_inside_a_repository_outside_shows_nothing_of_it(
    workspace: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    outside = committed(tmp_path, OUTSIDE_NAME)  # the workspace is a folder of it
    fsmonitor(outside, marker, outside)
    (outside / OUTSIDE_NAME).unlink()
    content = assert_harmless(await git_status_of(workspace), marker)
    assert f"lies inside the repository at {tmp_path}, outside the workspace" in content


async def test_a_git_file_leading_out_is_named_by_its_text_never_where_it_leads(
    workspace: Path, tmp_path: Path
) -> None:
    # Nothing outside is looked up to refuse it: the answer names the path the .git file
    # holds (repository content), never where a link there leads (files/reach.py).
    marker = tmp_path / "marker"
    outside = committed(tmp_path / "outside", OUTSIDE_NAME)
    (tmp_path / "via").symlink_to(outside / ".git")
    committed(workspace)
    subprocess.run(["rm", "-rf", str(workspace / ".git")], check=True)
    (workspace / ".git").write_text(f"gitdir: {tmp_path / 'via'}\n")
    content = assert_harmless(await git_status_of(workspace), marker)
    assert f'its .git file points to "{tmp_path / "via"}", outside the workspace' in content
    assert str(outside) not in content


async def test_a_partial_clone_missing_objects_says_what_to_run(
    workspace: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    committed(workspace)
    ssh_command(workspace, marker, tmp_path)
    content = assert_harmless(await git_status_of(workspace), marker)
    assert "partial clone" in content
    assert "git status" in content.split("\n", 1)[1]


async def test_a_normal_repository_shows_its_status(workspace: Path) -> None:
    committed(workspace)
    git(workspace, "symbolic-ref", "HEAD", "refs/heads/trunk")
    (workspace / "gone.txt").write_text("g\n")
    (workspace / "staged.txt").write_text("s\n")
    git(workspace, "add", "gone.txt")
    git(workspace, "commit", "-q", "-m", "second")
    git(workspace, "add", "staged.txt")
    (workspace / "gone.txt").unlink()
    (workspace / "kept.txt").write_text("changed\n")
    (workspace / "new dir").mkdir()
    (workspace / "new dir" / "a.txt").write_text("a\n")
    (workspace / 'tab\tand"quote.txt').write_text("q\n")
    (workspace / "ignored.log").write_text("i\n")
    (workspace / ".gitignore").write_text("*.log\n")
    result = await git_status_of(workspace)
    [item] = [a for a in result["attachments"] if a["type"] == "git_status"]
    assert item["content"] == "\n".join(
        [
            f"git status of {workspace}: branch trunk, 6 changed files",
            " D gone.txt",
            " M kept.txt",
            "A  staged.txt",
            "?? .gitignore",
            '?? "new dir/"',  # git quotes a name with a space
            '?? "tab\\tand\\"quote.txt"',
        ]
    )


# --- ignore and attributes files of the work tree -----------------------------------------
# git never follows a symlinked .gitignore or .gitattributes in the work tree; libgit2
# does, so a repository could hand it a file anywhere: a FIFO outside stalls the status
# until its timeout, and outside patterns can hide what changed.


def rule_file_symlink(ws: Path, rel: str, target: Path) -> None:
    (ws / rel).parent.mkdir(parents=True, exist_ok=True)
    (ws / rel).symlink_to(target)
    git(ws, "add", rel)
    git(ws, "commit", "-q", "-m", "rules")


@pytest.mark.parametrize(
    "rel", [".gitignore", ".gitattributes", "deep/down/in/the/tree/.gitattributes"]
)
async def test_a_rule_file_linked_to_a_fifo_outside_is_not_followed(
    rel: str, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.mkfifo(outside / "rules")  # libgit2 would wait on it until the timeout
    committed(workspace)
    rule_file_symlink(workspace, rel, outside / "rules")
    content = assert_harmless(await git_status_of(workspace), tmp_path / "marker")
    assert "not shown" in content, content
    assert rel in content, content


async def test_patterns_outside_cannot_hide_a_change(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "rules").write_text("*\n")
    committed(workspace)
    rule_file_symlink(workspace, ".gitignore", outside / "rules")
    (workspace / "new.txt").write_text("new\n")
    content = assert_harmless(await git_status_of(workspace), tmp_path / "marker")
    assert "?? new.txt" in content or "not shown" in content, content


async def test_a_rule_file_linked_within_the_tree_is_read(workspace: Path) -> None:
    committed(workspace)
    (workspace / "rules.txt").write_text("*.log\n")
    rule_file_symlink(workspace, ".gitignore", Path("rules.txt"))
    (workspace / "noise.log").write_text("x\n")
    (workspace / "new.txt").write_text("new\n")
    content = assert_harmless(await git_status_of(workspace), workspace.parent / "marker")
    assert "?? new.txt" in content, content
    assert "noise.log" not in content, content


@pytest.mark.parametrize("unborn", [False, True])
async def test_a_branch_name_hides_nothing_and_reorders_nothing(
    workspace: Path, unborn: bool
) -> None:
    """git takes a branch named with a right-to-left override and a zero-width space
    (attack round 13: `main` + U+202E + U+200B + `gnp.exe`, shown raw, read `...exe.png`):
    they are escaped like every name's."""
    branch = "main\u202e\u200bgnp.exe"
    if unborn:
        workspace.mkdir(parents=True, exist_ok=True)
        git(workspace, "init", "-q")
        git(workspace, "symbolic-ref", "HEAD", f"refs/heads/{branch}")
    else:
        committed(workspace)
        git(workspace, "checkout", "-q", "-b", branch)
    (workspace / "kept.txt").write_text("changed\n")
    result = await git_status_of(workspace)
    [item] = [a for a in result["attachments"] if a["type"] == "git_status"]
    header = item["content"].split("\n", 1)[0]
    assert "\u202e" not in header, header
    assert "\u200b" not in header, header
    assert "main\\u202e\\u200bgnp.exe" in header, header
