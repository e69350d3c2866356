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

from mcp_raw_http import exchange, open_session, post, served_afterwards, serving, start

from helpers import wait_until

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
    with serving(workspace) as (server, address):
        session = open_session(address)
        conn = flood(address, session, 1, 2000, 0)
        wait_for_peak(server.process.pid, threading.Event())
        peak = peak_rss_kb(server.process.pid)
        assert peak < PEAK_RSS_CAP_KB, f"peak RSS {peak} kB"
        served_afterwards(address)
        conn.close()


def test_many_connections_that_never_read_leave_the_server_bounded(workspace: Path) -> None:
    with serving(workspace) as (server, address):
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


def test_a_request_over_the_cap_is_refused_with_what_to_do(workspace: Path) -> None:
    # Each connection's unread answers (100 KB each) outgrow the socket buffers, so
    # every connection keeps a request in flight for good: more of them than the cap.
    with serving(workspace) as (_, address):
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
        # What is true of any client: the cap is over all of them (attack round 23: a
        # client that read every answer was told its answers had not been read).
        assert "over all clients" in error["message"], error
        assert "not been read" not in error["message"]
        assert headers["retry-after"] == "1"
        for conn in conns:
            conn.close()
        served_afterwards(address)


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
