"""What each agent session has seen, so a re-read can be a stub and an edit can be checked.

One `SessionState` per session (an agent conversation; the default session is "").
A record keeps the real path, the content digest, stat fast-path fields, the range, and
whether the view was partial. "Changed" always means the digest differs: mtime and size
only say when the digest must be recomputed, so a `touch` or an identical rewrite is
never a change.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Literal

from ..files.stamps import Stamp
from .held import HeldDocument
from .later import Later

Scope = Literal["file", "range"]
Source = Literal["disk", "buffer"]

# Bounds memory for an agent that walks a monorepo; the oldest reads are forgotten first.
MAX_RECORDS_PER_SESSION = 50_000
# Views of one file's same content kept per session (whole, a few ranges, the outline).
MAX_VIEWS_PER_FILE = 4


@dataclass(frozen=True)
class ReadRecord:
    """One view in a session's read-state: what a read (or an edit or write) gave the
    agent of a file, to stub a re-read and check an edit against."""

    path: str
    digest: str  # of the whole file (scope "file") or of the lines shown (scope "range")
    scope: Scope
    mtime_ns: int
    size: int
    offset: int  # 1-based first line requested
    limit: int | None  # lines requested, after the default; None for an edit's record
    partial: bool  # the agent did not get everything it asked for
    # What the content cost, for "tokens saved" by a later stub (the bound for a read
    # sent before the token table loaded: stats count what the read said it cost).
    tokens: int
    source: Source = "disk"
    buffer_version: int | None = None
    recorded_ns: int = field(default_factory=time.time_ns)
    # What else shaped the view, for readers with more options than offset/limit
    # (PDF pages, rendering, notebook images); "" for text.
    view: str = ""
    # "edit"/"write": the record is the content an edit or write left, which the agent
    # knows but never read whole in that form (such records are kept partial).
    origin: Literal["read", "edit", "write"] = "read"
    # Whether offset or limit was given: a whole read cut at a cap and a ranged read of
    # the same lines answer differently (the ranged one is refused over the token cap).
    ranged: bool = False
    # The settings in force (their hash): the caps shape a view, so a view is only the
    # same under the same settings.
    caps: int = 0
    # For a view cut at the line default or a cap: what the agent holds and where the
    # rest starts, said again by the stub of a re-read.
    held: str | None = None
    # The agent holds all of this content: a complete read from line 1 with no line cut,
    # a write, or its own edit of content it held whole. A re-read of it unchanged is a
    # stub, and of it changed a diff (read/delta.py), whatever the parameters of that read.
    whole: bool = False
    # The session's other views of this same content (newest first, at most
    # MAX_VIEWS_PER_FILE - 1, none of them with views of their own): a re-read of any of
    # them stubs too, and a file held whole stays held through a ranged read.
    earlier: tuple[ReadRecord, ...] = ()
    # The file's stamp as the content was last read from disk, when it proves that
    # content (files/stamps.py): a re-read finding the same stamp is a stub without
    # reading the file again. None for a buffer's content, an edit's, or a file read
    # too soon after it changed.
    stamp: Stamp | None = None
    # The lines this view showed, and the file's lines then (None for a view that is not
    # numbered lines: a document, an outline's record keeps its head): what a stub of it
    # names.
    shown_lines: int | None = None
    total_lines: int | None = None
    # The digest of the lines shown, as the file has them: a re-read of the same lines
    # stubs although the file changed outside them, or only moved them (read/held_range.py).
    lines_digest: str | None = None
    # The symbol a symbol read asked for: its lines are found again where they moved to.
    symbol: str | None = None
    # When the session got this content (a stub's renewal keeps it).
    obtained_ns: int = field(default_factory=time.time_ns)
    # On what an edit or write left: the session's read views of numbered lines of the
    # content before it (at most MAX_VIEWS_PER_FILE, none with views of their own). A
    # re-read of such lines that the change did not touch is a stub (read/held_range.py).
    superseded: tuple[ReadRecord, ...] = ()
    # For a view of an image, PDF or notebook: what it gave the agent, in the file's
    # terms (pages, cells, the image as sent), which a stub of it names.
    document: HeldDocument | None = None
    # For a partial view (a search, a range, a symbol, a cell) of content other than what
    # the session held before: that earlier record, which is still what the session
    # holds of every line this view did not show (without views of its own). What
    # `changes` tells goes from it (watch/changes.py), so a partial view never moves the
    # baseline of the lines it did not show. None once a view holds the file whole.
    held_before: ReadRecord | None = None
    # The recorded_ns of the record this one replaced, when `held_before` is set: the
    # change notices of that record go on for this one.
    follows_ns: int | None = None
    # A notebook readkeeper could not show as cells, seen as its numbered text
    # (read/damaged.py), or what the session's edit of such a view left while it did not
    # hold it whole: that view licenses text edits only while the file stays no
    # notebook (edit/notebook_seen.py, check_text_view).
    notebook_text: bool = False

    def same_view(self, offset: int, limit: int | None, view: str = "") -> bool:
        """Whether this view was asked for with these parameters (after defaults)."""
        return self.offset == offset and self.limit == limit and self.view == view

    def views(self) -> tuple[ReadRecord, ...]:
        """This view and the earlier ones of the same content, newest first."""
        return (self, *self.earlier)

    def holds_whole(self) -> bool:
        """Whether any view of this content gave the agent all of it."""
        return any(view.whole for view in self.views())

    def _same_content(self, other: ReadRecord) -> bool:
        return (self.digest, self.scope, self.source) == (other.digest, other.scope, other.source)

    def _same_shape(self, other: ReadRecord) -> bool:
        return self.same_view(other.offset, other.limit, other.view) and (
            self.ranged == other.ranged
        )

    def renewed(
        self,
        mtime_ns: int,
        size: int,
        buffer_version: int | None,
        recorded_ns: int,
        stamp: Stamp | None = None,
    ) -> ReadRecord:
        """This view as a stub re-read renews it: the same content and views, the file's
        stat and stamp (or buffer version) as they are now."""
        return self._but(
            mtime_ns=mtime_ns,
            size=size,
            buffer_version=buffer_version,
            recorded_ns=recorded_ns,
            stamp=stamp,
        )

    def _but(self, **changes: object) -> ReadRecord:
        """This record with `changes` (field names), as `dataclasses.replace` makes it but
        five times faster: a stub re-read makes two, and replace's pass over 19 fields
        was the largest cost of its bookkeeping after the digest. Nothing is skipped: the
        record has no `__post_init__`, and only its own fields are taken."""
        unknown = changes.keys() - self.__dataclass_fields__.keys()
        if unknown:
            raise TypeError(f"ReadRecord has no field {sorted(unknown)[0]!r}")
        copied = object.__new__(ReadRecord)
        copied.__dict__.update(self.__dict__, **changes)
        return copied

    def after(self, previous: ReadRecord | None) -> ReadRecord:
        """This record as it replaces `previous` in the read-state: carrying the views of
        the same content the session still holds (a new view of other content, or what
        an edit or write left, starts afresh)."""
        if previous is not None and self.origin != "read":
            return self._but(earlier=(), superseded=_lines_held(previous))
        before = self._held_before(previous)
        if previous is None or not self._same_content(previous):
            return self if not self.earlier and not before else self._but(earlier=(), **before)
        # What an edit or write left stays too: it never stubs, but it may hold the
        # whole file (so a delta re-read still applies).
        kept = [v for v in previous.views() if not v._same_shape(self)]
        # A view of the whole file is kept before newer ranges: it holds all of them.
        kept.sort(key=lambda view: not view.whole)
        earlier = tuple(v._but(earlier=()) if v.earlier else v for v in kept)
        return self._but(earlier=earlier[: MAX_VIEWS_PER_FILE - 1], **before)

    def _held_before(self, previous: ReadRecord | None) -> dict[str, object]:
        """What this read view keeps of `previous` (the fields `held_before` and
        `follows_ns`): a view that holds the file whole keeps nothing; a partial one
        keeps what the session held before of the lines it did not show (when that is
        other content than this view's)."""
        if previous is None or self.whole:
            return {}
        base = previous.held_before
        if base is None:
            if self._same_content(previous):
                return {}
            base = previous._but(earlier=(), superseded=(), held_before=None, follows_ns=None)
        return {"held_before": base, "follows_ns": previous.recorded_ns}


def _lines_held(previous: ReadRecord) -> tuple[ReadRecord, ...]:
    """The views of numbered lines `previous` holds (its own, and those it superseded),
    each without views of its own: what an edit or write keeps of them."""
    found = [
        view._but(earlier=(), superseded=())
        for kept in previous.views()
        for view in (kept, *kept.superseded)
        if view.origin == "read" and view.lines_digest is not None
    ]
    return tuple(found[:MAX_VIEWS_PER_FILE])


@dataclass
class SessionState:
    """One session's read-state: a record per real path, at most MAX_RECORDS_PER_SESSION."""

    records: OrderedDict[str, ReadRecord] = field(default_factory=OrderedDict)

    def get(self, path: str) -> ReadRecord | None:
        """The record for `path`; None when the session holds nothing of it."""
        return self.records.get(path)

    def put(self, record: ReadRecord) -> None:
        """Record a view as the newest, with the views of the same content held before."""
        self.records[record.path] = record.after(self.records.get(record.path))
        self.records.move_to_end(record.path)
        while len(self.records) > MAX_RECORDS_PER_SESSION:
            self.records.popitem(last=False)


class ReadStates:
    """All sessions' read-state, safe to use from the server's worker threads. What a
    call left to record after its answer (`later`) is recorded before a session's state
    is looked at or changed again."""

    def __init__(self) -> None:
        self._sessions: dict[str, SessionState] = {}
        self._lock = threading.Lock()
        self.later = Later()

    def get(self, session: str, path: str) -> ReadRecord | None:
        """The session's record for `path` (a real path); None when it holds nothing of it."""
        self.later.settle(session)
        with self._lock:
            state = self._sessions.get(session)
            return state.get(path) if state else None

    def put(self, session: str, record: ReadRecord) -> None:
        """Record what the session now holds of the record's file."""
        self.later.settle(session)
        with self._lock:
            state = self._sessions.get(session)
            if state is None:
                state = self._sessions[session] = SessionState()
            state.put(record)

    def forget(self, session: str, paths: Iterable[str] | None = None) -> int:
        """Drop the session's records (all, or those for `paths`); returns how many."""
        self.later.settle(session)
        with self._lock:
            state = self._sessions.get(session)
            if state is None:
                return 0
            if paths is None:
                del self._sessions[session]
                return len(state.records)
            dropped = 0
            for path in paths:
                if state.records.pop(path, None) is not None:
                    dropped += 1
            return dropped

    def moved(self, session: str, old: str, new: str) -> list[tuple[str, str, str]]:
        """The session's own move of `old` (a file, or a folder with everything beneath
        it) to `new`: its records follow the files, so what it read it still holds and
        may edit at the new path. Returns (old path, new path, digest) of each."""
        prefix = old.rstrip(os.sep) + os.sep
        followed: list[tuple[str, str, str]] = []
        self.later.settle(session)
        with self._lock:
            state = self._sessions.get(session)
            if state is None:
                return followed
            for path in list(state.records):
                if path != old and not path.startswith(prefix):
                    continue
                record = state.records.pop(path)
                target = new + path[len(old) :]
                state.records[target] = replace(record, path=target)
                followed.append((path, target, record.digest))
        return followed

    def count(self, session: str | None = None) -> int:
        """Records in the session's read-state, or in every session's when None."""
        self.later.settle(session)
        with self._lock:
            if session is not None:
                state = self._sessions.get(session)
                return len(state.records) if state else 0
            return sum(len(s.records) for s in self._sessions.values())

    # --- for the watcher and change notices (watch/watcher.py, watch/changes.py) ------

    def records(self, session: str) -> list[ReadRecord]:
        """Every record in the session's read-state (not settled: a call settles its
        session before it starts, calls.py)."""
        with self._lock:
            state = self._sessions.get(session)
            return list(state.records.values()) if state else []

    def readers(self, path: str) -> list[tuple[str, ReadRecord]]:
        """Every session that has `path` in its read-state, with its record."""
        with self._lock:
            found = ((s, state.records.get(path)) for s, state in self._sessions.items())
            return [(s, r) for s, r in found if r is not None]

    def readers_under(self, folder: str) -> list[tuple[str, ReadRecord]]:
        """Every (session, record) of a file under `folder`."""
        prefix = folder.rstrip(os.sep) + os.sep
        with self._lock:
            return [
                (s, r)
                for s, state in self._sessions.items()
                for p, r in state.records.items()
                if p.startswith(prefix)
            ]

    def files(self) -> dict[str, tuple[int, int]]:
        """Every path in any read-state, with (mtime_ns, size) of its newest record."""
        newest: dict[str, ReadRecord] = {}
        with self._lock:
            for state in self._sessions.values():
                for path, record in state.records.items():
                    seen = newest.get(path)
                    if seen is None or record.recorded_ns > seen.recorded_ns:
                        newest[path] = record
        return {p: (r.mtime_ns, r.size) for p, r in newest.items()}
