"""`notifications/cancelled` over HTTP names no request by the time the SDK reads it.

The SDK's dispatcher, given a cancel for a call in flight, cancels the call's task and
drops its answer, and its 2025-era HTTP transport then answers "Request cancelled"
(-32800); but the call's work (a write, an edit, a move) runs on a worker thread that
a cancel cannot stop, so the file changed and the client was told it did not. As over
stdio (stdio.py) and LSP (lsp/cancels.py), every call is answered with what it did:
MCP lets a server ignore a cancel it cannot honour.

The rule is applied to every POST body before the SDK parses it, with the SDK's own
parser (so a body it would read, this step reads the same way): each cancel, alone
or in a batch, keeps its method and reason but loses its `requestId`. The SDK still
sees a valid notification and does its own session handling (headers, 202, 404); it
just has nothing to cancel. A body over the SDK's size limit is refused here, as the
SDK would refuse it, so no body reaches the SDK unread.

Ending a session (DELETE) is the same kind of cancel: the SDK closes the streams of the
session's calls in flight, and a call whose work ran on was answered 500 "Session
terminated" (or not at all) though the file changed. So a session's DELETE is held
until every call it has in flight is answered (each runs to its end, as above), and a
call sent to the session while its DELETE waits is refused as the SDK refuses a call
to an ended session (404): it is not done. The wait is bounded (`MAX_END_WAIT`): a call
can wait for the client (its roots), and a client that ends its session may never
answer; readkeeper's own steps each end well within it (every unbounded one runs
under a deadline).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pydantic_core
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from starlette.types import ASGIApp, Receive, Scope, Send

from .http_body import replay
from .http_refusals import answer, error_body, request_id

CANCELLED = "notifications/cancelled"
SESSION_HEADER = b"mcp-session-id"
# How long a session's DELETE waits for the calls it has in flight (seconds).
MAX_END_WAIT = 60.0


class KeepCancels:
    """ASGI middleware: read each POST body, take the request out of its cancels; hold
    a session's DELETE until its calls in flight are answered."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.calls: dict[bytes, int] = {}  # calls in flight, by session id
        self.ending: dict[bytes, anyio.Event] = {}  # sessions whose DELETE waits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("POST", "DELETE"):
            await self.app(scope, receive, send)
            return
        session = _session(scope)
        if scope["method"] == "DELETE":
            await self._end(session, scope, receive, send)
            return
        body = await _body(receive)
        if body is None:
            await too_large(send)
            return
        kept, asks = _examine(body)
        if kept is not body:
            headers = [(k, v) for k, v in scope["headers"] if k != b"content-length"]
            headers.append((b"content-length", str(len(kept)).encode()))
            scope = {**scope, "headers": headers}
        if not asks or not session:
            await self.app(scope, replay(kept, receive), send)
            return
        if session in self.ending:
            await _ended(send, request_id(body))
            return
        self.calls[session] = self.calls.get(session, 0) + 1
        try:
            await self.app(scope, replay(kept, receive), send)
        finally:
            self.calls[session] -= 1
            if not self.calls[session]:
                del self.calls[session]
                if session in self.ending:
                    self.ending[session].set()

    async def _end(self, session: bytes, scope: Scope, receive: Receive, send: Send) -> None:
        """The DELETE, once the session's calls in flight are answered."""
        if session and self.calls.get(session) and session not in self.ending:
            answered = self.ending[session] = anyio.Event()
            try:
                with anyio.move_on_after(MAX_END_WAIT):
                    await answered.wait()
            finally:
                del self.ending[session]
        await self.app(scope, receive, send)


def without_cancels(body: bytes) -> bytes:
    """`body` with every cancel's `requestId` taken out; `body` itself when it has none
    (or is not JSON the SDK can read: the SDK refuses it)."""
    return _examine(body)[0]


def _examine(body: bytes) -> tuple[bytes, bool]:
    """`without_cancels(body)`, and whether `body` holds a request (a method and an id,
    alone or in a batch): what the SDK answers on this POST's own stream."""
    try:
        parsed = pydantic_core.from_json(body)
    except ValueError:
        return body, False
    messages = parsed if isinstance(parsed, list) else [parsed]
    found = asks = False
    for message in messages:
        if not isinstance(message, dict):
            continue
        asks = asks or ("method" in message and "id" in message)
        if message.get("method") == CANCELLED:
            params = message.get("params")
            reason = params.get("reason") if isinstance(params, dict) else None
            message["params"] = {"reason": reason} if isinstance(reason, str) else {}
            found = True
    if not found:
        return body, asks
    # json, not orjson: what pydantic_core reads (NaN, huge integers) json writes back
    # as the SDK will read it.
    return json.dumps(parsed).encode(), asks


def _session(scope: Scope) -> bytes:
    for name, value in scope["headers"]:
        if name == SESSION_HEADER:
            return bytes(value)
    return b""


async def _ended(send: Send, call_id: Any) -> None:
    """As a call to an ended session is refused (http_sessions.py): it is not run."""
    message = (
        "This session is being ended (DELETE), so the call was not run. "
        "Start a new session with initialize and send it there."
    )
    data = {"reason": "session_ended"}
    await answer(send, 404, error_body(404, message, "bad_params", data, call_id))


async def _body(receive: Receive) -> bytes | None:
    """The whole body; None once it passes the SDK's limit (what it would refuse)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break  # the client left: the SDK finds that out on its own
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > DEFAULT_MAX_REQUEST_BODY_SIZE:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


async def too_large(send: Send) -> None:
    """The 413 for a body over the SDK's limit: it can never fit, so not worth a retry."""
    await _send_json(send, 413, {"jsonrpc": "2.0", "id": None, "error": too_large_answer()})


def too_large_answer() -> dict[str, Any]:
    """The JSON-RPC error of that 413 (http_framing.py's for a chunk declared over it)."""
    limit = DEFAULT_MAX_REQUEST_BODY_SIZE >> 20
    return {
        "code": -32600,
        "message": f"The request body is over {limit} MiB, which readkeeper does not read. "
        "Send a smaller request (read_many in parts, a large write as several edits).",
        "data": {"kind": "too_large", "max_bytes": DEFAULT_MAX_REQUEST_BODY_SIZE},
    }


async def _send_json(send: Send, status: int, message: dict[str, Any]) -> None:
    body = json.dumps(message).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


__all__ = ["KeepCancels", "too_large", "too_large_answer", "without_cancels"]
