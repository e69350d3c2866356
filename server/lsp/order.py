"""A `readkeeper/forget` covers every call of its session the client sent before it.

The agent sends forget when it no longer holds what it read (a compaction, a rewind):
everything it asked before the forget is meant. But over LSP a grep or a read runs on
the thread pool, and records what it showed when it ends (a grep only after its answer,
state/later.py), while a forget is served on the event loop as it comes: pipelined
right behind a grep it ran first, said `forgotten: 0`, and the grep's lines were then
recorded as seen, so an edit of them went through for an agent holding nothing.

So, by the order the requests were received (the stream reader hands them here one by
one): a forget whose session has calls received before it still unanswered waits until
they are answered (their answers' left work is then settled by the forget itself, as
every call settles its session first); and while it waits, the session's later
requests wait behind it, in order, so none sees the state the forget is about to drop.
Other sessions are not held. Nothing waits on the client's own answers (an applyEdit's
reply is a response, never held), so a held forget always comes due.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

FORGET = "readkeeper/forget"


class SessionOrder:
    """The readkeeper/* requests in flight by session, in the order received, and the
    requests held behind a waiting forget."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # answers may be written from worker threads
        self._calls: dict[str, dict[Any, None]] = {}  # session -> ids, in receipt order
        self._session_of: dict[Any, str] = {}
        self._held: dict[str, deque[dict[str, Any]]] = {}  # the forget first
        self._waits: dict[str, set[Any]] = {}  # what each held session's forget waits for

    def received(self, data: dict[str, Any]) -> None:
        """Note a request counted in flight (it will be answered once)."""
        session = session_of(data)
        if session is not None:
            with self._lock:
                self._calls.setdefault(session, {})[data["id"]] = None
                self._session_of[data["id"]] = session

    def hold(self, data: dict[str, Any]) -> bool:
        """Whether `data` waits (it is kept, and `answered` gives it back when due)."""
        session = session_of(data)
        if session is None:
            return False
        with self._lock:
            if session in self._held:
                self._held[session].append(data)
                return True
            if data.get("method") != FORGET:
                return False
            earlier = self._earlier(session, data.get("id"))
            if not earlier:
                return False
            self._held[session] = deque([data])
            self._waits[session] = earlier
            return True

    def answered(self, msg_id: Any) -> list[dict[str, Any]]:
        """Note `msg_id` answered; the requests it held that are now due, in order."""
        with self._lock:
            session = self._session_of.pop(msg_id, None)
            if session is None:
                return []
            calls = self._calls[session]
            calls.pop(msg_id, None)
            if not calls:
                del self._calls[session]
            waits = self._waits.get(session)
            if waits is None:
                return []
            waits.discard(msg_id)
            if waits:
                return []
            del self._waits[session]
            return list(self._held.pop(session))

    def _earlier(self, session: str, msg_id: Any) -> set[Any]:
        """The session's requests received before `msg_id` and not yet answered."""
        earlier = set()
        for other in self._calls.get(session, {}):
            if other == msg_id:
                break
            earlier.add(other)
        return earlier


def session_of(data: dict[str, Any]) -> str | None:
    """The session a readkeeper/* request names ("" when none); None when its params
    cannot name one (the request is refused for its params, in its turn)."""
    params = data.get("params")
    if params is None:
        return ""
    if not isinstance(params, dict):
        return None
    session = params.get("session")
    return "" if session is None else session if isinstance(session, str) else None


__all__ = ["SessionOrder"]
