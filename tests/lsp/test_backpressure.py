"""A client that writes requests and stops reading the replies, over stdio and TCP: the
server stops reading once a bounded amount of output waits, so its memory stays
bounded, and it answers every request once the client reads again.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import subprocess
import sys
import termios
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from helpers import wait_until

SERVE = [sys.executable, "-m", "readkeeper", "serve"]
REQUESTS = 6000  # about 95 KB each: 570 MB of replies
# The interpreter and the core, 64 MB of replies waiting, what is in flight, and slack
# (measured: 95 MB on stdio, 212 MB on TCP; unbounded, TCP took 895 MB and grew with more).
PEAK_RSS_CAP_KB = 400_000


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class Reader:
    """LSP frames from a byte source."""

    def __init__(self, read: Callable[[int], bytes]) -> None:
        self.read = read
        self.buffer = b""

    def _fill(self) -> None:
        chunk = self.read(1 << 20)
        if not chunk:
            raise AssertionError("the server closed its output")
        self.buffer += chunk

    def message(self) -> dict[str, Any]:
        while b"\r\n\r\n" not in self.buffer:
            self._fill()
        head, _, rest = self.buffer.partition(b"\r\n\r\n")
        length = int(head.split(b"Content-Length:")[1].split(b"\r\n")[0])
        self.buffer = rest
        while len(self.buffer) < length:
            self._fill()
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return dict(json.loads(body))

    def reply(self, msg_id: int) -> dict[str, Any]:
        while True:
            message = self.message()
            if message.get("id") == msg_id and "method" not in message:
                return message


def peak_rss_kb(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(row.split()[1] for row in status.splitlines() if row.startswith("VmHWM:")))


def queued(fd: int, request: int) -> int:
    buf = bytearray(4)
    fcntl.ioctl(fd, request, buf)
    return int.from_bytes(buf, "little")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("over", ["stdio", "tcp"])
def test_a_client_that_stops_reading_leaves_the_server_bounded(workspace: Path, over: str) -> None:
    rows = "".join(f"line {i:06d} {'x' * 40}\n" for i in range(1500))
    (workspace / "big.txt").write_text(rows)
    port = free_port()
    command = [*SERVE, "--tcp", f"127.0.0.1:{port}"] if over == "tcp" else SERVE
    env = {k: v for k, v in os.environ.items() if not k.startswith("READKEEPER_")}
    env["XDG_RUNTIME_DIR"] = str(workspace.parent)
    server = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE if over == "stdio" else subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    conn: socket.socket | None = None
    try:
        if over == "tcp":

            def connected() -> socket.socket | None:
                try:
                    return socket.create_connection(("127.0.0.1", port))
                except OSError:
                    return None

            conn = wait_until(connected, "the server to listen", timeout=60)
            write: Callable[[bytes], Any] = conn.sendall
            reader = Reader(conn.recv)
            fd, outq = conn.fileno(), termios.TIOCOUTQ
        else:
            assert server.stdin is not None
            assert server.stdout is not None
            stdin, stdout = server.stdin, server.stdout

            def write(data: bytes) -> None:
                stdin.write(data)
                stdin.flush()

            reader = Reader(stdout.read1)
            fd, outq = stdin.fileno(), termios.FIONREAD
        init = {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}}
        write(frame({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}))
        assert "result" in reader.reply(0)
        write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        params = {"file_path": "big.txt", "force": True}
        requests = b"".join(
            frame({"jsonrpc": "2.0", "id": i, "method": "readkeeper/read", "params": params})
            for i in range(1, REQUESTS + 1)
        )
        written = threading.Event()

        def write_all() -> None:
            write(requests)
            written.set()

        writer = threading.Thread(target=write_all, daemon=True)
        writer.start()
        # Either the server stopped reading (our bytes queue up unread) or it took all.
        wait_until(
            lambda: written.is_set() or queued(fd, outq) >= 60_000,
            "the server to stop reading, or to take every request",
            timeout=300,
        )
        replies: dict[int, dict[str, Any]] = {}
        while len(replies) < REQUESTS:
            message = reader.message()
            if "method" not in message and isinstance(message.get("id"), int):
                replies[message["id"]] = message
        assert sorted(replies) == list(range(1, REQUESTS + 1))
        for reply in replies.values():
            assert "result" in reply, str(reply)[:600]
            assert reply["result"]["type"] == "text", str(reply)[:300]
        writer.join()
        peak = peak_rss_kb(server.pid)
        assert peak < PEAK_RSS_CAP_KB, f"peak RSS {peak} kB"
    finally:
        if conn is not None:
            conn.close()
        server.kill()
        server.wait()


def test_messages_the_server_never_answers_hold_no_place(workspace: Path) -> None:
    # Notifications sent with an id, unknown methods, odd ids: more of each than the
    # requests let in flight, and a read after them is still answered.
    from raw_lsp import RawServer

    (workspace / "a.txt").write_text("a\n")
    server = RawServer(env={"XDG_RUNTIME_DIR": str(workspace.parent)})
    try:
        server.initialize(workspace)
        uri = (workspace / "a.txt").as_uri()
        for n in range(100):
            for message in (
                {
                    "id": 1000 + n,
                    "method": "textDocument/didSave",
                    "params": {"textDocument": {"uri": uri}},
                },
                {
                    "id": 2000 + n,
                    "method": "readkeeper/didChangeDiagnostics",
                    "params": {"items": []},
                },
                {"id": 3000 + n, "method": "nonexistent/method", "params": {}},
                {"id": [n], "method": "readkeeper/read", "params": {"file_path": "a.txt"}},
                {"id": 4000 + n, "method": "readkeeper/read", "params": {"file_path": 5}},
            ):
                server.send({"jsonrpc": "2.0", **message})
        reply = server.request(99_999, "readkeeper/read", {"file_path": "a.txt"})
        assert reply["result"]["type"] == "text"
    finally:
        server.close()
