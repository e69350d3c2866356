"""The shape of every refusal of the MCP HTTP door: JSON-RPC, with the request's id when
its body names one, a `kind`, and the call that works next (the SDK's and starlette's own
carry no `kind` and a null id, and some are plain text: http_sessions.py rewrites them
with `rewritten`)."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.types import Message, Scope, Send

from .. import quoting

# The JSON-RPC code of a refusal to retry (the SDK's own for its session limit was
# -32603, "internal": this is not a fault).
BUSY_CODE = -32000
_START = (
    "Start a session: POST an initialize request to /mcp with Content-Type: "
    "application/json and Accept: application/json, text/event-stream, then send the "
    "Mcp-Session-Id it answers with on each request."
)
ENDED = (
    "This session is not open (its client ended it, it was idle for 30 minutes, it was "
    "the least recently used when the session table was full, or this server never "
    "opened it), so the call was not run. "
    "Start a new session with initialize and send the call there (read the files again "
    "before you edit them)."
)


def refusal(status: int, said: str, door: str = "127.0.0.1") -> tuple[str, str, dict[str, Any]]:
    """The message, kind and data of the refusal `said` with HTTP `status` by the SDK or
    starlette, on the server at `door` (its host:port)."""
    if status == 404 and said == "Session not found":
        return ENDED, "bad_params", {"reason": "session_ended"}
    if status == 404:
        return f"{said.rstrip('.')}: readkeeper serves only /mcp. {_START}", "bad_params", {}
    if status == 421:
        message = (
            f"{said.rstrip('.')}: readkeeper answers only requests sent to it as {door} "
            f"(or localhost:{door.rpartition(':')[2]}). "
            f"Send the request to http://{door}/mcp with the header Host: {door}."
        )
        return message, "bad_params", {}
    if status == 403:
        message = (
            f"{said.rstrip('.')}: readkeeper answers no request from a web page. Send the "
            f"request without an Origin header, as an MCP client does, or Origin: http://{door}."
        )
        return message, "bad_params", {}
    if status == 503:
        message = (
            "readkeeper holds as many MCP sessions as it serves and could not end one to "
            "make room for this one. Send initialize again."
        )
        return message, "too_large", {"reason": "busy"}
    if status == 413:
        return f"{said} Send a smaller request.", "too_large", {}
    if status >= 500:
        return f"{said} (a fault of readkeeper's). Send the request again.", "internal", {}
    return f"{said.rstrip('.')}. {_START}", "bad_params", {}


def busy_message() -> str:
    return (
        "readkeeper holds as many MCP sessions as it serves, each with a call in flight. "
        "Wait for an answer to come back, then send initialize again."
    )


def error_body(
    status: int, message: str, kind: str, data: dict[str, Any], request_id: Any
) -> bytes:
    code = BUSY_CODE if status == 503 else -32603 if status >= 500 else -32600
    error = {"code": code, "message": message, "data": {"kind": kind, **data}}
    # quoting.json_text: an id or a message naming a client's text leaves nothing raw.
    return quoting.json_text({"jsonrpc": "2.0", "id": request_id, "error": error}).encode()


async def answer(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 503:
        headers.append((b"retry-after", b"1"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def rewritten(send: Send, held: list[Message], call_id: Any, door: str) -> None:
    """A held refusal, in readkeeper's shape when it has no `kind` (or is not JSON)."""
    start, parts = held[0], held[1:]
    body = b"".join(part.get("body", b"") for part in parts)
    status = int(start["status"])
    try:
        error = orjson.loads(body)["error"]
        kind = (error.get("data") or {}).get("kind")
        said = str(error.get("message", ""))
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        kind, said = None, body[:200].decode("utf-8", "replace").strip()
    if kind is None:
        message, kind, data = refusal(status, said, door)
        body = error_body(status, message, kind, data, call_id)
    await answer(send, status, body)


def door(scope: Scope) -> str:
    """The host:port the server listens on."""
    server = scope.get("server") or ("127.0.0.1", None)
    return f"{server[0]}:{server[1]}" if server[1] else str(server[0])


def parsed(body: bytes) -> Any:
    """The JSON `body` holds (parsed once a request), or None."""
    try:
        return orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        return None


def request_id(body: bytes) -> Any:
    """The id of the request `body` holds (one request, not a batch), or None."""
    return id_of(parsed(body))


def id_of(parsed: Any) -> Any:
    if isinstance(parsed, dict) and isinstance(parsed.get("id"), (str, int)):
        return parsed["id"]
    return None


__all__ = [
    "ENDED",
    "answer",
    "busy_message",
    "door",
    "error_body",
    "id_of",
    "parsed",
    "refusal",
    "request_id",
    "rewritten",
]
