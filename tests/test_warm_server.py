"""The tests' warm servers (tests/warm_server.py) are the server `python -m readkeeper`
starts: the same output, exit status, working folder and environment, signals
passed on, and a launcher killed outright leaves no server behind. Most LSP and MCP
tests start their server this way, so a difference here would hide in all of them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import warm_server


def both(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> list[subprocess.CompletedProcess[str]]:
    """`readkeeper ARGS` started warm and for real."""
    return [
        subprocess.run(start(*args), cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
        for start in (warm_server.command, warm_server.real_command)
    ]


def _answered_initialize(server: subprocess.Popen[bytes], workspace: Path) -> None:
    assert server.stdin is not None
    assert server.stdout is not None
    init = {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}}
    body = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
    server.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body.encode()))
    server.stdin.flush()
    assert server.stdout.readline().startswith(b"Content-Length:")


def test_a_command_s_output_and_status_are_the_real_ones(workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\ntwo\n")
    env = {**os.environ, "READKEEPER_MAX_TOKENS": "7"}  # too few for the file: refused
    warm, real = both("read", "a.txt", cwd=workspace, env=env)
    assert warm.returncode == real.returncode != 0
    assert warm.stdout == real.stdout
    assert warm.stderr == real.stderr
    warm, real = both("read", "a.txt", cwd=workspace)
    assert (warm.returncode, warm.stdout) == (real.returncode, real.stdout)
    assert "two" in warm.stdout


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_the_launcher_ends_the_server_as_it_ends_a_real_one(
    workspace: Path, signum: int
) -> None:
    codes = []
    for start in (warm_server.command, warm_server.real_command):
        server = subprocess.Popen(
            start("serve"),
            cwd=workspace,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        _answered_initialize(server, workspace)  # past its start: its handlers are set
        server.send_signal(signum)
        codes.append(server.wait(30))
        assert server.stdin is not None
        server.stdin.close()
    assert codes[0] == codes[1]


def test_a_launcher_killed_outright_takes_its_server_with_it(workspace: Path) -> None:
    server = subprocess.Popen(
        warm_server.command("serve"),
        cwd=workspace,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while (child := warm_server.real_pid(server.pid)) == server.pid:
        assert time.monotonic() < deadline, "the launcher never named its server"
        time.sleep(0.05)
    server.kill()
    server.wait(30)
    while (
        Path(f"/proc/{child}").exists()
        and Path(f"/proc/{child}/stat").read_text().split(") ")[1][0] != "Z"
    ):
        assert time.monotonic() < deadline, "the server outlived its launcher"
        time.sleep(0.05)
