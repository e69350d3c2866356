"""A bound on what HTTP clients can make `readkeeper mcp --http` hold at once.

uvicorn serves one request at a time per connection (a pipelined request waits, unread,
until the answer before it is written), so a client that stops reading stops that
connection. But connections are not bounded, and each request that waits for an
unread answer keeps its body (up to the SDK's 4 MiB), the parsed call and the answer
alive: fifty such connections took 600 MB. So the requests served at once are capped,
by count and by the bytes of their bodies; one over either is refused at once with a
503 whose JSON-RPC error says to read the earlier answers and retry (over the bytes,
before its body is read). A request is counted only once its body has wholly arrived:
a client that sends half a body and stops holds no place (32 such locked every other
client out); it waits under http_deadline.py's deadline instead. A GET (the session's
event stream, which readkeeper sends nothing on) holds nothing of the client's and is
not counted; the SDK caps the sessions it belongs to.

A body over the SDK's 4 MiB never fits, so it is never a 503 (a retry would get the
same answer for good): it is 413 `too_large` with `max_bytes`, decided from its
Content-Length before any of it is read, or, chunked, as soon as what came passes the
cap (the rest is never read); http_framing.py answers it first, from what the request
declares (its Content-Length, a chunk size line). A body longer than its
Content-Length is cut there by the HTTP parser: the rest is taken as the next request,
which it is not, and the connection is dropped.
"""

from __future__ import annotations

from typing import Any

from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from starlette.types import ASGIApp, Receive, Scope, Send

from . import malformed, unpaired
from .http_body import replay
from .http_cancels import too_large
from .http_deadline import Waiting
from .http_refusals import answer, error_body, request_id
from .line_cap import out_of_shape_answer

# Requests being served (running, or their answer waiting for its client).
MAX_IN_FLIGHT = 32
# The bytes of their bodies (a body is held until its answer is written).
MAX_BODY_BYTES_IN_FLIGHT = 64 << 20
# What a body without a Content-Length (chunked) is counted as: the SDK's own limit,
# past which any body is refused 413 too_large (http_cancels.too_large), never read whole.
UNDECLARED_BODY_BYTES = DEFAULT_MAX_REQUEST_BODY_SIZE


class InFlightLimit:
    """ASGI middleware: read each request whole, then count it among those in flight,
    refusing the one over the cap. A request counts only while its work runs or its
    answer waits: while it arrives it is the deadline's (http_deadline.py), which is
    told here when it is all in and when its answer is written."""

    def __init__(self, app: ASGIApp, waiting: Waiting | None = None) -> None:
        self.app = app
        self.waiting = waiting or Waiting()
        self.requests = 0
        self.body_bytes = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            await self._serve(scope, receive, send)
        finally:
            self.waiting.done(scope.get("client"))

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] == "GET":
            self.waiting.arrived(scope.get("client"))
            await self.app(scope, receive, send)
            return
        size = _declared_size(scope)
        if size > DEFAULT_MAX_REQUEST_BODY_SIZE:
            await too_large(send)  # never fits: said before its body is read
            return
        if self.body_bytes + size > MAX_BODY_BYTES_IN_FLIGHT:
            await _refuse(send, self.requests)
            return
        self.body_bytes += size
        try:
            body = await _whole_body(receive, size)
            if body is None:
                return  # the client went (or its deadline passed) before its body came
            if body is _OVER:
                await too_large(send)
                return
            self.waiting.arrived(scope.get("client"))
            # Before the SDK's parser, as on stdio: its id kept where one can be read.
            refused = out_of_shape_answer(body)
            if refused is None:
                body = unpaired.mend(body)  # a batch's bad entry is refused alone
                refused = unpaired.refusal(body) or malformed.refusal(body)
            if refused is not None:
                replies = refused.splitlines()  # a batch's: JSON-RPC's array of replies
                if len(replies) > 1:
                    refused = b"[" + b",".join(replies) + b"]"
                await answer(send, 400, refused)
                return
            if self.requests >= MAX_IN_FLIGHT:
                await _refuse(send, self.requests, request_id(body))
                return
            self.requests += 1
            try:
                await self.app(scope, replay(body, receive), send)
            finally:
                self.requests -= 1
        finally:
            self.body_bytes -= size


# What `_whole_body` gives for a body that went past `most` (a chunked one over the cap).
_OVER = b"<over>"


async def _whole_body(receive: Receive, most: int) -> bytes | None:
    """The request's body, once all of it has come; None if the connection ended
    first; `_OVER` as soon as more than `most` bytes came (a chunked body past the
    SDK's limit): the rest is never read."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > most:
            return _OVER
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _declared_size(scope: Scope) -> int:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return max(0, int(value))
            except ValueError:
                return UNDECLARED_BODY_BYTES  # the SDK refuses it; counted while it does
    return UNDECLARED_BODY_BYTES


async def _refuse(send: Send, serving: int, call_id: Any = None) -> None:
    message = (
        f"readkeeper is serving {serving} requests at once, over all clients (at most "
        f"{MAX_IN_FLIGHT}, with at most {MAX_BODY_BYTES_IN_FLIGHT >> 20} MB of request "
        "bodies; a request stays in flight until its answer is read). Send this one again "
        "in a moment, once an earlier one is answered."
    )
    data = {"reason": "busy", "max_in_flight": MAX_IN_FLIGHT}
    await answer(send, 503, error_body(503, message, "too_large", data, call_id))


__all__ = ["MAX_IN_FLIGHT", "InFlightLimit"]
