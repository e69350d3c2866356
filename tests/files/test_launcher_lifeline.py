"""ripgrep's per-call launcher (server/files/landlock.py run as a program, when no warm
launcher can start a search) ties what it becomes to the server's life, as every helper
of readkeeper is (files/lifeline.py): killed with the server, however the server ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from readkeeper.files import landlock

pytestmark = pytest.mark.skipif(
    landlock.abi() < 1 or not sys.platform.startswith("linux"), reason="no Landlock here"
)

# A stand-in for the server: starts the per-call launcher as rg.py does, says the pid of
# what the launcher became, then waits to be killed.
SERVER = """
import time
from readkeeper.search import rg
proc = rg._launch(["/bin/sleep", "600"], {root!r}, {root!r}, {{}})
print(proc.pid, flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


def test_what_the_launcher_runs_dies_with_the_server(tmp_path: Path) -> None:
    script = SERVER.format(root=str(tmp_path))
    server = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    program = int(server.stdout.readline())
    try:
        assert _alive(program)
        server.send_signal(signal.SIGKILL)
        server.wait()
        for _ in range(200):  # the kernel's signal comes at once; polled, not timed
            if not _alive(program):
                break
            time.sleep(0.05)
        assert not _alive(program), "the launched program outlived the server"
    finally:
        if _alive(program):
            os.kill(program, signal.SIGKILL)
