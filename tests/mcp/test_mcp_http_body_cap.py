"""A request body over the SDK's 4 MiB cap, over `readkeeper mcp --http`: answered 413
`too_large` (with `max_bytes`) whatever its size or framing, decided from its
Content-Length before the body is read (the client here sends only its start), or, for
a chunked body, once what came passes the cap. Never 503 "busy ... send this one again"
(a 70 MB body was told that for good, with nothing in flight: attack round 27, A08)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from test_mcp_http_backpressure import open_session, served_afterwards, start

CAP = 4 << 20


def _head(address: tuple[str, int], session: str, framing: str) -> bytes:
    rows = [
        "POST /mcp HTTP/1.1",
        f"Host: {address[0]}:{address[1]}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        "MCP-Protocol-Version: 2025-06-18",
        f"Mcp-Session-Id: {session}",
        framing,
    ]
    return ("\r\n".join(rows) + "\r\n\r\n").encode()


def _answer(conn: socket.socket) -> tuple[int, dict[str, object]]:
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = conn.recv(65536)
        assert chunk, "the server closed the connection without answering"
        got += chunk
    head, _, body = got.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = next(
        int(v) for k, _, v in (r.partition(":") for r in lines[1:]) if k.lower() == "content-length"
    )
    while len(body) < length:
        chunk = conn.recv(65536)
        assert chunk
        body += chunk
    return int(lines[0].split()[1]), json.loads(body)


def _assert_too_large(status: int, answer: dict[str, object]) -> None:
    assert status == 413, answer
    error = answer["error"]
    assert isinstance(error, dict)
    assert error["data"] == {"kind": "too_large", "max_bytes": CAP}
    assert "over 4 MiB" in error["message"]
    assert "again" not in error["message"]


@pytest.mark.parametrize("size", [CAP + 1, 20 << 20, (64 << 20) + 1, 70 << 20, 10**15])
def test_a_declared_body_over_the_cap_is_413_before_it_is_sent(workspace: Path, size: int) -> None:
    server, address = start(workspace)
    try:
        session = open_session(address)
        with socket.create_connection(address, timeout=60) as conn:
            # Only the head and a little of the body: the answer comes without the rest.
            conn.sendall(_head(address, session, f"Content-Length: {size}") + b'{"jsonrpc"')
            _assert_too_large(*_answer(conn))
        served_afterwards(address)
    finally:
        server.stop()


def test_a_chunked_body_over_the_cap_is_413_once_past_it(workspace: Path) -> None:
    server, address = start(workspace)
    try:
        session = open_session(address)
        with socket.create_connection(address, timeout=60) as conn:
            conn.sendall(_head(address, session, "Transfer-Encoding: chunked"))
            piece = b"x" * 65536
            for _ in range(CAP // len(piece) + 2):  # past the cap, never ended
                conn.sendall(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            _assert_too_large(*_answer(conn))
        served_afterwards(address)
    finally:
        server.stop()
