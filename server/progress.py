"""Progress of long work (PDF pages drawn, an outline parsed, a search, attachments
gathered), told to the front end that asked for it: LSP work-done progress, MCP
progress notifications.

The core only calls `step` at points along its work; it never knows who listens. A
front end runs a call inside `reporting`, with a `Send` of its own. Nothing is sent for
work that ends before `after_s` (the `progress_after_ms` setting): a progress
indicator that flashes for a fast read is noise. Past it, the first step, or the timer
when no step comes, begins the progress; every later step reports; the end ends it.
A threshold of 0 starts it at the first step, so what is sent depends on the work's
steps, never on the clock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from . import quoting

T = TypeVar("T")

# (stage: "begin" | "report" | "end", message, percentage or None). Called from the
# thread doing the work (or an attachment's thread, or the timer's): it must not block
# for long, and must be safe from any thread.
Send = Callable[[str, str, int | None], None]

# The calls that may run long, and what each is, as a front end shows its progress.
TITLES = {
    "read": "readkeeper: reading",
    "readMany": "readkeeper: reading files",
    "grep": "readkeeper: searching",
    "glob": "readkeeper: finding files",
    "list": "readkeeper: listing",
    "attachments": "readkeeper: gathering context",
}

# The longest step message sent: a few quoted names (errors.MAX_NAME_CHARS each).
MAX_MESSAGE_CHARS = 1_000

_CURRENT: ContextVar[Progress | None] = ContextVar("readkeeper_progress", default=None)


class Progress:
    """One call's progress: begun once, past the threshold; ended once, if begun."""

    def __init__(self, send: Send, title: str, after_s: float) -> None:
        self._send = send
        self.title = title
        self._after_s = after_s
        self._started = time.monotonic()
        self._lock = threading.Lock()
        self._begun = False
        self._ended = False

    def step(self, message: str, done: int | None = None, total: int | None = None) -> None:
        """One step of the work; sent once the threshold has passed. What a client or a
        file named is quoted where the message is made (errors.shown_name); here every
        message is made one printable line of at most MAX_MESSAGE_CHARS (round 44: a
        name's line breaks and escapes went out raw, a pattern 16,000 characters)."""
        message = quoting.cut_escaped(quoting.printable(message), MAX_MESSAGE_CHARS)
        percentage = None
        if done is not None and total:
            percentage = max(0, min(100, done * 100 // total))
        with self._lock:
            if self._ended:
                return
            if not self._begun:
                if time.monotonic() - self._started < self._after_s:
                    return
                self._begun = True
                self._send("begin", message, percentage)
                return
            self._send("report", message, percentage)

    def late(self) -> None:
        """The threshold passed with no step yet: begin, saying only what the work is."""
        with self._lock:
            if not self._begun and not self._ended:
                self._begun = True
                self._send("begin", self.title, None)

    def end(self, message: str = "done") -> None:
        """The work is over: end the progress, if it was begun."""
        with self._lock:
            if self._begun and not self._ended:
                self._send("end", message, None)
            self._ended = True


@contextmanager
def reporting(send: Send | None, title: str, after_ms: int) -> Iterator[Progress | None]:
    """Within the block (and the threads it starts with its context), `step` reports
    to `send`; None for no progress (the client cannot show it)."""
    if send is None:
        yield None
        return
    progress = Progress(send, title, after_ms / 1000)
    token = _CURRENT.set(progress)
    timer = None
    if after_ms > 0:
        timer = threading.Timer(after_ms / 1000, progress.late)
        timer.daemon = True
        timer.start()
    try:
        yield progress
    finally:
        if timer is not None:
            timer.cancel()
            timer.join()  # a `late` under way sends its begin before the end below
        _CURRENT.reset(token)
        progress.end()


def step(message: str, done: int | None = None, total: int | None = None) -> None:
    """Report a step of the work running here to whoever asked for its progress."""
    progress = _CURRENT.get()
    if progress is not None:
        progress.step(message, done, total)


def detach() -> None:
    """No progress from here on in this context: for work that outlives its call, whose
    progress has ended (state/later.py)."""
    _CURRENT.set(None)


def within(send: Send | None, title: str, after_ms: int, work: Callable[..., T], *args: Any) -> T:
    """`work(*args)` with its steps reported to `send`: for a front end to run on the
    worker thread that does the work (a thread pool does not carry the caller's context)."""
    with reporting(send, title, after_ms):
        return work(*args)
