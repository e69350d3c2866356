"""The journal: what the agent read and did, when, at what cost, and what readkeeper saved
it, one event per call, for the picture of the session (`readkeeper stats --html`, the
editor's stats page).

The counters (stats.py) say how much; the journal says what and when. It is kept in
memory only (nothing the agent read is written anywhere), and bounded: the newest
`JOURNAL_EVENTS` events, the oldest dropped first, and the number dropped is reported
with it so the picture can say it shows only the latest.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from ..errors import cut_name
from ..quoting import json_text
from ..words import count as count_of

# Events kept (about 200 bytes each, with the path shared with the read-state): a long
# agent session makes a few thousand calls.
JOURNAL_EVENTS = 5_000


@dataclass
class Tally:
    """What one call added to the counters while it ran (`Stats.add` writes here too)."""

    kind: str = ""  # a read's answer type, or the call's name
    tokens: int = 0  # sent to the agent
    saved: int = 0  # kept from it: stubs, budgets and outlines, diffs
    error: str = ""  # the kind of the call's refusal, if it was refused
    path: str = ""  # the file it was about, when the call itself does not say


# The call running in this context (a worker thread, or an attachment's thread started
# from it), so the counters' additions land in its event.
_TALLY: ContextVar[Tally | None] = ContextVar("readkeeper_tally", default=None)


def current_tally() -> Tally | None:
    """The tally of the call running here, if one is journaled."""
    return _TALLY.get()


@dataclass(frozen=True, slots=True)
class Event:
    """One call: when it began (wall clock, ns), its session, what it was (a read's
    answer type, or the call's name), the file or folder, the tokens it sent, the tokens
    readkeeper saved the agent, how long it took, and the kind of its refusal."""

    at_ns: int
    session: str
    kind: str
    path: str
    tokens: int
    saved: int
    ms: float
    error: str = ""
    # The call this one ran inside (a file mentioned in `attachments` is read): its
    # tokens are the outer call's too, so totals count the outer call alone.
    within: str = ""

    def as_dict(self) -> dict[str, Any]:
        """The event as `readkeeper/stats` sends it (with `history`)."""
        data: dict[str, Any] = {
            "at_ms": self.at_ns // 1_000_000,
            "session": self.session,
            "kind": self.kind,
            "path": cut_name(self.path),  # cut when long, as every name a call echoes
            "tokens": self.tokens,
            "saved": self.saved,
            "ms": round(self.ms, 1),
        }
        if self.error:
            data["error"] = self.error
        if self.within:
            data["within"] = self.within
        return data


@dataclass
class Journal:
    """The newest `cap` events of every session, and how many older ones were dropped."""

    cap: int = JOURNAL_EVENTS
    dropped: int = 0
    _events: deque[Event] = field(init=False)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._events = deque(maxlen=max(1, self.cap))

    def add(self, event: Event) -> None:
        """Keep `event`, dropping the oldest when full."""
        with self._lock:
            if len(self._events) == self._events.maxlen:
                self.dropped += 1
            self._events.append(event)

    @contextmanager
    def call(self, session: str, kind: str, path: str = "") -> Iterator[Tally]:
        """Journal the call run within the block: what the counters gained meanwhile is
        its cost (a nested call, such as each read of a `readMany`, is its own event).
        The caller sets the tally's `kind` and `path` as it learns them (a read's answer
        type, the real path of its file)."""
        outer = _TALLY.get()
        tally = Tally(kind=kind, path=path)
        token = _TALLY.set(tally)
        started_ns, started = time.time_ns(), time.perf_counter()
        rerun = False
        try:
            yield tally
        except Exception as exc:
            # An attempt handed on to be run again elsewhere (a quick read that turned out
            # costly, read/loop_guard.py) is journaled there, not as an error here.
            rerun = getattr(exc, "rerun", False) is True
            tally.error = tally.error or str(getattr(exc, "kind", "internal"))
            raise
        finally:
            _TALLY.reset(token)
            if not rerun:
                ms = (time.perf_counter() - started) * 1000
                self.add(
                    Event(
                        started_ns,
                        session,
                        tally.kind,
                        tally.path,
                        tally.tokens,
                        tally.saved,
                        ms,
                        tally.error,
                        outer.kind if outer is not None else "",
                    )
                )

    def snapshot(self, session: str | None = None) -> dict[str, Any]:
        """The events (of `session` only, unless None), oldest first, with the cap and
        how many were dropped."""
        with self._lock:
            events = [e for e in self._events if session is None or e.session == session]
            dropped = self.dropped
        return {
            "events": [e.as_dict() for e in events],
            "cap": self._events.maxlen,
            "dropped": dropped,
        }


# What the history's note and fields cost besides its events, and an event besides its
# JSON alone (the indentation of its depth in the answer as the MCP text sends it).
_HISTORY_NOTE_TOKENS = 120
_EVENT_TOKENS = 12


def within(result: dict[str, Any], budget: int, count: Callable[[str], int]) -> dict[str, Any]:
    """A `readkeeper/stats` answer whose `history` keeps the newest events that fit, with
    the rest of the answer, within `budget` tokens (`max_tokens`), each counted as sent
    (its JSON, quoting.json_text); the older ones left out are counted (`cut`) and said
    (`note`), with where they all are: the user's own picture (`readkeeper stats`)."""
    history = result.get("history")
    if not isinstance(history, dict) or not isinstance(history.get("events"), list):
        return result
    events = history["events"]
    rest = {**result, "history": {k: v for k, v in history.items() if k != "events"}}
    left = budget - count(json_text(rest, indent=1)) - _HISTORY_NOTE_TOKENS
    kept = 0
    for event in reversed(events):  # the newest first
        left -= count(json_text(event, indent=1)) + _EVENT_TOKENS
        if left < 0:
            break
        kept += 1
    if kept == len(events):
        return result
    cut = len(events) - kept
    note = (
        f"Showing the newest {count_of(kept, 'call')} of {len(events)}, cut by the token cap "
        f"(max_tokens): the {count_of(cut, 'older call')} left out are in the user's own "
        "picture of the session (`readkeeper stats --html`)."
    )
    shown = {**history, "events": events[len(events) - kept :], "cut": cut, "note": note}
    return {**result, "history": shown}
