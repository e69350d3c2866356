"""Room for a new MCP HTTP session, and one shape for every refusal the SDK writes.

The SDK holds at most `MAX_SESSIONS` sessions and refused the next `initialize` for as
long as they lived (30 minutes idle each): a client that opens sessions and never ends
them (a buggy one, or any process of the user's) kept every new client out. So when the
table is full, a session with no call in flight is ended to make room, and its client
is told so on its next request (404, as a session ended any other way), in this order:
the least recently used of those never used past their handshake and no longer young
(what a leak or a flood of sessions opens: one client's flood does not end another's
working session), else the least recently used that worked, else a young one. A
session is young until `YOUNG` sessions were opened after it (a count, no clock): a new
client's session is not ended by the next newcomers before its first call (attack
round 22: of 24 newcomers 12 at a time, 19 lost their session so or were refused).
Room is made only for an initialize the SDK admitted: at the cap the SDK may open one
session over it, and once it answers that initialize with success an idle session is
ended, before the answer goes out; an initialize it refuses (a wrong Host, Origin,
media type or body) ends none, and a call without its session id opens nothing (at the
cap it is refused 400 as with room). Openings take turns under one lock (`opening`),
held until the SDK answers the opening request: room made for one newcomer is not taken
by another, whose initialize the SDK then refused as over its count (it was told
"busy", which was not true).
A session whose only open request is its event stream (GET) is idle: readkeeper sends
nothing on it, and the SDK allows one per session, so open streams cannot hold the
table either. No minimum idle time is kept: every client is the
user's own (own_user.py), an ended session loses nothing but its read-state (its next
edit without a read is `not_read`, never a blind write), and a minimum would let 256
sessions touched once a minute hold the door shut again. Calls in flight are capped at
32 (http_limits.py), below the 256 sessions, so some session is always idle; a new one
is refused (503 `too_large`, reason `busy`, retry) only if none is.

The refusals of the SDK and of starlette (unknown session, wrong method, media type,
Host or Origin, missing session id, unknown path) carry no `kind` and a null id, and
some are plain text: each is rewritten here as JSON-RPC, with the request's id when its
body names one, a `kind`, and the call that works next (`refusal`).
"""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from collections.abc import Callable
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .. import quoting
from .http_body import replay

SESSION_HEADER = b"mcp-session-id"
# A session never used past its handshake is ended before a working one only once this
# many sessions were opened after it (above the newcomers that arrive together).
YOUNG = 32
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


