"""The sessions the server keeps, and whose each one is.

Every call names a session (the default one is ""), and each session has state of its
own: its read-state, its change notices, what it saw of the editor's diagnostics, the
paths the user let it read, its counters.

A session name belongs to the door it came through, its principal: the editor's LSP
connection and its chats (`EDITOR`, whose names are kept as given, as is a stand-alone
stdio process's, the one caller of its core), one attached agent's connection, one MCP
HTTP `Mcp-Session-Id`, the HTTP callers without one together. The same name from two
principals is two sessions: `scoped` makes the key the core keeps, and no name can
spell another principal's key (a name may not hold NUL, which the key's mark is).

A client that named a new session at every call (a prompt-injected agent, a broken
client) would grow all of that without end, so each principal keeps its
`MAX_PER_PRINCIPAL` most recently used sessions, its least recent going first: one
principal never pushes out another's. All principals together keep `MAX_SESSIONS`; at
that bound the least recent session of the principal holding the most goes (the caller's
own when it holds as many as any), so a caller that stays within its share keeps them.
A session dropped so is remembered by name for a while (`MAX_EVICTED`): its next
refusal says its read-state was dropped, not that it never read. Session names are
capped too (`MAX_NAME_CHARS`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from ..errors import ReadkeeperError

# Far more than the chats and sub-agents of one editor window, far fewer than would weigh
# on the server (a session that read a few files takes a few KB).
MAX_PER_PRINCIPAL = 256
MAX_SESSIONS = 2048
MAX_EVICTED = 1024
MAX_NAME_CHARS = 256

EDITOR = ""  # the LSP connection's principal (and a stand-alone stdio process's)
VIEWER = "viewer"  # the user's own `readkeeper stats`: sees every session, changes none
_MARK = "\x00"


def scoped(principal: str, name: str) -> str:
    """The key the core keeps `principal`'s session `name` under; a name over
    `MAX_NAME_CHARS`, or holding NUL, is refused (`bad_params`)."""
    if len(name) > MAX_NAME_CHARS:
        raise ReadkeeperError(
            "bad_params",
            f"A session name is at most {MAX_NAME_CHARS} characters; this one has "
            f'{len(name)}. Name sessions with a short id, e.g. "chat-1".',
            field="session",
        )
    if _MARK in name:
        raise ReadkeeperError(
            "bad_params",
            "A session name may not hold NUL (\\u0000). Name sessions with a short id, "
            'e.g. "chat-1".',
            field="session",
        )
    return name if principal == EDITOR else f"{_MARK}{principal}{_MARK}{name}"


def principal_of(key: str) -> str:
    """Whose session `key` is."""
    if not key.startswith(_MARK):
        return EDITOR
    return key[1:].partition(_MARK)[0]


def name_of(key: str) -> str:
    """The name `key`'s principal gave it."""
    if not key.startswith(_MARK):
        return key
    return key[1:].partition(_MARK)[2]


def labelled(key: str) -> str:
    """`key` as the user's own viewer (`readkeeper stats`) shows it: the editor's names
    as given, another principal's as `principal:name`."""
    principal = principal_of(key)
    return name_of(key) if principal == EDITOR else f"{principal}:{name_of(key)}"


class Sessions:
    """Which sessions are kept, least recently used first; safe from any thread."""

    def __init__(self) -> None:
        self._used: dict[str, OrderedDict[str, None]] = {}
        self._count = 0
        self._evicted: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def enter(self, session: str) -> list[str]:
        """A call of `session` (a key from `scoped`) begins: it becomes its principal's
        most recent. Returns the sessions that no longer fit, for the caller to forget."""
        principal = principal_of(session)
        with self._lock:
            mine = self._used.setdefault(principal, OrderedDict())
            if session not in mine:
                self._count += 1
            mine[session] = None
            mine.move_to_end(session)
            dropped = []
            while len(mine) > MAX_PER_PRINCIPAL:
                dropped.append(self._drop(mine))
            while self._count > MAX_SESSIONS:
                most = max(len(held) for held in self._used.values())
                # the caller pays when it holds as many as any (a tie never falls on another)
                fullest = mine if len(mine) == most else max(self._used.values(), key=len)
                dropped.append(self._drop(fullest))
            return dropped

    def _drop(self, sessions: OrderedDict[str, None]) -> str:
        gone = sessions.popitem(last=False)[0]
        self._count -= 1
        self._evicted[gone] = None
        self._evicted.move_to_end(gone)
        while len(self._evicted) > MAX_EVICTED:
            self._evicted.popitem(last=False)
        return gone

    def evicted(self, session: str) -> bool:
        """Whether `session` was dropped at the bound (and not forgotten since)."""
        with self._lock:
            return session in self._evicted

    def leave(self, session: str) -> None:
        """`session` was forgotten whole (by its own call): its place is free, and its
        next call is a first call, nothing dropped."""
        principal = principal_of(session)
        with self._lock:
            mine = self._used.get(principal)
            if mine is not None and mine.pop(session, 0) is None:
                self._evicted.pop(session, None)  # not when it is the drop's own forget
                self._count -= 1
                if not mine:
                    del self._used[principal]
