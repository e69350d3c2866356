"""No git status worker outlives the server. A repository whose HEAD commit object is a
FIFO holds libgit2 in open() for good; a client that quit mid-status left the worker and
the child it forked (reparented to init, holding the server's stderr) for 11 minutes
and more (attack round 28). Whatever ends the server (its client leaving, SIGTERM,
SIGKILL), both die with it (server/files/lifeline.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
from test_gitstatus_stalls import fifo_for_head_commit, repository

from helpers import wait_until
from mcp_helpers import READKEEPER, hello, mcp_env, message, private_runtime_dir
from readkeeper.attachments import gitstatus
from readkeeper.files import landlock

# Far beyond the test: only the server's end can end the status.
LONG = {"READKEEPER_GIT_TIMEOUT_MS": "600000", "READKEEPER_ATTACHMENTS_TIMEOUT_MS": "600000"}


def children() -> dict[int, list[int]]:
    """Each live process's children, by /proc (zombies left out: they hold nothing)."""
    found: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z":
            found.setdefault(int(fields[1]), []).append(int(entry))
    return found


def workers_of(server: int) -> list[int]:
    """The git status processes under `server`: its worker, and the worker's child."""
    tree = children()
    found: list[int] = []
    for pid in tree.get(server, []):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"gitstatus_worker" in command:
            found += [pid, *tree.get(pid, [])]
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="processes are looked at in /proc")
@pytest.mark.parametrize("end", ["client_leaves", "sigterm", "sigkill"])
def test_no_git_status_worker_outlives_the_server(workspace: Path, end: str) -> None:
    repository(workspace)
    fifo_for_head_commit(workspace)
    server = subprocess.Popen(
        [*READKEEPER, "mcp", "--standalone", "--root", str(workspace)],
        env=mcp_env(private_runtime_dir(), **LONG),
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    assert server.stdin is not None
    held: list[int] = []
    try:
        call = {"name": "attachments", "arguments": {"types": ["git_status"]}}
        server.stdin.write(hello() + message(1, "tools/call", call) + b"\n")
        server.stdin.flush()
        # The worker, and (with Landlock) the child it forked, blocked on the FIFO.
        pair = 2 if gitstatus.CONFINE and landlock.abi() > 0 else 1
        held += wait_until(
            lambda: (lambda found: found if len(found) == pair else None)(workers_of(server.pid)),
            "the git status worker to wait on the FIFO",
        )
        if end == "client_leaves":  # as the SDK's client leaves: stdin closed, then SIGTERM
            server.stdin.close()
            try:
                server.wait(timeout=2)
            except subprocess.TimeoutExpired:
                server.terminate()
        else:
            server.send_signal(signal.SIGTERM if end == "sigterm" else signal.SIGKILL)
        server.wait(timeout=60)
        wait_until(
            lambda: not any(alive(pid) for pid in held),
            f"the git status processes {json.dumps(held)} to end with the server",
        )
    finally:
        server.kill()
        server.wait()
        for pid in held:  # what a failure left behind (its pid still ours: not reaped)
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
