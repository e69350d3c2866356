"""`readkeeper serve --tcp` serves only the user who started it, and only a client that
speaks LSP from its first byte: another uid's connection and an HTTP request carrying
LSP frames in its body (what a web page's no-cors fetch sends) are closed unserved,
logged, and leave the server waiting for its own client.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers import NOBODY, needs_root, run_as_nobody, wait_until

SERVE = [sys.executable, "-m", "readkeeper", "serve"]


def frame(message: dict[str, Any], first: bytes = b"Content-Length: %d\r\n\r\n") -> bytes:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    return first % len(body) + body


def opening(workspace: Path, path: str) -> bytes:
    """initialize, initialized and a read of `path`: a whole session's first frames."""
    initialize = {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}}
    return (
        frame({"id": 1, "method": "initialize", "params": initialize})
        + frame({"method": "initialized", "params": {}})
        + frame({"id": 2, "method": "readkeeper/read", "params": {"file_path": path}})
    )


def everything_until_closed(sock: socket.socket) -> bytes:
    """What the server sends before it closes the connection."""
    received = b""
    try:
        while chunk := sock.recv(1 << 16):
            received += chunk
            if b'"id": 2' in received or b'"id":2' in received:
                break  # served: the read's answer came
    except ConnectionResetError:
        pass
    return received


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def connect(port: int) -> socket.socket:
    def connected() -> socket.socket | None:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=30)
        except ConnectionRefusedError:
            return None

    return wait_until(connected, "the server to listen", timeout=60)


class TcpServer:
    """`readkeeper serve --tcp 127.0.0.1:PORT`, its stderr in a file."""

    def __init__(self, workspace: Path) -> None:
        self.port = free_port()
        self.log = workspace.parent / "serve-tcp.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith("READKEEPER_")}
        env["XDG_RUNTIME_DIR"] = str(workspace.parent)
        self.process = subprocess.Popen(
            [*SERVE, "--tcp", f"127.0.0.1:{self.port}"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self.log.open("wb"),
            env=env,
        )

    def refusals(self) -> list[str]:
        return [line for line in self.log.read_text().splitlines() if "Refused" in line]

    def served_to_its_own_user(self, workspace: Path, first: bytes) -> dict[str, Any]:
        """A session of our own (its first header `first`): the read's answer, after
        which the client ends the session and the server exits 0."""
        with connect(self.port) as sock:
            initialize = {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}}
            sock.sendall(
                frame({"id": 1, "method": "initialize", "params": initialize}, first)
                + frame({"method": "initialized", "params": {}})
                + frame({"id": 2, "method": "readkeeper/read", "params": {"file_path": "s.txt"}})
            )
            reply = reply_to(sock, 2)
            sock.sendall(frame({"id": 3, "method": "shutdown"}) + frame({"method": "exit"}))
            assert self.process.wait(timeout=30) == 0
        return reply


