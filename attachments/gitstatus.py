"""git status of each workspace root: the branch and what is changed, with a timeout.

A repository is untrusted input. Its `.git` may be a symlink (or a `gitdir:` file) to
another repository outside the workspace, whose file names would then be attached; and
its config may name commands git runs on its own (`core.fsmonitor`). So `.git` is opened
beneath the root like any workspace path and handed to git as that open descriptor
(`/proc/self/fd/N`, so a rename after the check changes nothing), a `gitdir:` file is
followed only into the workspace or a worktree of a repository, and commands from the
config are switched off.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
from contextlib import ExitStack

from readkeeper.beneath import lstat_in, open_in
from readkeeper.paths import Workspace, is_within


class NotARepository(Exception):
    pass


# Config that makes `git status` run a program of the repository's choosing.
_NO_COMMANDS = ("-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false")
_GITFILE_MAX = 4096


def status(workspace: Workspace, root: str, timeout: float) -> str:
    """`git status` of `root`, compact. Raises NotARepository, or RuntimeError when git
    fails or takes longer than `timeout` seconds."""
    with ExitStack() as held:
        repository, fds = _repository(workspace, root, held)
        return _run(root, repository, fds, timeout)


def _repository(
    workspace: Workspace, root: str, held: ExitStack
) -> tuple[list[str], tuple[int, ...]]:
    """The arguments that tell git where the repository of `root` is, and the open
    descriptors they name: its own `.git`, checked and held open, or (no `.git` here)
    git's usual search upwards from the root."""
    where = workspace.locate(root, grants=False)
    if where is None:
        raise NotARepository(root)
    folder = where.anchor.open_folder("")
    held.callback(os.close, folder)
    entry = lstat_in(folder, ".git")
    if entry is None:
        return ["-C", root], ()
    if stat.S_ISLNK(entry.st_mode):
        raise RuntimeError(
            f"{root}/.git is a symbolic link; readkeeper does not run git status on a "
            "repository that may lie outside the workspace. Run `git status` yourself."
        )
    if stat.S_ISDIR(entry.st_mode) and os.path.isdir("/proc/self/fd"):
        git_dir = open_in(folder, ".git", getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY)
        held.callback(os.close, git_dir)
        # The child's /proc/self/fd/N is the very folder opened here (pass_fds keeps N).
        return [
            f"--git-dir=/proc/self/fd/{git_dir}",
            f"--work-tree=/proc/self/fd/{folder}",
        ], (git_dir, folder)
    if stat.S_ISREG(entry.st_mode):
        target = _gitfile_target(folder, root)
        if not (
            any(is_within(target, r) for r in workspace.roots)
            or os.path.basename(os.path.dirname(target)) == "worktrees"
        ):
            raise RuntimeError(
                f"{root}/.git points to a repository outside the workspace ({target}); "
                "readkeeper does not run git status there. Run `git status` yourself."
            )
    return ["-C", root], ()


def _gitfile_target(folder: int, root: str) -> str:
    fd = open_in(folder, ".git", os.O_RDONLY | os.O_NONBLOCK)
    try:
        text = os.read(fd, _GITFILE_MAX).decode("utf-8", "replace")
    finally:
        os.close(fd)
    line = text.strip().splitlines()[0] if text.strip() else ""
    if not line.startswith("gitdir:"):
        raise NotARepository(root)
    return os.path.realpath(os.path.join(root, line[len("gitdir:") :].strip()))


def _run(root: str, repository: list[str], fds: tuple[int, ...], timeout: float) -> str:
    command = [
        "git",
        *_NO_COMMANDS,
        *repository,
        "status",
        "--porcelain=v1",
        "--branch",
        "--untracked-files=normal",
    ]
    env = {"GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "PATH": os.environ.get("PATH", "/usr/bin")}
    try:
        # Its own process group, so a timeout also ends what git started (hooks such as
        # an fsmonitor that hangs), not just git itself.
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,
            pass_fds=fds,
            cwd=f"/proc/self/fd/{fds[-1]}" if fds else None,
        )
    except FileNotFoundError:
        raise RuntimeError("git is not installed") from None
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise RuntimeError(f"git status took longer than {timeout:g} s") from None
    if process.returncode != 0:
        if "not a git repository" in err:
            raise NotARepository(root)
        raise RuntimeError(f"git status failed: {err.strip() or process.returncode}")
    lines = out.splitlines()
    has_branch = bool(lines) and lines[0].startswith("## ")
    branch = lines[0][3:] if has_branch else "(unknown branch)"
    changes = lines[1:] if has_branch else lines
    summary = f"{len(changes)} changed files" if changes else "clean"
    return "\n".join([f"git status of {root}: branch {branch}, {summary}", *changes])
