"""What `readkeeper/undo` can take back: each session's last change, as bytes.

Every change goes through `Readkeeper._change`, which opens `recording`; every commit to
disk goes through `commit.replace` (or `atomic.create` for a new file), which calls
`note`. So the bytes before and after of each file a call changed are noted in the
call's own context (a `ContextVar`: concurrent calls of other sessions do not mix), and
when the call succeeds they become the session's last change, replacing the one before:
the contract undoes the last change, and one level is all that is kept. A call that
succeeds without writing to disk (a change applied to the editor's buffer, which the
editor's own undo takes back; a move; a write of identical bytes) leaves nothing to
undo, so that an undo never takes back an older change out of order.

Bounded memory: a change is kept only when its bytes (before and after, every file)
fit `MAX_CHANGE_BYTES`; all sessions together keep at most `MAX_KEPT_BYTES`, the least
recently changed session's entry dropped first. What is not kept is said by the undo
(`nothing to undo`, with the reason).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

MAX_CHANGE_BYTES = 8 << 20  # one call's files, before and after
MAX_KEPT_BYTES = 32 << 20  # every session's last change together


@dataclass(frozen=True)
class FileChange:
    """One file a change wrote: its bytes before (None: the change created it) and
    after."""

    path: str
    before: bytes | None
    after: bytes


@dataclass(frozen=True)
class Change:
    """A session's last change: the files it wrote, in the order written."""

    verb: str  # what the call was: edit, write, patch
    files: tuple[FileChange, ...]

    @property
    def size(self) -> int:
        """Bytes kept for it."""
        return sum(len(f.before or b"") + len(f.after) for f in self.files)


@dataclass
class _Pending:
    files: list[FileChange] = field(default_factory=list)


_pending: ContextVar[_Pending | None] = ContextVar("readkeeper_undo_pending", default=None)


def note(path: str, before: bytes | None, after: bytes) -> None:
    """A commit wrote `after` over `before` at `path` (in a `recording` call; else
    nothing is kept)."""
    pending = _pending.get()
    if pending is not None:
        pending.files.append(FileChange(path, before, after))


def noted() -> list[FileChange]:
    """What the running call has written so far, in order (a multi-file edit that
    fails puts it back)."""
    pending = _pending.get()
    return list(pending.files) if pending is not None else []


class Journal:
    """Each session's last change (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._changes: OrderedDict[str, Change] = OrderedDict()
        self._dropped: dict[str, str] = {}  # session -> why its last change is not kept
        self._size = 0

    @contextmanager
    def recording(self, session: str, verb: str, keeps: bool = True) -> Iterator[None]:
        """Note what the call writes; when it succeeds, that is the session's last
        change. `keeps=False`: a call that writes nothing by design (a dry run) and
        leaves the last change as it was."""
        verb = {"edit_batch": "edit", "edit_cell": "edit"}.get(verb, verb)
        pending = _Pending()
        token = _pending.set(pending)
        try:
            yield
        finally:
            _pending.reset(token)
        if keeps:
            self._keep(session, Change(verb, tuple(pending.files)))

    def _keep(self, session: str, change: Change) -> None:
        with self._lock:
            self._pop(session)
            self._dropped.pop(session, None)
            if not change.files:
                return
            if change.size > MAX_CHANGE_BYTES:
                self._dropped[session] = (
                    f"it changed {change.size:,} bytes, over the {MAX_CHANGE_BYTES:,} kept to undo"
                )
                return
            self._changes[session] = change
            self._size += change.size
            while self._size > MAX_KEPT_BYTES and self._changes:
                gone, dropped = self._changes.popitem(last=False)
                self._size -= dropped.size
                self._dropped[gone] = "later changes of other sessions needed the room"

    def _pop(self, session: str) -> Change | None:
        change = self._changes.pop(session, None)
        if change is not None:
            self._size -= change.size
        return change

    def last(self, session: str) -> tuple[Change | None, str | None]:
        """The session's last change, or None and why (None: it made none)."""
        with self._lock:
            return self._changes.get(session), self._dropped.get(session)

    def done(self, session: str, change: Change) -> None:
        """`change` was undone: there is nothing left to undo."""
        with self._lock:
            if self._changes.get(session) is change:
                self._pop(session)

    def forget(self, session: str) -> None:
        """Drop what the session could undo (the session is forgotten whole)."""
        with self._lock:
            self._pop(session)
            self._dropped.pop(session, None)

    @property
    def kept_bytes(self) -> int:
        """Bytes kept for every session (for tests and stats)."""
        with self._lock:
            return self._size
