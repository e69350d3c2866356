"""Counters for `readkeeper/stats`: what readkeeper did, and what it saved the agent."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, NotRequired, Protocol, TypedDict

from ..errors import cut_name
from .journal import Journal, current_tally
from .sessions import EDITOR, principal_of


class _Item(Protocol):
    """An attachment as the counters see it: its type, and whether it was cut."""

    @property
    def type(self) -> str:
        """The attachment's type ("diagnostics", "memory", ...)."""
        ...


class _Kept(_Item, Protocol):
    """An attachment the agent got, whole or cut."""

    @property
    def truncated(self) -> bool:
        """Whether it was cut to fit."""
        ...


class Served(Protocol):
    """One `readkeeper/attachments` answer, as the counters see it (the attachments'
    `Fitted`, described here so the counters need nothing above them)."""

    @property
    def used_tokens(self) -> int:
        """The tokens the kept attachments take."""
        ...

    @property
    def attachments(self) -> Sequence[_Kept]:
        """What the agent got."""
        ...

    @property
    def dropped(self) -> Sequence[_Item]:
        """What it did not get."""
        ...


@dataclass
class Counters:
    """The `readkeeper/stats` counters of one session, or of all of them together."""

    reads: int = 0
    dedup_hits: int = 0
    tokens_returned: int = 0
    tokens_saved_by_stubs: int = 0
    tokens_saved_by_budgets: int = 0
    # A re-read of a changed file answered with the diff: the whole view's tokens less
    # the diff's.
    tokens_saved_by_diffs: int = 0
    # Tokens sent by reads, per file: where an agent's context goes (the top files are
    # shown; all are kept while the server runs).
    tokens_by_file: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    # Attachments: requests served, tokens attached, and items dropped or cut, by type.
    attachments_served: int = 0
    attachment_tokens: int = 0
    attachments_dropped: Counter[str] = field(default_factory=Counter)
    attachments_truncated: Counter[str] = field(default_factory=Counter)
    # Edits and writes: applied, refused as stale, and applied over a disjoint change.
    edits: int = 0
    writes: int = 0
    stale_edits_caught: int = 0
    disjoint_merges: int = 0
    # Change notices (watch/changes.py): pushed as readkeeper/didChangeReadFiles, and
    # returned by readkeeper/changes.
    notices_sent: int = 0
    changes_reported: int = 0
    # What the client pushed (diagnostics, open documents, folders) beyond the caps on
    # what the server keeps of it, by kind: counted in the total only.
    client_state_dropped: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        """The counters as `readkeeper/stats` reports them (the TOP_FILES costliest files)."""
        data = asdict(self)
        for name, value in data.items():
            if isinstance(value, Counter):
                # asdict() rebuilt the Counter from (key, count) pairs: take the real one.
                data[name] = dict(getattr(self, name))
        # The costliest files, each name cut when long (errors.cut_name).
        top = self.tokens_by_file.most_common(TOP_FILES)
        data["tokens_by_file"] = {cut_name(path): tokens for path, tokens in top}
        return data


TOP_FILES = 20  # files listed in tokens_by_file, the costliest first

# The counters that are tokens readkeeper kept from the agent (a call's `saved`).
_SAVINGS = ("tokens_saved_by_stubs", "tokens_saved_by_budgets", "tokens_saved_by_diffs")


@dataclass
class WatchCounters:
    """The watcher's counters (watch/watcher.py), server-wide, written by the watcher's threads
    (a reader may see a value a moment old)."""

    events: int = 0  # file events received
    ignored_events: int = 0  # of which in ignored paths
    coalesced_bursts: int = 0  # paths whose several events were looked at once
    coalesced_events: int = 0  # events saved by that
    batches: int = 0
    folders_walked: int = 0  # folders given a watch (again after an overflow)
    skipped_folders: int = 0  # ignored folders, never watched
    overflows: int = 0  # kernel event queue overflows (the read files are re-checked)
    fresh_instances: int = 0  # Watchman restarts or new watches (the read files likewise)
    polls: int = 0  # polling rounds (fallback, or roots on unreliable filesystems)
    polled_files: int = 0
    fallback_active: bool = False
    failures: int = 0  # batches that failed (logged once; reads and edits are unaffected)

    def as_dict(self) -> dict[str, Any]:
        """The counters as `readkeeper/stats` reports them, under `watcher`."""
        return asdict(self)


