"""git status of each workspace root: the branch and what is changed, with a timeout."""

from __future__ import annotations

import os
import signal
import subprocess


class NotARepository(Exception):
    pass


def status(root: str, timeout: float) -> str:
    """`git status` of `root`, compact. Raises NotARepository, or RuntimeError when git
    fails or takes longer than `timeout` seconds."""
    command = [
        "git",
        "-C",
        root,
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
