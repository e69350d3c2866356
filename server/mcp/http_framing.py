"""How a request's body is framed on `readkeeper mcp --http`: one reading, or none.

A framing two HTTP parsers could read two ways (a proxy in front and this server: how
requests are smuggled past one) is refused 400, saying what was wrong, and the
connection is closed, so nothing sent after it on the connection is taken as a request
(RFC 9112 6.3). h11 refuses two Content-Lengths that differ, one that is not a number,
a Transfer-Encoding other than one `chunked`, and a chunk size line that is not one;
readkeeper refuses too a request with both Content-Length and Transfer-Encoding, which
h11 reads as chunked (a client that meant the Content-Length was told its 150-byte
body was "over 4 MiB"). uvicorn answers h11's refusals with a bare "Invalid HTTP
request received."; here they say which header was wrong, as JSON-RPC `bad_params`,
with a null id: the answer is written before the body is read, and a body framed two
ways is never read (its two readings need not name the same id), as JSON-RPC has it
for a request whose id cannot be known. The message says so.

A body is over the SDK's 4 MiB as soon as what it declares says so, whatever the
method (a GET's too), before any of it is read and before `Expect: 100-continue` is
answered: what has come plus the rest of its Content-Length, or of the chunk being
read, or of a chunk size line not yet ended (its digits so far: more only make it
larger; past 20 it is no size line). That is 413 `too_large` at once and the
connection closed (a chunk declared 5 MiB, or 2^72 bytes, then nothing, got no answer,
only the deadline's close). What arrives is capped by http_limits.py besides.

This is uvicorn's own h11 protocol, its parser's events watched as they come.
"""

from __future__ import annotations

import re
from http import HTTPStatus
from typing import Any

import h11
from h11._connection import DEFAULT_MAX_INCOMPLETE_EVENT_SIZE  # as uvicorn's own
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from uvicorn.protocols.http.h11_impl import H11Protocol

from .. import quoting
from .http_cancels import too_large_answer

_BOTH = (
    "The request has both Content-Length and Transfer-Encoding, which can be read two "
    "ways (RFC 9112 6.3), so its body was not read (this answer names no id). Send one: "
    "Content-Length alone, or Transfer-Encoding: chunked alone."
)
# What each of h11's refusals of a request's framing says, by the start of its words.
_SAID = {
    "conflicting Content-Length": "The request has two Content-Length headers that differ. "
    "Send one Content-Length, the body's length in bytes.",
    "bad Content-Length": "The request's Content-Length is not a number of bytes (digits "
    "only). Send the body's length in bytes.",
    "Only Transfer-Encoding": "readkeeper reads only Transfer-Encoding: chunked. Send the "
    "body unencoded, with a Content-Length or as chunked.",
    "multiple Transfer-Encoding": "The request has more than one Transfer-Encoding header. "
    "Send one: Transfer-Encoding: chunked.",
    "illegal chunk header": "A chunk size line of the chunked body is not one (at most 20 "
    "hex digits, then CRLF). Send the body with a Content-Length, or chunked correctly.",
    "Receive buffer too long": "A part of the request (its head, a chunk size line with "
    "its extensions, or the trailers) is over 16 KiB. Send a shorter one.",
    "malformed chunk footer": "A chunk of the chunked body is not followed by CRLF where "
    "its size says it ends. Send the body with a Content-Length, or chunked correctly.",
    "Missing mandatory Host": "The request has no Host header, which HTTP/1.1 requires. "
    "Send it with the header Host: 127.0.0.1:PORT (the server's address and port).",
    "Found multiple Host": "The request has more than one Host header. Send one: Host: "
    "127.0.0.1:PORT (the server's address and port).",
}
# Every refusal here is written before the body is read: said, since its id is unknown.
_NO_ID = "Its body was not read, so this answer names no id."
_ELSE = (
    "The request is not valid HTTP/1.1 (its request line, headers or body framing). "
    "Send it as an MCP client does: POST with a JSON body and a Content-Length."
)


class _Over(h11.RemoteProtocolError):
    """A body declared (its Content-Length, a chunk size line) over the SDK's limit."""


