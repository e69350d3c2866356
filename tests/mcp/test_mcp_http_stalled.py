"""Clients of `readkeeper mcp --http` that send half a request and stop (attack round 8,
finding 7: 32 of them locked every other client out with 503s for minutes). A request
holds a place among those in flight only once it has wholly arrived; until then its
connection waits under a deadline (http_deadline.py), and is closed when it passes.

Raw sockets, so that nothing completes a request the test means to leave half sent.
"""

from __future__ import annotations

import socket
from pathlib import Path

from mcp_raw_http import exchange, open_session, post, serving, start

from helpers import wait_until
from mcp_helpers import HttpServer
from readkeeper.mcp.http_deadline import MAX_WAITING_PER_PEER, REQUEST_DEADLINE_S
from readkeeper.mcp.http_limits import MAX_IN_FLIGHT

STALLED = 40  # more than the places in flight, fewer than the connections that may wait
assert MAX_IN_FLIGHT < STALLED < MAX_WAITING_PER_PEER


def half_body(address: tuple[str, int]) -> socket.socket:
    """A connection that sends a call's headers and ten bytes of its body, then stops."""
    request = post(*address, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    conn = socket.create_connection(address)
    conn.sendall(request[: request.index(b"\r\n\r\n") + 4 + 10])
    return conn


def half_headers(address: tuple[str, int]) -> socket.socket:
    conn = socket.create_connection(address)
    conn.sendall(f"POST /mcp HTTP/1.1\r\nHost: {address[0]}:{address[1]}\r\n".encode())
    return conn


def still_open(conn: socket.socket) -> bool:
    conn.setblocking(False)
    try:
        return conn.recv(1) != b""
    except BlockingIOError:
        return True  # nothing to read, and not closed
    finally:
        conn.setblocking(True)


def closed_by_the_server(conn: socket.socket) -> bool:
    conn.settimeout(REQUEST_DEADLINE_S * 6)
    try:
        while chunk := conn.recv(65536):
            del chunk  # a 408 or nothing: what matters is that it ends
        return True
    except (ConnectionResetError, BrokenPipeError):
        return True


def listed(address: tuple[str, int], session: str) -> None:
    call = {"jsonrpc": "2.0", "id": "fresh", "method": "tools/list"}
    status, _, body = exchange(address, post(*address, call, session))
    assert status == 200, body[:500]
    assert b'"read"' in body


def served_while_others_stall(server: HttpServer, address: tuple[str, int]) -> None:
    stalled = [half_body(address) for _ in range(STALLED)]
    stalled += [half_headers(address) for _ in range(STALLED // 4)]
    try:
        # A normal client is served at once: it gets its session and its answer...
        session = open_session(address)
        listed(address, session)
        # ... while the stalled connections are still open (their deadline has not
        # passed: served before it, not after).
        assert all(still_open(conn) for conn in stalled[:STALLED])
        # Each stalled connection is closed by its deadline.
        assert closed_by_the_server(stalled[0])
        assert closed_by_the_server(stalled[-1])
        wait_until(lambda: not any(still_open(c) for c in stalled), "the deadline", timeout=120)
        listed(address, session)
        assert server.process.poll() is None
    finally:
        for conn in stalled:
            conn.close()


def test_stalled_requests_hold_no_place_and_are_closed_by_their_deadline(workspace: Path) -> None:
    with serving(workspace) as (server, address):
        served_while_others_stall(server, address)


def test_a_flood_of_waiting_connections_evicts_only_itself(workspace: Path) -> None:
    server, address = start(workspace)
    flood: list[socket.socket] = []
    try:
        flood = [half_headers(address) for _ in range(MAX_WAITING_PER_PEER * 2)]
        # The oldest of those over the bound were closed to make room; the newest wait.
        assert closed_by_the_server(flood[0])
        assert still_open(flood[-1])
        session = open_session(address)
        listed(address, session)
    finally:
        for conn in flood:
            conn.close()
        server.stop()


def test_a_refused_origin_holds_no_place(workspace: Path) -> None:
    server, address = start(workspace)
    stalled: list[socket.socket] = []
    try:
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
        hello["clientInfo"] = {"name": "test", "version": "1"}
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}
        request = post(*address, init)
        evil = request.replace(b"\r\n\r\n", b"\r\nOrigin: http://evil.example\r\n\r\n", 1)
        for _ in range(MAX_IN_FLIGHT + 8):
            status, _, _ = exchange(address, evil)
            assert status == 403
        # Refused requests whose bodies never finish: none takes a place either.
        for _ in range(STALLED):
            conn = socket.create_connection(address)
            conn.sendall(evil[: evil.index(b"\r\n\r\n") + 4 + 10])
            stalled.append(conn)
        listed(address, open_session(address))
    finally:
        for conn in stalled:
            conn.close()
        server.stop()
