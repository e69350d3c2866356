"""`readkeeper mcp --http` at its session cap, and the shape of every refusal its door
writes (attack round 21, A24: 256 sessions opened and never ended kept every new client
out, each refused 503 `-32603 "Too many open sessions"` with a null id and no kind).

Raw requests, to see the HTTP status and body of each refusal as a client gets it.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from mcp import Client
from mcp_raw_http import exchange, open_session, post, request_head, serving, start

from mcp_helpers import call
from readkeeper.mcp import MAX_SESSIONS
from readkeeper.mcp.http_refusals import refusal


def refused(answer: bytes, request_id: Any) -> dict[str, Any]:
    """The JSON-RPC error of a refusal: the request's id, a kind, a next step."""
    message = json.loads(answer)
    assert message["id"] == request_id, message
    error: dict[str, Any] = message["error"]
    assert error["data"]["kind"], error
    return error


def tool_call(request_id: int) -> dict[str, Any]:
    params = {"name": "read", "arguments": {"file_path": "big.txt"}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


async def test_sessions_never_ended_cannot_keep_a_new_client_out(workspace: Path) -> None:
    server, address = start(workspace)
    try:
        # A client at work, then a flood of sessions that never go past their handshake.
        working = open_session(address)
        status, _, _ = exchange(address, post(*address, tool_call(1), working))
        assert status == 200
        flood = [open_session(address) for _ in range(MAX_SESSIONS - 1)]
        # The table is full and no session has a call in flight: a new client gets in.
        async with Client(server.url, mode="legacy") as client:
            assert (await call(client, "read", file_path="big.txt"))["type"] == "text"
            # The least recently used of the flood was ended to make room, told so.
            status, _, answer = exchange(address, post(*address, tool_call(7), flood[0]))
            assert status == 404
            error = refused(answer, 7)
            assert error["data"] == {"kind": "bad_params", "reason": "session_ended"}
            assert "initialize" in error["message"]
            # The working client's session, used before the flood, is kept.
            status, _, _ = exchange(address, post(*address, tool_call(8), working))
            assert status == 200
            assert (await call(client, "read", file_path="big.txt", force=True))["type"] == "text"
        # Every next client gets in too, each in place of one more of the flood.
        for _ in range(3):
            async with Client(server.url, mode="legacy") as client:
                assert (await call(client, "stats"))["mode"] == "standalone"
        status, _, _ = exchange(address, post(*address, tool_call(9), working))
        assert status == 200
    finally:
        server.stop()


def test_every_refusal_of_the_sdk_has_an_id_a_kind_and_a_next_step(workspace: Path) -> None:
    server, address = start(workspace)
    try:
        # An unknown (or ended) session.
        status, _, answer = exchange(address, post(*address, tool_call(3), "f" * 32))
        assert status == 404
        assert refused(answer, 3)["data"]["reason"] == "session_ended"
        # A call without a session id, a GET without one, a method the door does not take.
        status, _, answer = exchange(address, post(*address, tool_call(4), None))
        assert status == 400
        assert "initialize" in refused(answer, 4)["message"]
        for method in ("GET", "PUT"):
            head = f"{method} /mcp HTTP/1.1\r\nHost: {address[0]}:{address[1]}\r\n"
            head += "Accept: application/json, text/event-stream\r\nContent-Length: 0\r\n\r\n"
            status, _, answer = exchange(address, head.encode())
            assert status >= 400, (method, status)
            assert "initialize" in refused(answer, None)["message"], (method, answer)
        # A method the door does not take, its body naming an id (attack round 23: null).
        for number, method in enumerate(("PUT", "PATCH", "DELETE"), 50):
            for session in (None, open_session(address))[: 1 if method == "DELETE" else 2]:
                request = post(*address, tool_call(number), session)
                status, _, answer = exchange(address, request.replace(b"POST", method.encode(), 1))
                assert status >= 400, (method, status)
                refused(answer, number)
    finally:
        server.stop()


def working_session(address: tuple[str, int], request_id: int) -> int:
    """A new client's session and its first call: the status of that call."""
    session = open_session(address)
    call = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call"}
    call["params"] = {"name": "stats", "arguments": {}}
    status, _, body = exchange(address, post(*address, call, session))
    assert status == 200, body[:300]
    return status


def test_new_clients_arriving_together_at_the_cap_each_get_a_working_session(
    workspace: Path,
) -> None:
    # Attack round 22, A09: with the table full of idle sessions that had worked, 24 new
    # clients 12 at a time were refused a false "busy" (they raced the SDK's own count)
    # or saw their fresh session ended by another newcomer before its first call.
    with serving(workspace) as (_, address):
        sessions = [open_session(address) for _ in range(MAX_SESSIONS)]
        for number, session in enumerate(sessions):
            status, _, _ = exchange(address, post(*address, tool_call(number), session))
            assert status == 200
        with ThreadPoolExecutor(12) as pool:
            statuses = list(pool.map(partial(working_session, address), range(24)))
        assert statuses == [200] * 24
        # A call without a session id opens none: it ends no session to make room.
        status, _, answer = exchange(address, post(*address, tool_call(99), None))
        assert status == 400
        assert "initialize" in refused(answer, 99)["message"]
        status, _, _ = exchange(address, post(*address, tool_call(100), sessions[24]))
        assert status == 200


def test_refusals_of_the_host_and_media_type_checks_have_an_id_a_kind_and_a_next_step(
    workspace: Path,
) -> None:
    # Attack round 22, A15: these were plain text (`Invalid Content-Type header`, 400;
    # `Invalid Host header`, 421).
    with serving(workspace) as (_, address):
        session = open_session(address)
        data = json.dumps(tool_call(44)).encode()
        head = request_head(address, session, f"Content-Length: {len(data)}")
        head = head.replace(b"Content-Type: application/json", b"Content-Type: text/plain")
        status, _, answer = exchange(address, head + data)
        assert status == 400
        assert "Content-Type: application/json" in refused(answer, 44)["message"]
        data = json.dumps(tool_call(45)).encode()
        head = request_head(address, session, f"Content-Length: {len(data)}")
        head = head.replace(f"Host: {address[0]}:{address[1]}".encode(), b"Host: x")
        status, _, answer = exchange(address, head + data)
        assert status == 421
        assert f"Host: 127.0.0.1:{address[1]}" in refused(answer, 45)["message"]
        # A web page's Origin, and a path other than /mcp (starlette's plain "Not Found").
        data = json.dumps(tool_call(46)).encode()
        origin = f"Origin: http://example.com\r\nContent-Length: {len(data)}"
        status, _, answer = exchange(address, request_head(address, session, origin) + data)
        assert status == 403
        assert "Origin" in refused(answer, 46)["message"]
        data = json.dumps(tool_call(47)).encode()
        head = request_head(address, session, f"Content-Length: {len(data)}")
        status, _, answer = exchange(address, head.replace(b"POST /mcp ", b"POST /other ") + data)
        assert status == 404
        error = refused(answer, 47)
        assert "/mcp" in error["message"]
        assert "reason" not in error["data"]


def test_the_sdks_own_refusal_at_its_cap_does_not_say_every_session_is_busy() -> None:
    message, kind, data = refusal(503, "Too many open sessions")
    assert "in flight" not in message
    assert "initialize" in message
    assert (kind, data) == ("too_large", {"reason": "busy"})


def initialize(request_id: int) -> dict[str, Any]:
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
    hello["clientInfo"] = {"name": "refused", "version": "1"}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": hello}


def test_an_initialize_the_sdk_refuses_ends_no_session_at_the_cap(workspace: Path) -> None:
    # Room was made before the SDK's own checks: at the cap, an initialize with a wrong
    # Host ended an idle session, then was refused 421 (note19). Now a session is ended
    # only for a newcomer the SDK admitted.
    with serving(workspace) as (_, address):
        sessions = [open_session(address) for _ in range(MAX_SESSIONS)]
        door = f"Host: {address[0]}:{address[1]}".encode()
        for number, swap in enumerate(
            [
                (door, b"Host: elsewhere.example"),
                (b"Content-Type: application/json", b"Content-Type: text/plain"),
                (b"Accept: application/json, text/event-stream", b"Accept: text/html"),
                (
                    b"Content-Type: application/json",
                    b"Content-Type: application/json\r\nOrigin: http://example.com",
                ),
            ]
        ):
            status, _, answer = exchange(address, post(*address, initialize(number)).replace(*swap))
            assert status >= 400, (swap, answer)
            refused(answer, number)
        bad_params = initialize(9)
        bad_params["params"] = {"protocolVersion": 7}
        status, headers, answer = exchange(address, post(*address, bad_params))
        assert b'"error"' in answer, answer
        # An initialize answered with an error opens no session: it names none (the SDK
        # named one, already dead, whose next call was told it had "ended").
        assert "mcp-session-id" not in headers, headers
        # Not one of the sessions was ended for them.
        for number, session in enumerate(sessions):
            status, _, answer = exchange(address, post(*address, tool_call(100 + number), session))
            assert status == 200, (number, answer[:200])


def test_a_failed_initialize_names_no_session(workspace: Path) -> None:
    with serving(workspace) as (_, address):
        for number, params in enumerate(({}, {"protocolVersion": "2025-06-18"}, None)):
            hello = initialize(number)
            if params is None:
                del hello["params"]
            else:
                hello["params"] = params
            status, headers, answer = exchange(address, post(*address, hello))
            assert b'"error"' in answer, answer
            assert status < 500, answer
            assert "mcp-session-id" not in headers, (params, headers)
        # A good one still does.
        assert open_session(address)


def test_the_host_check_takes_this_servers_own_address_only(workspace: Path) -> None:
    # Attack round 23: `Host: 127.0.0.1:PORT@evil.com` was served (the SDK's `127.0.0.1:*`
    # takes any text after the colon).
    with serving(workspace) as (_, address):
        door = f"Host: {address[0]}:{address[1]}".encode()
        for number, host in enumerate(
            [f"{address[0]}:{address[1]}@evil.example", f"{address[0]}:{address[1] + 1}"], 60
        ):
            request = post(*address, initialize(number)).replace(door, f"Host: {host}".encode())
            status, headers, answer = exchange(address, request)
            assert status == 421, (host, answer)
            assert "mcp-session-id" not in headers
            assert f"{address[0]}:{address[1]}" in refused(answer, number)["message"]
        request = post(*address, initialize(70)).replace(
            door, f"Host: localhost:{address[1]}".encode()
        )
        assert exchange(address, request)[0] == 200


def test_a_request_with_two_origins_is_refused_whichever_comes_first(workspace: Path) -> None:
    # Attack round 24: only the first Origin was checked (a good one, then a web page's).
    with serving(workspace) as (_, address):
        good = f"Origin: http://{address[0]}:{address[1]}"
        for number, origins in enumerate(
            [(good, "Origin: http://evil.example"), ("Origin: http://evil.example", good)], 80
        ):
            data = json.dumps(initialize(number)).encode()
            head = request_head(address, None, *origins, f"Content-Length: {len(data)}")
            status, headers, answer = exchange(address, head + data)
            assert status == 403, (origins, answer)
            assert "mcp-session-id" not in headers
            assert "Origin" in refused(answer, number)["message"]


def test_a_head_refused_before_its_body_is_read_says_why_and_that_it_names_no_id(
    workspace: Path,
) -> None:
    # Attack round 24: no Host, or two, was "not valid HTTP/1.1 (its request line,
    # headers or body framing)" with a null id and no word on either.
    with serving(workspace) as (_, address):
        door = f"Host: {address[0]}:{address[1]}\r\n".encode()
        for swap in (b"", door + door):
            status, _, answer = exchange(
                address, post(*address, initialize(90)).replace(door, swap)
            )
            assert status == 400, answer
            error = refused(answer, None)
            assert "Host" in error["message"], error
            assert "names no id" in error["message"], error
