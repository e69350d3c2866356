"""How a request body is framed, over `readkeeper mcp --http` (RFC 9112 6.3).

A framing that two parsers could read two ways (a proxy in front and this server: the
way requests are smuggled) is refused 400 with what was wrong, and the connection is
closed, so nothing sent after it on the connection is taken as a request: both
Content-Length and Transfer-Encoding (was 413 "over 4 MiB" for a 150-byte body:
attack round 28, F1), two Content-Lengths that differ, one that is not a number, a
Transfer-Encoding other than chunked, a chunk size line that is not one.

A chunked body is over the 4 MiB cap as soon as a chunk size line says so: 413
`too_large` at once, the chunk never read (a client that declared 5 MiB, or 2^72
bytes, and stopped got no answer, only a close 10 s later: attack round 28, F2), or a
size line not yet ended says so by its digits; a Content-Length over the cap is 413
first on any request, before `Expect: 100-continue` is answered."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from mcp_raw_http import (
    CAP,
    answer_json,
    exchange,
    open_session,
    request_head,
    served_afterwards,
    serving,
)
from test_mcp_http_body_cap import _assert_too_large

INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
CHUNKED = f"{len(INIT):x}\r\n".encode() + INIT + b"\r\n0\r\n\r\n"


def _closed(conn: socket.socket) -> bool:
    """Whether the server closed the connection after its answer (nothing more comes)."""
    try:
        return conn.recv(65536) == b""
    except ConnectionResetError:
        return True


def _answered_and_closed(address: tuple[str, int], sent: bytes) -> tuple[int, dict[str, object]]:
    """The answer to `sent` on a connection of its own (status, JSON), which the
    server then closes."""
    with socket.create_connection(address, timeout=60) as conn:
        conn.sendall(sent)
        answered = answer_json(conn)
        assert _closed(conn)
    return answered


def _refused(address: tuple[str, int], framing: str, body: bytes) -> dict[str, object]:
    """The 400 for `body` under the head row(s) `framing`; a good request sent right
    after it on the same connection is never answered (the connection is closed)."""
    session = open_session(address)
    pipelined = request_head(address, session, f"Content-Length: {len(INIT)}") + INIT
    with socket.create_connection(address, timeout=60) as conn:
        conn.sendall(request_head(address, session, framing) + body + pipelined)
        status, answer = answer_json(conn)
        assert status == 400, answer
        assert _closed(conn)
    error = answer["error"]
    assert isinstance(error, dict)
    assert error["data"] == {"kind": "bad_params"}
    return error


@pytest.mark.parametrize(
    "framing",
    [
        "Content-Length: 4\r\nTransfer-Encoding: chunked",
        "Transfer-Encoding: chunked\r\nContent-Length: 4",
        f"Content-Length: {len(CHUNKED)}\r\nTransfer-Encoding: chunked",
    ],
)
def test_both_content_length_and_chunked_is_400_and_closed(workspace: Path, framing: str) -> None:
    with serving(workspace) as (_, address):
        message = str(_refused(address, framing, CHUNKED)["message"])
        assert "both Content-Length and Transfer-Encoding" in message
        assert "4 MiB" not in message
        # Its body is never read (it reads two ways): the answer says why it has no id.
        assert "names no id" in message
        served_afterwards(address)


@pytest.mark.parametrize(
    ("framing", "said"),
    [
        (f"Content-Length: {len(INIT)}\r\nContent-Length: {len(INIT) + 1}", "Content-Length"),
        ("Content-Length: abc", "Content-Length"),
        ("Content-Length: +12", "Content-Length"),
        ("Transfer-Encoding: gzip, chunked", "Transfer-Encoding"),
        ("Transfer-Encoding: identity", "Transfer-Encoding"),
        ("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked", "Transfer-Encoding"),
    ],
)
def test_a_framing_the_parser_refuses_is_400_saying_what(
    workspace: Path, framing: str, said: str
) -> None:
    with serving(workspace) as (_, address):
        message = str(_refused(address, framing, INIT)["message"])
        assert said in message
        assert "Invalid HTTP request" not in message
        served_afterwards(address)


def test_a_chunk_size_line_that_is_not_one_is_400(workspace: Path) -> None:
    with serving(workspace) as (_, address):
        # 21 hex digits (over 2^80), then a bare LF: neither is a chunk size line.
        for line in (b"1" + b"0" * 20 + b"\r\nabc", b"5\nhello\r\n0\r\n\r\n"):
            message = str(_refused(address, "Transfer-Encoding: chunked", line)["message"])
            assert "chunk" in message
        served_afterwards(address)


# What follows the head, each answered 413 at once, the chunk never read: a chunk size
# line over the cap (then three bytes of the chunk and nothing), or, after a first
# chunk of 16 bytes, one over what is left of the cap by a byte.
OVER_THE_CAP = {
    **{
        f"{size:#x}": f"{size:x}\r\nabc".encode() for size in (0x500000, CAP + 1, 2**72, 16**20 - 1)
    },
    "later": b"10\r\n" + b"x" * 16 + b"\r\n" + f"{CAP - 16 + 1:x}\r\n".encode(),
}


@pytest.mark.parametrize("sent", OVER_THE_CAP.values(), ids=list(OVER_THE_CAP))
def test_a_chunk_over_the_cap_is_413_unread(workspace: Path, sent: bytes) -> None:
    with serving(workspace) as (_, address):
        session = open_session(address)
        head = request_head(address, session, "Transfer-Encoding: chunked")
        _assert_too_large(*_answered_and_closed(address, head + sent))
        served_afterwards(address)


def test_a_chunked_body_up_to_the_cap_with_extensions_and_trailers_is_served(
    workspace: Path,
) -> None:
    with serving(workspace) as (_, address):
        session = open_session(address)
        body = f"{len(INIT):x};name=value\r\n".encode() + INIT + b"\r\n0\r\nX-T: y\r\n\r\n"
        head = request_head(address, session, "Transfer-Encoding: chunked")
        status, _, answer = exchange(address, head + body)
        assert status == 200, answer
        assert b'"id":1' in answer.replace(b" ", b"")


@pytest.mark.parametrize(("line", "status"), [(b"500000", 413), (b"F" * 21, 400)])
def test_a_chunk_size_line_not_yet_ended_is_decided_from_its_digits(
    workspace: Path, line: bytes, status: int
) -> None:
    with serving(workspace) as (_, address):
        session = open_session(address)
        # No CRLF after the digits, then nothing: what came already decides.
        head = request_head(address, session, "Transfer-Encoding: chunked")
        got, answer = _answered_and_closed(address, head + line)
        assert got == status, answer
        served_afterwards(address)


@pytest.mark.parametrize(
    ("method", "extra"), [("POST", "Expect: 100-continue"), ("GET", "Accept: text/event-stream")]
)
def test_a_content_length_over_the_cap_is_413_first_on_any_request(
    workspace: Path, method: str, extra: str
) -> None:
    with serving(workspace) as (_, address):
        session = open_session(address)
        head = request_head(address, session, f"Content-Length: {10**12}\r\n{extra}")
        # The first answer is the 413: no "100 Continue" invites the body first.
        _assert_too_large(
            *_answered_and_closed(address, head.replace(b"POST ", f"{method} ".encode(), 1))
        )
        served_afterwards(address)