class _Watched(h11.Connection):
    """h11's server side, refusing what readkeeper reads no one way and keeping why."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.refused: h11.RemoteProtocolError | None = None
        self.body_bytes = 0

    def next_event(self) -> Any:
        try:
            event = super().next_event()
            if isinstance(event, h11.Request):
                self.body_bytes = 0
                names = {name.lower() for name, _ in event.headers}
                if b"content-length" in names and b"transfer-encoding" in names:
                    raise h11.RemoteProtocolError(_BOTH)
            elif isinstance(event, h11.Data):
                self.body_bytes += len(event.data)
            if self.body_bytes + self._declared(event) > DEFAULT_MAX_REQUEST_BODY_SIZE:
                raise _Over("over the cap")
        except h11.RemoteProtocolError as exc:
            self.refused = exc
            raise
        return event

    def _declared(self, event: Any) -> int:
        """What the body being read declares and has not yet sent: the rest of its
        Content-Length, or of the chunk being read, or of the chunk whose size line has
        begun to come (its digits so far: more only make it larger); 0 when none."""
        if self.their_state is not h11.SEND_BODY:
            return 0
        # h11's readers keep what they were told is still to come.
        reader = self._reader
        rest = getattr(reader, "_remaining", None)
        if rest is None:
            rest = getattr(reader, "_bytes_in_chunk", 0)
            if rest == 0 and event is h11.NEED_DATA and _at_size_line(reader):
                # Waiting for a size line's end: what came of it is all that is held.
                digits = _HEX.match(self.trailing_data[0][: _MOST_DIGITS + 1])
                if digits is not None and len(digits[0]) > _MOST_DIGITS:
                    raise h11.RemoteProtocolError("illegal chunk header")
                rest = int(digits[0], 16) if digits is not None else 0
        return rest if isinstance(rest, int) else 0


# A chunk size line's hex digits, as many as h11 reads (it refuses a longer one).
_HEX = re.compile(rb"[0-9A-Fa-f]+")
_MOST_DIGITS = 20


def _at_size_line(reader: Any) -> bool:
    return not getattr(reader, "_bytes_to_discard", b"") and not getattr(
        reader, "_reading_trailer", True
    )


class FramedH11(H11Protocol):
    """uvicorn's h11 protocol with readkeeper's framing rules and refusals that say why."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        size = self.config.h11_max_incomplete_event_size
        self.conn = _Watched(
            h11.SERVER, size if size is not None else DEFAULT_MAX_INCOMPLETE_EVENT_SIZE
        )

    def send_400_response(self, msg: str) -> None:
        refused = self.conn.refused if isinstance(self.conn, _Watched) else None
        if refused is None:
            status, error = 400, _bad(msg)
        elif isinstance(refused, _Over):
            status, error = 413, too_large_answer()
        else:
            status, error = 400, _bad(_said(str(refused)))
        if status == 400 and "names no id" not in error["message"]:
            error["message"] += f" {_NO_ID}"
        body = quoting.json_text({"jsonrpc": "2.0", "id": None, "error": error}).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        try:
            self.transport.write(
                self.conn.send(
                    h11.Response(
                        status_code=status, headers=headers, reason=HTTPStatus(status).phrase
                    )
                )
            )
            self.transport.write(self.conn.send(h11.Data(data=body)))
            self.transport.write(self.conn.send(h11.EndOfMessage()))
        except h11.LocalProtocolError:
            pass  # an answer was begun already (a GET's stream): the close alone says it
        self.transport.close()
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            # The app waiting for this body is told the client went (as uvicorn does
            # once the close is done), so it answers nothing on the closed connection.
            cycle.disconnected = True
            cycle.message_event.set()


def _said(reason: str) -> str:
    if reason == _BOTH:
        return reason
    return next((said for start, said in _SAID.items() if reason.startswith(start)), _ELSE)


def _bad(message: str) -> dict[str, Any]:
    return {"code": -32600, "message": message, "data": {"kind": "bad_params"}}


__all__ = ["FramedH11"]
