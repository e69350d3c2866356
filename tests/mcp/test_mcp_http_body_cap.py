"""A request body over the SDK's 4 MiB cap, over `readkeeper mcp --http`: answered 413
`too_large` (with `max_bytes`) whatever its size or framing, decided from its
Content-Length before the body is read (the client here sends only its start), or, for
a chunked body, once what came passes the cap. Never 503 "busy ... send this one again"
(a 70 MB body was told that for good, with nothing in flight: attack round 27, A08)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from mcp_raw_http import (
    CAP,
    answer_json,
    open_session,
    request_head,
    served_afterwards,
    serving,
)


def _assert_too_large(status: int, answer: dict[str, object]) -> None:
    assert status == 413, answer
    error = answer["error"]
    assert isinstance(error, dict)
    assert error["data"] == {"kind": "too_large", "max_bytes": CAP}
    assert "over 4 MiB" in error["message"]
    assert "again" not in error["message"]


@pytest.mark.parametrize("size", [CAP + 1, 20 << 20, (64 << 20) + 1, 70 << 20, 10**15])
def test_a_declared_body_over_the_cap_is_413_before_it_is_sent(workspace: Path, size: int) -> None:
    with serving(workspace) as (_, address):
        session = open_session(address)
        with socket.create_connection(address, timeout=60) as conn:
            # Only the head and a little of the body: the answer comes without the rest.
            conn.sendall(request_head(address, session, f"Content-Length: {size}") + b'{"jsonrpc"')
            _assert_too_large(*answer_json(conn))
        served_afterwards(address)


def test_a_chunked_body_over_the_cap_is_413_once_past_it(workspace: Path) -> None:
    with serving(workspace) as (_, address):
        session = open_session(address)
        with socket.create_connection(address, timeout=60) as conn:
            conn.sendall(request_head(address, session, "Transfer-Encoding: chunked"))
            piece = b"x" * 65536
            for _ in range(CAP // len(piece) + 2):  # past the cap, never ended
                conn.sendall(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            _assert_too_large(*answer_json(conn))
        served_afterwards(address)
