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
Host or Origin, missing session id, unknown path) are rewritten in readkeeper's shape
(http_refusals.py).
"""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .http_body import replay
from .http_refusals import answer, busy_message, door, error_body, id_of, parsed, refusal, rewritten

SESSION_HEADER = b"mcp-session-id"
# A session never used past its handshake is ended before a working one only once this
# many sessions were opened after it (above the newcomers that arrive together).
YOUNG = 32


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
        if scope["method"] != "GET":  # any body (bounded by http_limits.py): its id is
            body = await _body(receive)  # named in a refusal whatever the method
            receive = replay(body, receive)
        message = parsed(body)
        call_id = id_of(message)
        if [name for name, _ in scope["headers"]].count(b"origin") > 1:
            # The SDK checks the first only: a web page's after a good one was served.
            said, kind, data = refusal(403, "Invalid Origin header (more than one)", door(scope))
            await answer(send, 403, error_body(403, said, kind, data, call_id))
            return
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
        call_id = id_of(message)
        initialize = scope["method"] == "POST" and _initialize(message)
        await self.opening.acquire()
        held = [True]

        def release() -> None:
            if held:
                held.clear()
                self.manager.max_sessions = self.limit
                self.opening.release()

        opening = Opening(release)

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
            await self.app(scope, receive, self._watch_opening(send, call_id, scope, opening))
            await opening.flush()  # an answer the SDK ended without a body
        finally:
            try:
                # The SDK keeps a session whose initialize it answered with an error:
                # no client can use it (its answer named none), so it goes.
                failed = opening.failed_session
                transport = self._open().get(failed) if failed is not None else None
                if failed is not None and transport is not None:
                    await self.manager._discard_session(failed, transport)
            finally:
                release()

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

    def _watch(self, send: Send, call_id: Any, scope: Scope) -> Send:
        """`send`, the SDK's refusals rewritten."""
        held: list[Message] = []

        async def watched(message: Message) -> None:
            if message["type"] == "http.response.start" and int(message["status"]) >= 400:
                held.append(message)
                return
            if held and message["type"] == "http.response.body":
                held.append(message)
                if message.get("more_body", False):
                    return
                await rewritten(send, held, call_id, door(scope))
                return
            await send(message)

        return watched

    def _watch_opening(self, send: Send, call_id: Any, scope: Scope, opening: Opening) -> Send:
        """`send` for a request that may open a session (`_watch`): an answer that opens
        one is held until its first message says whether the initialize succeeded. If
        so, the session is recorded and room made (an idle session ended at the cap)
        before it goes out; if not, the answer goes out naming no session, and the
        session the SDK kept is ended after it. The opening's turn ends then."""
        inner = opening.send = self._watch(send, call_id, scope)

        async def settle(succeeded: bool) -> None:
            assert opening.start is not None
            assert opening.session is not None
            if succeeded:
                self._record(opening.session)
                await self._make_room(opening.session)
                opening.release()
            else:
                opening.failed_session = opening.session
                headers = opening.start.get("headers", [])
                opening.start["headers"] = [h for h in headers if h[0].lower() != SESSION_HEADER]

        async def watched(message: Message) -> None:
            if opening.out:
                await inner(message)
                return
            if message["type"] == "http.response.start":
                session = _session_of(message) if int(message["status"]) < 400 else None
                if session is None:
                    opening.out = True
                    opening.release()
                    await inner(message)
                    return
                opening.start, opening.session = dict(message), session
                return
            opening.heard(message)
            outcome = opening.outcome(call_id)
            if outcome is None and message.get("more_body", False) and not opening.full():
                return
            await settle(outcome is not False)
            await opening.flush()

        opening.settle = settle
        return watched

    def _record(self, session: str) -> None:
        """`session`, just opened, recorded as used."""
        self.used[session] = next(self.tick)
        self.opened[session] = self.openings
        self.openings += 1


def _session_of(start: Message) -> str | None:
    """The session an answer's `start` names, if any."""
    for name, value in start.get("headers", []):
        if name.lower() == SESSION_HEADER:
            return str(value.decode("latin-1"))
    return None


class Opening:
    """An initialize's answer from the SDK, held until it says whether it succeeded."""

    # Enough for an initialize's answer (or its error), which is well under 4 KB.
    KEPT = 16_384

    def __init__(self, release: Callable[[], None]) -> None:
        self.release = release  # ends the opening's turn
        self.settle: Callable[[bool], Awaitable[None]] | None = None
        self.session: str | None = None  # the session the SDK's answer names
        self.failed_session: str | None = None  # that session, its initialize failed
        self.start: Message | None = None
        self.bodies: list[Message] = []
        self.send: Send | None = None  # where the answer goes
        self.out = False  # whether it was let out

    def heard(self, message: Message) -> None:
        self.bodies.append(message)

    def full(self) -> bool:
        return sum(len(m.get("body", b"")) for m in self.bodies) >= self.KEPT

    def outcome(self, call_id: Any) -> bool | None:
        """True if the answer held so far (JSON, or server-sent events) is a result to
        `call_id`, False if an error, None if it does not say yet."""
        text = b"".join(m.get("body", b"") for m in self.bodies)
        lines = [line[5:] for line in text.splitlines() if line.startswith(b"data:")]
        for chunk in lines or [text]:
            answer = parsed(chunk.strip())
            if isinstance(answer, dict) and answer.get("id") == call_id:
                return "error" not in answer
        return None

    async def flush(self) -> None:
        """The held answer let out (settled as a success if nothing said otherwise)."""
        if self.start is None or self.out:
            return
        if self.failed_session is None and self.settle is not None:
            await self.settle(True)
        self.out = True
        assert self.send is not None
        await self.send(self.start)
        for body in self.bodies:
            await self.send(body)


def _session(scope: Scope) -> str | None:
    for name, value in scope["headers"]:
        if name == SESSION_HEADER:
            return str(value.decode("latin-1"))
    return None


_HANDSHAKE = {"initialize", "notifications/initialized", "ping"}


def _initialize(parsed: Any) -> bool:
    return isinstance(parsed, dict) and parsed.get("method") == "initialize"


def _works(parsed: Any) -> bool:
    """Whether the request holds a message past the handshake (a tool call, a list)."""
    messages = parsed if isinstance(parsed, list) else [parsed]
    return any(isinstance(m, dict) and m.get("method") not in _HANDSHAKE for m in messages)


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


__all__ = ["SessionRoom"]
