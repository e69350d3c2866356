"""Room for a new MCP HTTP session, and one shape for every refusal the SDK writes.

The SDK holds at most `MAX_SESSIONS` sessions and refused the next `initialize` for as
long as they lived (30 minutes idle each): a client that opens sessions and never ends
them (a buggy one, or any process of the user's) kept every new client out. So when the
table is full, a session with no call in flight is ended to make room, and its client
is told so on its next request (404, as a session ended any other way): the least
recently used of those never used past their handshake (what a leak or a flood of
sessions opens: one client's flood does not end another's working session), else the
least recently used. A session whose only open request is its event stream (GET) is
idle: readkeeper sends nothing on it, and the SDK allows one per session, so open
streams cannot hold the table either. No minimum idle time is kept: every client is the
user's own (own_user.py), an ended session loses nothing but its read-state (its next
edit without a read is `not_read`, never a blind write), and a minimum would let 256
sessions touched once a minute hold the door shut again. Calls in flight are capped at
32 (http_limits.py), below the 256 sessions, so some session is always idle; a new one
is refused (503 `too_large`, reason `busy`, retry) only if none is.

The SDK's own refusals (unknown session, wrong method or media type, missing session
id) carry no `kind` and a null id: each is rewritten here, with the request's id when its
body names one, a `kind`, and the call that works next (`refusal`).
"""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .http_body import replay

SESSION_HEADER = b"mcp-session-id"
# The JSON-RPC code of a refusal to retry (the SDK's own for its session limit was
# -32603, "internal": this is not a fault).
BUSY_CODE = -32000
_START = (
    "Start a session: POST an initialize request to /mcp with Content-Type: "
    "application/json and Accept: application/json, text/event-stream, then send the "
    "Mcp-Session-Id it answers with on each request."
)
ENDED = (
    "This session has ended (its client ended it, it was idle for 30 minutes, or it was "
    "the least recently used when the session table was full), so the call was not run. "
    "Start a new session with initialize and send the call there (read the files again "
    "before you edit them)."
)


def refusal(status: int, said: str) -> tuple[str, str, dict[str, Any]]:
    """The message, kind and data of the SDK's refusal `said` with HTTP `status`."""
    if status == 404:
        return ENDED, "bad_params", {"reason": "session_ended"}
    if status == 503:
        return busy_message(), "too_large", {"reason": "busy"}
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
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "error": error})


async def answer(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 503:
        headers.append((b"retry-after", b"1"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class SessionRoom:
    """ASGI middleware around the SDK's app: room for a new session at the cap, and the
    SDK's refusals in readkeeper's shape."""

    def __init__(self, app: ASGIApp, manager: Any) -> None:
        self.app = app
        self.manager = manager  # the SDK's StreamableHTTPSessionManager
        self.tick = itertools.count()
        self.used: dict[str, int] = {}  # session id -> when last used (a count, not a clock)
        self.calls: Counter[str] = Counter()  # requests in flight but event streams
        self.worked: set[str] = set()  # sessions that sent more than their handshake

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body = b""
        if scope["method"] == "POST":
            body = await _body(receive)
            receive = replay(body, receive)
        message = _parsed(body)
        call_id = _id_of(message)
        session = _session(scope)
        if session is None:
            if scope["method"] == "POST" and not await self._room():
                await answer(
                    send,
                    503,
                    error_body(503, busy_message(), "too_large", {"reason": "busy"}, call_id),
                )
                return
            await self.app(scope, receive, self._watch(send, call_id, opening=True))
            return
        counted = scope["method"] != "GET"
        if _works(message):
            self.worked.add(session)
        self.calls[session] += counted
        self.used[session] = next(self.tick)
        try:
            await self.app(scope, receive, self._watch(send, call_id, opening=False))
        finally:
            self.calls[session] -= counted
            if not self.calls[session]:
                del self.calls[session]
            if session in self._open():
                self.used[session] = next(self.tick)
            else:
                self.used.pop(session, None)
                self.worked.discard(session)

    def _open(self) -> dict[str, Any]:
        sessions: dict[str, Any] = self.manager._server_instances
        return sessions

    async def _room(self) -> bool:
        """Whether a new session may open: there is room, or the least recently used
        idle session was ended to make it."""
        limit = self.manager.max_sessions
        sessions = self._open()
        if limit is None or len(sessions) < limit:
            return True
        for gone in [s for s in self.used if s not in sessions]:
            del self.used[gone]
        self.worked &= self.used.keys()
        idle = [s for s in self.used if not self.calls.get(s)]
        if not idle:
            return False
        # One never used past its handshake goes first (what a leak or a flood opens).
        oldest = min(idle, key=lambda s: (s in self.worked, self.used[s]))
        del self.used[oldest]
        self.worked.discard(oldest)
        await self.manager._discard_session(oldest, sessions[oldest])
        return True

    def _watch(self, send: Send, call_id: Any, opening: bool) -> Send:
        held: list[Message] = []

        async def watched(message: Message) -> None:
            if message["type"] == "http.response.start":
                status = int(message["status"])
                if opening and status < 400:
                    for name, value in message.get("headers", []):
                        if name.lower() == SESSION_HEADER:
                            self.used[value.decode("latin-1")] = next(self.tick)
                if status >= 400 and _is_json(message):
                    held.append(message)
                    return
            elif held and message["type"] == "http.response.body":
                held.append(message)
                if message.get("more_body", False):
                    return
                await _rewritten(send, held, call_id)
                return
            await send(message)

        return watched


async def _rewritten(send: Send, held: list[Message], call_id: Any) -> None:
    """The SDK's held refusal, in readkeeper's shape when it has no `kind`."""
    start, parts = held[0], held[1:]
    body = b"".join(part.get("body", b"") for part in parts)
    status = int(start["status"])
    try:
        parsed = orjson.loads(body)
        error = parsed["error"]
        kind = (error.get("data") or {}).get("kind") if isinstance(error, dict) else None
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        parsed, kind = None, None
    if parsed is not None and kind is None:
        message, kind, data = refusal(status, str(error.get("message", "")))
        body = error_body(status, message, kind, data, call_id)
    await answer(send, status, body)


def _is_json(start: Message) -> bool:
    return any(
        name.lower() == b"content-type" and value.startswith(b"application/json")
        for name, value in start.get("headers", [])
    )


def _session(scope: Scope) -> str | None:
    for name, value in scope["headers"]:
        if name == SESSION_HEADER:
            return str(value.decode("latin-1"))
    return None


_HANDSHAKE = {"initialize", "notifications/initialized", "ping"}


def _parsed(body: bytes) -> Any:
    """The JSON `body` holds (parsed once a request), or None."""
    try:
        return orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        return None


def _works(parsed: Any) -> bool:
    """Whether the request holds a message past the handshake (a tool call, a list)."""
    messages = parsed if isinstance(parsed, list) else [parsed]
    return any(isinstance(m, dict) and m.get("method") not in _HANDSHAKE for m in messages)


def request_id(body: bytes) -> Any:
    """The id of the request `body` holds (one request, not a batch), or None."""
    return _id_of(_parsed(body))


def _id_of(parsed: Any) -> Any:
    if isinstance(parsed, dict) and isinstance(parsed.get("id"), (str, int)):
        return parsed["id"]
    return None


async def _body(receive: Receive) -> bytes:
    """The whole body (http_limits.py has read it and bounded it already)."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


__all__ = ["ENDED", "SessionRoom", "answer", "error_body", "refusal", "request_id"]