class Stats:
    """Per-session counters and their running total."""

    def __init__(self) -> None:
        self.total = Counters()
        self.watch = WatchCounters()
        self._sessions: dict[str, Counters] = {}
        self._lock = threading.Lock()
        self.journal = Journal()  # each call: what, when, at what cost (journal.py)
        # The files the editor's own sessions read: its total's `tokens_by_file` (another
        # caller's file names are never its to see; the user's own viewer sees all).
        self._editor_files: Counter[str] = Counter()

    def _session(self, session: str) -> Counters:
        """The session's counters, made at its first count (the caller holds the lock).
        Not `setdefault`: that would build a Counters, five Counter dicts, on every
        count of a session that has them."""
        counters = self._sessions.get(session)
        if counters is None:
            counters = self._sessions[session] = Counters()
        return counters

    def add(self, session: str, **deltas: int) -> None:
        """Add `deltas` to the named counters, the session's and the total."""
        with self._lock:
            mine = self._session(session)
            for name, delta in deltas.items():
                setattr(mine, name, getattr(mine, name) + delta)
                setattr(self.total, name, getattr(self.total, name) + delta)
        tally = current_tally()
        if tally is not None:
            tally.tokens += deltas.get("tokens_returned", 0)
            tally.saved += sum(deltas.get(name, 0) for name in _SAVINGS)

    def served(self, session: str, path: str, tokens: int) -> None:
        """A read sent `tokens` of `path`."""
        with self._lock:
            for counters in (self._session(session), self.total):
                counters.tokens_by_file[path] += tokens
            if principal_of(session) == EDITOR:
                self._editor_files[path] += tokens
        tally = current_tally()
        if tally is not None and not tally.path:
            tally.path = path

    def error(self, session: str, kind: str) -> None:
        """A request of the session failed with an error of this `kind`."""
        with self._lock:
            self._session(session).errors[kind] += 1
            self.total.errors[kind] += 1
        tally = current_tally()
        if tally is not None:
            tally.error = kind

    def attachments(self, session: str, fitted: Served) -> None:
        """Count one `readkeeper/attachments` answer: tokens attached, items dropped and
        cut, by type."""
        with self._lock:
            for counters in (self._session(session), self.total):
                counters.attachments_served += 1
                counters.attachment_tokens += fitted.used_tokens
                counters.attachments_dropped.update(d.type for d in fitted.dropped)
                counters.attachments_truncated.update(
                    a.type for a in fitted.attachments if a.truncated
                )
        tally = current_tally()
        if tally is not None:
            tally.tokens += fitted.used_tokens

    def client_state_dropped(self, kind: str, count: int = 1) -> None:
        """`count` pieces of client-pushed state of `kind` were cut or not kept."""
        if count:
            with self._lock:
                self.total.client_state_dropped[kind] += count

    def forget(self, session: str) -> None:
        """Drop the session's counters (the total keeps what they added to it)."""
        with self._lock:
            self._sessions.pop(session, None)

    def editor_files(self) -> dict[str, int]:
        """The TOP_FILES costliest files the editor's own sessions read (tokens sent),
        each name cut when long, as `as_dict` shows them."""
        with self._lock:
            top = self._editor_files.most_common(TOP_FILES)
        return {cut_name(path): tokens for path, tokens in top}

    def snapshot(self, session: str | None) -> Snapshot:
        """The total counters, and the session's too unless `session` is None."""
        with self._lock:
            result = Snapshot(total=self.total.as_dict())
            if session is not None:
                result["session"] = self._sessions.get(session, Counters()).as_dict()
            return result


class Snapshot(TypedDict):
    """The counters as `readkeeper/stats` reports them: the total's, and a session's."""

    total: dict[str, Any]
    session: NotRequired[dict[str, Any]]
