"""The sessions the server keeps, most recent last.

Every call names a session (the default one is ""), and each session has state of its
own: its read-state, its change notices, what it saw of the editor's diagnostics, the
paths the user let it read, its counters. A client that named a new session at every
call (a prompt-injected agent, a broken client) would grow all of that without end, so
the server keeps the `MAX_SESSIONS` most recently used and forgets the least recent one
whole when another comes: for it, a later call is a first call. Session names are
capped too (`MAX_NAME_CHARS`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from ..errors import ReadkeeperError

# Far more than the chats and sub-agents of one editor window, far fewer than would weigh
# on the server (a session that read a few files takes a few KB).
MAX_SESSIONS = 256
MAX_NAME_CHARS = 256


class Sessions:
    """Which sessions are kept, least recently used first; safe from any thread."""

    def __init__(self) -> None:
        self._used: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def enter(self, session: str) -> list[str]:
        """A call of `session` begins: it becomes the most recent. Returns the sessions
        that no longer fit, for the caller to forget. A name over `MAX_NAME_CHARS` is
        refused (`bad_params`)."""
        if len(session) > MAX_NAME_CHARS:
            raise ReadkeeperError(
                "bad_params",
                f"A session name is at most {MAX_NAME_CHARS} characters; this one has "
                f'{len(session)}. Name sessions with a short id, e.g. session="chat-1".',
                field="session",
            )
        with self._lock:
            self._used[session] = None
            self._used.move_to_end(session)
            dropped = []
            while len(self._used) > MAX_SESSIONS:
                dropped.append(self._used.popitem(last=False)[0])
            return dropped

    def leave(self, session: str) -> None:
        """`session` was forgotten whole: its place is free."""
        with self._lock:
            self._used.pop(session, None)
