"""Raw HTTP to `readkeeper mcp --http`, for the tests of what an SDK client never sends
(half a request, a framing two parsers could read two ways, a body over the cap, answers
never read): one way to build a request's head and one to read an answer, shared by the
test_mcp_http_* files."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from helpers import wait_until
from mcp_helpers import HttpServer, mcp_env, private_runtime_dir

CAP = 4 << 20  # the SDK's cap on a request body

Address = tuple[str, int]


def request_head(address: Address, session: str | None, *rows: str) -> bytes:
    """A POST's head to `/mcp` with MCP's headers, in `session` (when given), then
    `rows` (its framing: a Content-Length, a Transfer-Encoding, ...)."""
    lines = [
        "POST /mcp HTTP/1.1",
        f"Host: {address[0]}:{address[1]}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        "MCP-Protocol-Version: 2025-06-18",
        *([f"Mcp-Session-Id: {session}"] if session is not None else []),
        *rows,
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def post(host: str, port: int, body: dict[str, Any], session: str | None = None) -> bytes:
    """A whole POST of the JSON `body`."""
    data = json.dumps(body).encode()
    return request_head((host, port), session, f"Content-Length: {len(data)}") + data


def read_answer(conn: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """The next answer on `conn`: its status, headers (names in lower case) and body,
    whole (by its Content-Length, or an event stream's end)."""
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = conn.recv(65536)
        assert chunk, "the server closed the connection without answering"
        answer += chunk
    top, _, body = answer.partition(b"\r\n\r\n")
    lines = top.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.lower(): v.strip() for k, _, v in (row.partition(":") for row in lines[1:])}
    while not _complete(headers, body):
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return status, headers, body


def _complete(headers: dict[str, str], body: bytes) -> bool:
    if "content-length" in headers:
        return len(body) >= int(headers["content-length"])
    return body.endswith(b"\r\n0\r\n\r\n") or body == b"0\r\n\r\n"


def answer_json(conn: socket.socket) -> tuple[int, dict[str, object]]:
    """The next answer on `conn`: its status and its JSON body."""
    status, _, body = read_answer(conn)
    return status, json.loads(body)


def exchange(address: Address, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send one request on a fresh connection and read its whole answer."""
    with socket.create_connection(address, timeout=120) as conn:
        conn.sendall(request)
        return read_answer(conn)


def open_session(address: Address) -> str:
    """A new session's id, its handshake done."""
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
    hello["clientInfo"] = {"name": "test", "version": "1"}
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}
    status, headers, _ = exchange(address, post(*address, init))
    assert status == 200
    session = headers["mcp-session-id"]
    ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    status, _, _ = exchange(address, post(*address, ready, session))
    assert status == 202
    return session


def start(workspace: Path) -> tuple[HttpServer, Address]:
    """`readkeeper mcp --http` on `workspace` alone, with a 1,500-line big.txt in it."""
    rows = "".join(f"line {i:06d} {'x' * 40}\n" for i in range(1500))
    (workspace / "big.txt").write_text(rows)
    server = HttpServer(
        ["--standalone", "--root", str(workspace)], mcp_env(private_runtime_dir()), real=True
    )
    url = urlsplit(server.url)
    assert url.hostname is not None
    assert url.port is not None
    return server, (url.hostname, url.port)


@contextmanager
def serving(workspace: Path) -> Iterator[tuple[HttpServer, Address]]:
    """`start` for the block, the server stopped after it."""
    server, address = start(workspace)
    try:
        yield server, address
    finally:
        server.stop()


def served_afterwards(address: Address) -> None:
    """A fresh client opens its session and gets a whole answer, once the server has
    seen the closed connections go (their requests in flight then end)."""
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
    hello["clientInfo"] = {"name": "test", "version": "1"}
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}

    def admitted() -> bool:
        return exchange(address, post(*address, init))[0] != 503

    wait_until(admitted, "the closed connections' requests to end", timeout=120)
    session = open_session(address)
    call = {"jsonrpc": "2.0", "id": "fresh", "method": "tools/call"}
    call["params"] = {"name": "read", "arguments": {"file_path": "big.txt", "force": True}}
    status, _, body = exchange(address, post(*address, call, session))
    assert status == 200, body[:500]
    assert b"line 001499" in body
