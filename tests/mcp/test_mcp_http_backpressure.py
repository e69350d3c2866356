"""Clients of `readkeeper mcp --http` that send tool calls with large answers and never
read them, over one connection and over many: the server's memory stays bounded (one
request at a time per connection, and a cap on the requests in flight over all of
them, past which a request is refused with a 503 saying to retry), and it answers a
fresh client normally afterwards.

Raw sockets, so that nothing reads what the server sends.
"""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from helpers import wait_until
from mcp_helpers import HttpServer, mcp_env, private_runtime_dir

CONNECTIONS = 50
PER_CONNECTION = 20
# Padding in each call's `_meta` (the SDK's body limit is 4 MiB): what an unread
# answer keeps alive on the server is its request too.
PADDING = 3_000_000
# The interpreter and the core, the requests in flight with their answers, and slack.
PEAK_RSS_CAP_KB = 480_000


def peak_rss_kb(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(row.split()[1] for row in status.splitlines() if row.startswith("VmHWM:")))


def post(host: str, port: int, body: dict[str, Any], session: str | None = None) -> bytes:
    data = json.dumps(body).encode()
    head = [
        "POST /mcp HTTP/1.1",
        f"Host: {host}:{port}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        "MCP-Protocol-Version: 2025-06-18",
        f"Content-Length: {len(data)}",
    ]
    if session is not None:
        head.append(f"Mcp-Session-Id: {session}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + data


def exchange(address: tuple[str, int], request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send one request on a fresh connection and read its whole answer."""
    with socket.create_connection(address, timeout=120) as conn:
        conn.sendall(request)
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = conn.recv(65536)
            assert chunk, "the server closed the connection without answering"
            answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.lower(): v.strip() for k, _, v in (row.partition(":") for row in lines[1:])}
        # An SSE answer ends with its one message; a JSON one has a length.
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


def open_session(address: tuple[str, int]) -> str:
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


def read_call(msg_id: int, padding: int) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "read", "arguments": {"file_path": "big.txt", "force": True}}
    if padding:
        params["_meta"] = {"example.com/padding": "p" * padding}
    return {"jsonrpc": "2.0", "id": msg_id, "method": "tools/call", "params": params}


def flood(
    address: tuple[str, int], session: str, first: int, count: int, padding: int
) -> socket.socket:
    """A connection that sends `count` tool calls and never reads."""
    conn = socket.create_connection(address)

    def send() -> None:
        try:
            for n in range(count):
                conn.sendall(post(*address, read_call(first + n, padding), session))
        except OSError:
            pass  # the test closed the connection

    threading.Thread(target=send, daemon=True).start()
    return conn


def start(workspace: Path) -> tuple[HttpServer, tuple[str, int]]:
    rows = "".join(f"line {i:06d} {'x' * 40}\n" for i in range(1500))
    (workspace / "big.txt").write_text(rows)
    server = HttpServer(["--standalone", "--root", str(workspace)], mcp_env(private_runtime_dir()))
    url = urlsplit(server.url)
    assert url.hostname is not None
    assert url.port is not None
    return server, (url.hostname, url.port)


def served_afterwards(address: tuple[str, int]) -> None:
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


def wait_for_peak(pid: int, settled: threading.Event) -> None:
    """Let the server take what it will: until its peak stops growing."""
    last = [-1]

    def steady() -> bool:
        peak = peak_rss_kb(pid)
        grown, last[0] = peak != last[0], peak
        return not grown

    for _ in range(3):
        wait_until(steady, "the server's memory to settle", timeout=120)
        settled.wait(2)


def test_one_connection_that_never_reads_leaves_the_server_bounded(workspace: Path) -> None:
    server, address = start(workspace)
    try:
        session = open_session(address)
        conn = flood(address, session, 1, 2000, 0)
        wait_for_peak(server.process.pid, threading.Event())
        peak = peak_rss_kb(server.process.pid)
        assert peak < PEAK_RSS_CAP_KB, f"peak RSS {peak} kB"
        served_afterwards(address)
        conn.close()
    finally:
        server.stop()


def test_many_connections_that_never_read_leave_the_server_bounded(workspace: Path) -> None:
    server, address = start(workspace)
    try:
        session = open_session(address)
        conns = [
            flood(address, session, 1 + n * PER_CONNECTION, PER_CONNECTION, PADDING)
            for n in range(CONNECTIONS)
        ]
        wait_for_peak(server.process.pid, threading.Event())
        peak = peak_rss_kb(server.process.pid)
        assert peak < PEAK_RSS_CAP_KB, f"peak RSS {peak} kB"
        for conn in conns:
            conn.close()
        served_afterwards(address)
    finally:
        server.stop()


def test_a_request_over_the_cap_is_refused_with_what_to_do(workspace: Path) -> None:
    # Each connection's unread answers (100 KB each) outgrow the socket buffers, so
    # every connection keeps a request in flight for good: more of them than the cap.
    server, address = start(workspace)
    try:
        session = open_session(address)
        conns = [flood(address, session, 1 + n * 200, 200, 0) for n in range(40)]
        probe = {"jsonrpc": "2.0", "id": "probe", "method": "tools/call"}
        probe["params"] = {"name": "stats", "arguments": {}}

        def refused() -> tuple[int, dict[str, str], bytes] | None:
            answer = exchange(address, post(*address, probe, session))
            return answer if answer[0] == 503 else None

        _, headers, body = wait_until(refused, "a request over the cap to be refused", 300)
        assert json.loads(body)["id"] == "probe"  # the refused call's own id
        error = json.loads(body)["error"]
        assert error["data"]["kind"] == "too_large"
        assert error["data"]["reason"] == "busy"
        assert "Read the answers to your earlier requests" in error["message"]
        assert headers["retry-after"] == "1"
        for conn in conns:
            conn.close()
        served_afterwards(address)
    finally:
        server.stop()


def test_unread_event_streams_hold_no_place(workspace: Path) -> None:
    # A session's GET stream stays open for good and readkeeper sends nothing on it
    # (a call's roots/list rides that call's own answer): more of them than the cap on
    # requests in flight, never read, and a fresh client is still served.
    server, address = start(workspace)
    streams = []
    try:
        for _ in range(40):
            session = open_session(address)
            conn = socket.create_connection(address)
            conn.sendall(
                (
                    f"GET /mcp HTTP/1.1\r\nHost: {address[0]}:{address[1]}\r\n"
                    "Accept: text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n"
                    f"Mcp-Session-Id: {session}\r\n\r\n"
                ).encode()
            )
            streams.append(conn)
        served_afterwards(address)
        assert peak_rss_kb(server.process.pid) < PEAK_RSS_CAP_KB
    finally:
        for conn in streams:
            conn.close()
        server.stop()
