"""Counters for `readkeeper/stats`: what readkeeper did, and what it saved the agent."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Counters:
    reads: int = 0
    dedup_hits: int = 0
    tokens_returned: int = 0
    tokens_saved_by_stubs: int = 0
    tokens_saved_by_budgets: int = 0
    errors: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["errors"] = dict(self.errors)
        return data


class Stats:
    """Per-session counters and their running total."""

    def __init__(self) -> None:
        self.total = Counters()
        self._sessions: dict[str, Counters] = {}
        self._lock = threading.Lock()

    def add(self, session: str, **deltas: int) -> None:
        with self._lock:
            mine = self._sessions.setdefault(session, Counters())
            for name, delta in deltas.items():
                setattr(mine, name, getattr(mine, name) + delta)
                setattr(self.total, name, getattr(self.total, name) + delta)

    def error(self, session: str, kind: str) -> None:
        with self._lock:
            self._sessions.setdefault(session, Counters()).errors[kind] += 1
            self.total.errors[kind] += 1

    def snapshot(self, session: str | None) -> dict[str, Any]:
        with self._lock:
            result: dict[str, Any] = {"total": self.total.as_dict()}
            if session is not None:
                result["session"] = self._sessions.get(session, Counters()).as_dict()
            return result
