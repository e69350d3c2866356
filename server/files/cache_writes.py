"""The user cache's writer thread (`UserCache.put_later`), which keeps out of the calls.

A read that makes an entry of the user cache (an outline, the count that decided it,
the counts of numbered lines) answers without waiting for the folder's syscalls or the
payload's encoding: the entry is written on this thread. While a call is served
(`hold`, from the call's start until its answer is written), the thread is not even
woken, and an entry queued meanwhile waits: written during the call, it took the
interpreter's lock from the thread serving it (an outline's JSON, the entry's hash)
and, on a busy machine, its core (issue 34). It is written once no call is served, or
`MAX_HOLD_SECONDS` after it was queued when calls come back to back. Nothing reads an
entry back sooner than that: each kind is also kept in memory, and the user cache is
for the next server. `flush` writes everything queued, calls or not.

Past `MAX_PENDING` entries waiting, an entry is dropped: a later server computes it
again.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Protocol

log = logging.getLogger("readkeeper")

MAX_PENDING = 64
# How long an entry waits for the calls served to end, at most.
MAX_HOLD_SECONDS = 1.0
# How long a process that exits waits for the entries still queued (they are small).
EXIT_WAIT_SECONDS = 1.0

Payload = bytes | Callable[[], bytes]


class Folder(Protocol):
    """Where an entry goes (`UserCache`)."""

    def put(self, kind: str, key: str, payload: bytes) -> bool: ...


# (folder, kind, key, payload, when queued)
_PENDING: deque[tuple[Folder, str, str, Payload, float]] = deque()
_COND = threading.Condition()
_unfinished = 0  # entries queued and not yet written (or dropped on an error)
_calls = 0  # calls served now (`hold`)
_flushing = 0  # `flush` calls waiting: the calls served do not hold the writes
_writer: threading.Thread | None = None


def put_later(folder: Folder, kind: str, key: str, payload: Payload) -> None:
    """Queue `folder.put(kind, key, payload)` (a function as payload is called on the
    writer thread); dropped past `MAX_PENDING` waiting."""
    global _unfinished
    with _COND:
        if _unfinished >= MAX_PENDING:
            return
        now = time.monotonic()
        _PENDING.append((folder, kind, key, payload, now))
        _unfinished += 1
        # During a call the thread is not woken, unless the oldest entry waited its most.
        if not _calls or _PENDING[0][4] + MAX_HOLD_SECONDS <= now:
            _COND.notify_all()
        if _writer is None or not _writer.is_alive():
            _start()


def _start() -> None:
    global _writer
    first = _writer is None
    _writer = threading.Thread(target=_run, name="readkeeper-cache-writes", daemon=True)
    _writer.start()
    if first:
        atexit.register(_drain, EXIT_WAIT_SECONDS)


def hold() -> None:
    """A call is served: entries wait until `release` (one for each `hold`)."""
    global _calls
    with _COND:
        _calls += 1


def release() -> None:
    """A call's answer is out: once no other is served, the entries are written."""
    global _calls
    with _COND:
        _calls = max(0, _calls - 1)
        if not _calls and _PENDING:
            _COND.notify_all()


@contextlib.contextmanager
def holding() -> Iterator[None]:
    """`hold` while the block runs."""
    hold()
    try:
        yield
    finally:
        release()


def _next() -> tuple[Folder, str, str, Payload, float]:
    """The next entry to write, once it may be (called holding `_COND`)."""
    while True:
        if _PENDING:
            wait = _PENDING[0][4] + MAX_HOLD_SECONDS - time.monotonic()
            if not _calls or _flushing or wait <= 0:
                return _PENDING.popleft()
            _COND.wait(wait)
        else:
            _COND.wait()


def _run() -> None:
    global _unfinished
    while True:
        with _COND:
            folder, kind, key, payload, _ = _next()
        try:
            folder.put(kind, key, payload if isinstance(payload, bytes) else payload())
        except Exception:  # a cache is only a cache: the entry is not kept
            log.exception("Making an entry of readkeeper's cache failed")
        finally:
            with _COND:
                _unfinished -= 1
                _COND.notify_all()


def flush(seconds: float | None = None) -> bool:
    """Write every entry queued so far, calls served or not, and wait for them (at
    most `seconds`); whether all were written."""
    global _flushing
    with _COND:
        _flushing += 1
        _COND.notify_all()
        try:
            return _COND.wait_for(lambda: not _unfinished, seconds)
        finally:
            _flushing -= 1


def pending() -> int:
    """How many entries are queued and not written yet."""
    with _COND:
        return _unfinished


def _drain(seconds: float) -> None:
    flush(seconds)


__all__ = ["MAX_HOLD_SECONDS", "MAX_PENDING", "flush", "hold", "holding", "pending"]
__all__ += ["put_later", "release"]
