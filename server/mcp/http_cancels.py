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
"""

from __future__ import annotations

import json
from typing import Any

import pydantic_core
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CANCELLED = "notifications/cancelled"


class KeepCancels:
    """ASGI middleware: read each POST body, take the request out of its cancels."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = await _body(receive)
        if body is None:
            await _too_large(send)
            return
        kept = without_cancels(body)
        if kept is not body:
            headers = [(k, v) for k, v in scope["headers"] if k != b"content-length"]
            headers.append((b"content-length", str(len(kept)).encode()))
            scope = {**scope, "headers": headers}
        await self.app(scope, _replay(kept, receive), send)


def without_cancels(body: bytes) -> bytes:
    """`body` with every cancel's `requestId` taken out; `body` itself when it has none
    (or is not JSON the SDK can read: the SDK refuses it)."""
    try:
        parsed = pydantic_core.from_json(body)
    except ValueError:
        return body
    messages = parsed if isinstance(parsed, list) else [parsed]
    found = False
    for message in messages:
        if isinstance(message, dict) and message.get("method") == CANCELLED:
            params = message.get("params")
            reason = params.get("reason") if isinstance(params, dict) else None
            message["params"] = {"reason": reason} if isinstance(reason, str) else {}
            found = True
    if not found:
        return body
    # json, not orjson: what pydantic_core reads (NaN, huge integers) json writes back
    # as the SDK will read it.
    return json.dumps(parsed).encode()


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


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive that gives `body` once, then what the client sends next (a disconnect)."""
    given = False

    async def again() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        message: Any = await receive()
        return message  # type: ignore[no-any-return]

    return again


async def _too_large(send: Send) -> None:
    limit = DEFAULT_MAX_REQUEST_BODY_SIZE >> 20
    error = {
        "code": -32600,
        "message": f"The request body is over {limit} MiB, which readkeeper does not read. "
        "Send a smaller request (read_many in parts, a large write as several edits).",
        "data": {"kind": "too_large", "max_bytes": DEFAULT_MAX_REQUEST_BODY_SIZE},
    }
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": body})


__all__ = ["KeepCancels", "without_cancels"]
