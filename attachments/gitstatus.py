"""git status of each workspace root: the branch and what is changed, with a timeout.

A repository is untrusted input. Its `.git` may be a symlink (or a `gitdir:` file) to
another repository outside the workspace, whose file names would then be attached; and
its config may name commands that `git status` runs on its own (`core.fsmonitor`, the
clean filters that `.gitattributes` assigns). So `.git` is opened beneath the root like
any workspace path and handed to git as that open descriptor (`/proc/self/fd/N`, so a
rename after the check changes nothing), a `gitdir:` file is followed only into the
workspace, and every command git could take from the config is switched off for the
run (submodules, with configs of their own, are not entered).
"""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import time
from contextlib import ExitStack

from readkeeper import quoting
from readkeeper.files.beneath import lstat_in, open_in
from readkeeper.files.paths import Workspace


class NotARepository(Exception):
    """The root is not in a git repository: there is no git status to attach."""

    pass


# Config that makes `git status` run a program of the repository's choosing; the clean
# filters' names come from the config itself (`_filters`).
_NO_COMMANDS = ("-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false")
_FILTER_COMMAND = re.compile(r"filter\.(.+)\.(?:clean|process)")
_GITFILE_MAX = 4096


def status(workspace: Workspace, root: str, timeout: float) -> str:
    """`git status` of `root`, compact. Raises NotARepository, or RuntimeError when git
    fails or takes longer than `timeout` seconds."""
    deadline = time.monotonic() + timeout
    with ExitStack() as held:
        repository, fds = _repository(workspace, root, held)
        look_up = ["config", "--null", "--name-only", "--get-regexp", r"^filter\."]
        config = _run(root, [*repository, *look_up], fds, timeout, deadline, missing_is_ok=True)
        out = _run(
            root,
            [
                *_filters(config),
                # Names with odd bytes C-quoted whatever the repository's config says:
                # git then quotes every control and non-ASCII byte in them.
                "-c",
                "core.quotePath=true",
                *repository,
                "status",
                "--porcelain=v1",
                "--branch",
                "--untracked-files=normal",
                "--ignore-submodules=all",
            ],
            fds,
            timeout,
            deadline,
        )
    # Lines end at LF only; whatever else breaks a line shown escaped (quoting.py).
    lines = [quoting.line(line) for line in out.split("\n") if line]
    has_branch = bool(lines) and lines[0].startswith("## ")
    branch = lines[0][3:] if has_branch else "(unknown branch)"
    changes = lines[1:] if has_branch else lines
    summary = f"{len(changes)} changed files" if changes else "clean"
    head = f"git status of {quoting.name(root)}: branch {branch}, {summary}"
    return "\n".join([head, *changes])


def _filters(config: str) -> list[str]:
    """`-c` options that empty every filter command the config names (git runs no
    filter whose command is empty)."""
    names = {m.group(1) for key in config.split("\0") if (m := _FILTER_COMMAND.fullmatch(key))}
    options: list[str] = []
    for name in sorted(names):
        options += ["-c", f"filter.{name}.clean=", "-c", f"filter.{name}.process="]
    return options


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
        if workspace.locate(target, grants=False) is None:
            raise RuntimeError(
                f"{root}/.git points to a repository outside the workspace ({target}); "
                "readkeeper does not run git status there (add that repository to "
                "readkeeper.allowed_paths to allow it). Run `git status` yourself."
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


def _run(
    root: str,
    arguments: list[str],
    fds: tuple[int, ...],
    timeout: float,
    deadline: float,
    *,
    missing_is_ok: bool = False,
) -> str:
    """git's output, run on `root`'s repository; `missing_is_ok`: exit code 1 (a
    `git config` look-up that found nothing) is an empty answer."""
    env = {"GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "PATH": os.environ.get("PATH", "/usr/bin")}
    try:
        # Its own process group, so a timeout also ends what git started, not just git.
        process = subprocess.Popen(
            ["git", *_NO_COMMANDS, *arguments],
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
        out, err = process.communicate(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise RuntimeError(f"git status took longer than {timeout:g} s") from None
    if process.returncode == 1 and missing_is_ok:
        return ""
    if process.returncode != 0:
        if "not a git repository" in err:
            raise NotARepository(root)
        raise RuntimeError(f"git status failed: {err.strip() or process.returncode}")
    return out
