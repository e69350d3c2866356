"""kill -9 of the server in the middle of a large write: the file is the old content or the
new, never truncated, mixed or missing.

Starting a server costs about a second of imports, and this runs 50+ times; so a helper
process imports readkeeper once and forks a fresh server per round (the real
`readkeeper.lsp.serve()`, speaking LSP over a pair of FIFOs). Each round: initialize,
read the file, send a write of new content, SIGKILL the server at a random moment
(uniform over about the time a write takes), then look at the file.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import IO, Any

import pytest

pytestmark = pytest.mark.skipif(
    not hasattr(os, "fork") or not hasattr(os, "mkfifo"), reason="needs fork and FIFOs"
)

ROUNDS = 50
SIZE = 2 * 1024 * 1024

FORKING_HELPER = r"""
import os, signal, sys
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps killed servers
import readkeeper.lsp  # the slow imports, once, before any fork
readkeeper.lsp.server.core.tokens.warm_up()  # and the token table the server loads
for line in sys.stdin:
    to_server, from_server = line.split()
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.dup2(os.open(to_server, os.O_RDONLY), 0)
        os.dup2(os.open(from_server, os.O_WRONLY), 1)
        sys.stdin = open(0, closefd=False)
        sys.stdout = open(1, "w", closefd=False)
        readkeeper.lsp.serve()
        os._exit(0)
    print(pid, flush=True)
"""


class Wire:
    """Just enough JSON-RPC over a pair of pipes to drive a server from a test."""

    def __init__(self, to_server: IO[bytes], from_server: IO[bytes]) -> None:
        self.out = to_server
        self.inp = from_server
        self.last_id = 0

    def send(self, method: str, params: Any, notification: bool = False) -> int:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notification:
            self.last_id += 1
            message["id"] = self.last_id
        body = json.dumps(message).encode()
        self.out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.out.flush()
        return self.last_id

    def receive(self) -> dict[str, Any] | None:
        length = None
        while True:
            header = self.inp.readline()
            if not header:
                return None  # the server is gone
            if header in (b"\r\n", b"\n"):
                break
            name, _, value = header.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        assert length is not None
        message: dict[str, Any] = json.loads(self.inp.read(length))
        return message

    def call(self, method: str, params: Any) -> Any:
        wanted = self.send(method, params)
        while True:
            message = self.receive()
            assert message is not None, f"the server died during {method}"
            if message.get("id") == wanted and "method" not in message:
                assert "error" not in message, message["error"]
                return message["result"]


class Servers:
    def __init__(self, workdir: Path) -> None:
        env = {**os.environ, "READKEEPER_MAX_SIZE_BYTES": str(4 * SIZE)}
        self.helper = subprocess.Popen(
            [sys.executable, "-c", FORKING_HELPER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        self.workdir = workdir
        self.count = 0

    def start(self) -> tuple[int, Wire]:
        self.count += 1
        to_server = self.workdir / f"in{self.count}"
        from_server = self.workdir / f"out{self.count}"
        os.mkfifo(to_server)
        os.mkfifo(from_server)
        assert self.helper.stdin is not None
        assert self.helper.stdout is not None
        self.helper.stdin.write(f"{to_server} {from_server}\n")
        self.helper.stdin.flush()
        pid = int(self.helper.stdout.readline())
        # Closed by kill_and_wait once the server is gone.
        wire = Wire(open(to_server, "wb"), open(from_server, "rb"))  # noqa: SIM115
        return pid, wire

    def close(self) -> None:
        assert self.helper.stdin is not None
        self.helper.stdin.close()
        self.helper.wait(timeout=30)


def open_workspace(wire: Wire, root: Path) -> None:
    uri = root.as_uri()
    wire.call(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": uri,
            "workspaceFolders": [{"uri": uri, "name": root.name}],
            "capabilities": {},
        },
    )
    wire.send("initialized", {}, notification=True)


def content(tag: str) -> bytes:
    line = f"{tag} " + "0123456789abcdef" * 4 + "\n"
    return (line * (SIZE // len(line) + 1)).encode()


def kill_and_wait(pid: int, wire: Wire) -> None:
    os.kill(pid, signal.SIGKILL)
    while wire.receive() is not None:  # the pipe closes when the process is gone
        pass
    with contextlib.suppress(BrokenPipeError):  # unsent bytes of a request cut short
        wire.out.close()
    wire.inp.close()


def test_kill_9_during_a_large_write_leaves_old_or_new(tmp_path: Path) -> None:
    old, new = content("old"), content("new")
    servers = Servers(tmp_path)
    rng = random.Random(9)
    outcomes: Counter[str] = Counter()
    write_time = 0.0
    try:
        for round_ in range(ROUNDS + 1):
            root = tmp_path / f"ws{round_}"
            root.mkdir()
            path = root / "big.txt"
            path.write_bytes(old)
            pid, wire = servers.start()
            open_workspace(wire, root)
            # A few lines are enough to be allowed to replace it (and cheap to show).
            seen = wire.call("readkeeper/read", {"file_path": str(path), "limit": 5})
            assert seen["type"] == "text"
            started = time.perf_counter()
            if round_ == 0:
                # Calibrate: how long one write takes here, start to answer.
                wire.call("readkeeper/write", {"file_path": str(path), "content": new.decode()})
                write_time = time.perf_counter() - started
                kill_and_wait(pid, wire)
                assert path.read_bytes() == new
                continue
            wire.send("readkeeper/write", {"file_path": str(path), "content": new.decode()})
            time.sleep(rng.uniform(0, 1.3 * write_time))
            kill_and_wait(pid, wire)
            after = path.read_bytes()
            assert after in (old, new), f"round {round_}: {len(after)} bytes, neither old nor new"
            outcomes["new" if after == new else "old"] += 1
            visible = [p.name for p in root.iterdir() if not p.name.startswith(".")]
            assert visible == ["big.txt"]
            outcomes["temp files left"] += sum(
                1 for p in root.iterdir() if p.name.endswith(".rk-tmp")
            )
    finally:
        servers.close()
    print(f"\nwrite takes {write_time * 1000:.0f} ms; {ROUNDS} kills: {dict(outcomes)}")
    assert outcomes["new"] + outcomes["old"] == ROUNDS