def refusal(status: int, said: str, door: str = "127.0.0.1") -> tuple[str, str, dict[str, Any]]:
    """The message, kind and data of the refusal `said` with HTTP `status` by the SDK or
    starlette, on the server at `door` (its host:port)."""
    if status == 404 and said == "Session not found":
        return ENDED, "bad_params", {"reason": "session_ended"}
    if status == 404:
        return f"{said.rstrip('.')}: readkeeper serves only /mcp. {_START}", "bad_params", {}
    if status == 421:
        message = (
            f"{said.rstrip('.')}: readkeeper answers only requests sent to it as {door}. "
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


class SessionRoom:
    """ASGI middleware around the SDK's app: room for a new session at the cap, and the
    SDK's refusals in readkeeper's shape."""

    def __init__(self, app: ASGIApp, manager: Any) -> None:
        self.app = app
        self.manager = manager  # the SDK's StreamableHTTPSessionManager
        self.limit: int | None = manager.max_sessions
        self.tick = itertools.count()
        self.used: dict[str, int] = {}  # session id -> when last used (a count, not a clock)
        self.calls: Counter[str] = Counter()  # requests in flight but event streams
        self.worked: set[str] = set()  # sessions that sent more than their handshake
        self.opened: dict[str, int] = {}  # session id -> how many were opened before it
        self.openings = 0
        # Held from before room is made until the SDK answers the opening request.
        self.opening = asyncio.Lock()

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
            await self._opening(scope, receive, send, message)
            return
        counted = scope["method"] != "GET"
        if _works(message):
            self.worked.add(session)
        self.calls[session] += counted
        self.used[session] = next(self.tick)
        try:
            await self.app(scope, receive, self._watch(send, call_id, scope))
        finally:
            self.calls[session] -= counted
            if not self.calls[session]:
                del self.calls[session]
            if session in self._open():
                self.used[session] = next(self.tick)
            else:
                self._forget(session)

    async def _opening(self, scope: Scope, receive: Receive, send: Send, message: Any) -> None:
        """A request without a session (what opens one): the SDK's admission under
        `opening`, released once the SDK answers (or never does). Only an initialize
        opens a session: room is never made for another request (a call without its
        session id ended an idle session, then was refused 400)."""
        call_id = _id_of(message)
        initialize = scope["method"] == "POST" and _initialize(message)
        opening = Opening()
        await self.opening.acquire()
        held = [True]

        def release() -> None:
            if held:
                held.clear()
                self.manager.max_sessions = self.limit
                self.opening.release()

        try:
            if not initialize and self._full():
                release()  # what the SDK says with room (at the cap it said 503)
                said, kind, data = refusal(400, "Bad Request: Missing session ID")
                await answer(send, 400, error_body(400, said, kind, data, call_id))
                return
            if initialize and self._full() and not self._idle():
                release()
                body = error_body(503, busy_message(), "too_large", {"reason": "busy"}, call_id)
                await answer(send, 503, body)
                return
            # The SDK may admit one over the cap; a session is ended for the newcomer
            # only once the SDK has answered its initialize with success: one it
            # refuses (a wrong Host, Origin, media type or params) ends none.
            if self._full():
                self.manager.max_sessions = len(self._open()) + 1
            opening = Opening()
            await self.app(scope, receive, self._watch(send, call_id, scope, release, opening))
        finally:
            release()
        if opening.session is None:
            return
        if opening.failed(call_id):
            # The SDK keeps a session whose initialize it answered with an error: no
            # client can use it, so it goes, not a working one in its place.
            self._forget(opening.session)
            transport = self._open().get(opening.session)
            if transport is not None:
                await self.manager._discard_session(opening.session, transport)
            return
        await self._make_room(opening.session)

    def _forget(self, session: str) -> None:
        self.used.pop(session, None)
        self.worked.discard(session)
        self.opened.pop(session, None)

    def _open(self) -> dict[str, Any]:
        sessions: dict[str, Any] = self.manager._server_instances
        return sessions

    def _full(self) -> bool:
        return self.limit is not None and len(self._open()) >= self.limit

    def _idle(self) -> list[str]:
        """The sessions open with no call in flight."""
        sessions = self._open()
        for gone in [s for s in self.used if s not in sessions]:
            self._forget(gone)
        return [s for s in self.used if not self.calls.get(s)]

    async def _make_room(self, newcomer: str) -> None:
        """End idle sessions (never `newcomer`) until the table is back within its cap."""
        sessions = self._open()
        while self.limit is not None and len(sessions) > self.limit:
            idle = [s for s in self._idle() if s != newcomer]
            if not idle:
                return  # every other session busy: one over, until one ends
            oldest = min(idle, key=lambda s: (self._rank(s), self.used[s]))
            self._forget(oldest)
            await self.manager._discard_session(oldest, sessions[oldest])

    def _rank(self, session: str) -> int:
        """Which idle sessions go first: 0, those never used past their handshake and no
        longer young (what a leak or a flood opens); 1, those that worked; 2, young ones."""
        if session in self.worked:
            return 1
        young = self.openings - self.opened.get(session, 0) <= YOUNG
        return 2 if young else 0

    def _watch(
        self,
        send: Send,
        call_id: Any,
        scope: Scope,
        opened: Callable[[], None] | None = None,
        opening: Opening | None = None,
    ) -> Send:
        """`send`, the SDK's refusals rewritten; a session it opens recorded in
        `opening` with the start of its answer, and then `opened` called."""
        held: list[Message] = []

        async def watched(message: Message) -> None:
            if message["type"] == "http.response.start":
                status = int(message["status"])
                if opened is not None:
                    if status < 400 and opening is not None:
                        opening.session = self._record(message)
                    opened()
                if status >= 400:
                    held.append(message)
                    return
            elif opening is not None and opening.session is not None:
                opening.heard(message)
            elif held and message["type"] == "http.response.body":
                held.append(message)
                if message.get("more_body", False):
                    return
                await _rewritten(send, held, call_id, _door(scope))
                return
            await send(message)

        return watched

    def _record(self, start: Message) -> str | None:
        """The session the SDK's answer `start` opens (recorded as used), if any."""
        for name, value in start.get("headers", []):
            if name.lower() == SESSION_HEADER:
                session = str(value.decode("latin-1"))
                self.used[session] = next(self.tick)
                self.opened[session] = self.openings
                self.openings += 1
                return session
        return None


class Opening:
    """The session an initialize opened, and the start of the SDK's answer to it."""

    # Enough for an initialize's answer (or its error), which is well under 4 KB.
    KEPT = 16_384

    def __init__(self) -> None:
        self.session: str | None = None
        self.said = bytearray()

    def heard(self, message: Message) -> None:
        if message["type"] == "http.response.body" and len(self.said) < self.KEPT:
            self.said += message.get("body", b"")[: self.KEPT - len(self.said)]

    def failed(self, call_id: Any) -> bool:
        """Whether the answer (JSON, or server-sent events) is an error to `call_id`."""
        text = bytes(self.said)
        lines = [line[5:] for line in text.splitlines() if line.startswith(b"data:")]
        for chunk in lines or [text]:
            answer = _parsed(chunk.strip())
            if isinstance(answer, dict) and answer.get("id") == call_id and "error" in answer:
                return True
        return False


async def _rewritten(send: Send, held: list[Message], call_id: Any, door: str) -> None:
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


def _door(scope: Scope) -> str:
    """The host:port the server listens on."""
    server = scope.get("server") or ("127.0.0.1", None)
    return f"{server[0]}:{server[1]}" if server[1] else str(server[0])


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


def _initialize(parsed: Any) -> bool:
    return isinstance(parsed, dict) and parsed.get("method") == "initialize"


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