def reply_to(sock: socket.socket, msg_id: int) -> dict[str, Any]:
    buffer = b""
    while True:
        while b"\r\n\r\n" not in buffer:
            chunk = sock.recv(1 << 16)
            assert chunk, f"the server closed the connection: {buffer[:300]!r}"
            buffer += chunk
        head, _, buffer = buffer.partition(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
        while len(buffer) < length:
            chunk = sock.recv(1 << 16)
            assert chunk, "the server closed the connection mid-message"
            buffer += chunk
        message, buffer = json.loads(buffer[:length]), buffer[length:]
        if message.get("id") == msg_id and "method" not in message:
            return dict(message)


@pytest.fixture
def server(workspace: Path) -> Iterator[TcpServer]:
    (workspace / "s.txt").write_text("the user's secret\n")
    served = TcpServer(workspace)
    yield served
    served.process.kill()
    served.process.wait()


@needs_root
def test_a_client_of_another_uid_is_refused_and_its_own_user_is_served(
    server: TcpServer, workspace: Path
) -> None:
    session = opening(workspace, "s.txt")

    def as_nobody() -> bytes:
        with connect(server.port) as sock:
            try:
                sock.sendall(session)
            except (BrokenPipeError, ConnectionResetError):
                return b""  # closed before it could even write
            return everything_until_closed(sock)

    got = run_as_nobody(as_nobody)
    assert got == b"", got[:500]
    refusals = wait_until(server.refusals, "the refusal to be logged")
    assert len(refusals) == 1
    assert f"uid {NOBODY}" in refusals[0]
    assert f"not as uid {os.geteuid()}" in refusals[0]
    reply = server.served_to_its_own_user(workspace, b"Content-Length: %d\r\n\r\n")
    assert reply["result"]["file"]["content"] == "     1\tthe user's secret"


BROWSER_POST = (
    b"POST / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nOrigin: http://evil.example\r\n"
    b"Content-Type: text/plain;charset=UTF-8\r\nContent-Length: %d\r\n\r\n"
)


@pytest.mark.parametrize("shape", ["browser_post", "junk_line", "blank_line"])
def test_a_stream_not_starting_with_an_lsp_header_is_refused(
    server: TcpServer, workspace: Path, shape: str
) -> None:
    write = {"file_path": "planted.txt", "content": "pwned\n"}
    initialize = {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}}
    frames = (
        frame({"id": 1, "method": "initialize", "params": initialize})
        + frame({"method": "initialized", "params": {}})
        + frame({"id": 2, "method": "readkeeper/write", "params": write})
    )
    if shape == "browser_post":  # the body a web page chose: junk, then frames
        body = b"x\r\n" + frames
        stream = BROWSER_POST % (server.port, len(body)) + body
    elif shape == "junk_line":
        stream = b"hello\r\n" + frames
    else:
        stream = b"\r\n" + frames
    with connect(server.port) as sock:
        sock.sendall(stream)
        assert everything_until_closed(sock) == b""
    refusals = wait_until(server.refusals, "the refusal to be logged")
    assert "not an LSP header" in refusals[0]
    assert not (workspace / "planted.txt").exists()
    # The refusal did not end the server: its own client, whose first header is a
    # lowercase Content-Type (allowed: any LSP header may come first), is served.
    first = b"content-type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: %d\r\n\r\n"
    reply = server.served_to_its_own_user(workspace, first)
    assert reply["result"]["type"] == "text"
    assert not (workspace / "planted.txt").exists()


def test_a_second_client_is_refused_while_the_first_is_served(
    server: TcpServer, workspace: Path
) -> None:
    with connect(server.port) as first:
        first.sendall(opening(workspace, "s.txt"))
        assert reply_to(first, 2)["result"]["type"] == "text"
        with connect(server.port) as second:
            second.sendall(opening(workspace, "s.txt"))
            assert everything_until_closed(second) == b""
        assert "one client" in wait_until(server.refusals, "the refusal to be logged")[0]
        # The first client's replies still come to it, not to the second.
        first.sendall(
            frame({"id": 9, "method": "readkeeper/read", "params": {"file_path": "s.txt"}})
        )
        assert reply_to(first, 9)["result"]["type"] == "file_unchanged"


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "[::]", ""])
def test_serve_listens_on_loopback_only(host: str) -> None:
    done = subprocess.run(
        [*SERVE, "--tcp", f"{host}:{free_port()}"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert "loopback" in done.stderr
    assert "127.0.0.1" in done.stderr  # what to pass instead


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]"])
def test_loopback_hosts_are_accepted(host: str) -> None:
    if "::1" in host and not socket.has_ipv6:
        pytest.skip("no IPv6 here")
    port = free_port()
    process = subprocess.Popen(
        [*SERVE, "--tcp", f"{host}:{port}"], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        family = socket.AF_INET6 if "::1" in host else socket.AF_INET
        address = "::1" if "::1" in host else "127.0.0.1"

        def connected() -> socket.socket | None:
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            sock = socket.socket(family)
            try:
                sock.connect((address, port))
            except ConnectionRefusedError:
                sock.close()
                return None
            return sock

        with wait_until(connected, "the server to listen", timeout=60) as sock:
            sock.sendall(frame({"id": 1, "method": "shutdown"}))
            assert reply_to(sock, 1)["id"] == 1  # answered: served on that loopback host
    finally:
        process.kill()
        process.wait()
