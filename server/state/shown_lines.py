"""Which lines each session was shown, at which content: what makes an anchor valid.

An anchor ("12ab": line 12, whose content hashes to "ab") names a line the agent wants
to change without repeating it. readkeeper accepts it only when this session was shown
line 12 with exactly the content the file has there now (or, moved, near it): the
short hash in the anchor only catches a slip, the check is against the 64-bit hash of
the line as it was shown, kept here. Every view that shows whole numbered lines adds
them (reads in either line format, the lines a search shows, the fresh lines of a
`stale` refusal, an anchored edit's snippet); a line shown cut or escaped is not added,
since the agent never saw it as it is.

Also kept, per file: the anchored views the session got, by content digest and line
range, so a re-read in the anchors format is a stub only when the agent holds anchors
for those lines of that content (read/anchors.py).

Bounded: at most `MAX_LINES` lines per session (whole files forgotten, least recently
shown first) and `MAX_FILES` files. A forgotten line only means an anchor edit is
refused `stale` with the lines shown again, never that a wrong one is applied.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

MAX_FILES = 256
MAX_LINES = 200_000
MAX_ANCHORED_VIEWS = 8


@dataclass
class _File:
    lines: dict[int, int] = field(default_factory=dict)  # line number -> full hash
    anchored: list[tuple[str, int, int]] = field(default_factory=list)  # digest, first, last


@dataclass
class _Session:
    files: OrderedDict[str, _File] = field(default_factory=OrderedDict)
    lines: int = 0


class ShownLines:
    """Every session's shown lines, safe to use from the server's worker threads."""

    def __init__(self, max_lines: int = MAX_LINES, max_files: int = MAX_FILES) -> None:
        self.max_lines = max_lines
        self.max_files = max_files
        self._sessions: dict[str, _Session] = {}
        self._lock = threading.Lock()

    def saw(self, session: str, path: str, lines: Mapping[int, int]) -> None:
        """`session` was shown these lines of `path` (number -> full hash of the line)."""
        if not lines:
            return
        with self._lock:
            state = self._sessions.setdefault(session, _Session())
            entry = state.files.pop(path, None) or _File()
            state.lines -= len(entry.lines)
            entry.lines.update(lines)
            state.lines += len(entry.lines)
            state.files[path] = entry
            self._trim(state)

    def saw_anchored(self, session: str, path: str, digest: str, first: int, last: int) -> None:
        """`session` got lines `first`..`last` of content `digest` with their anchors."""
        with self._lock:
            state = self._sessions.setdefault(session, _Session())
            entry = state.files.setdefault(path, _File())
            view = (digest, first, last)
            if view not in entry.anchored:
                entry.anchored.insert(0, view)
                del entry.anchored[MAX_ANCHORED_VIEWS:]

    def holds_anchors(self, session: str, path: str, digest: str, first: int, last: int) -> bool:
        """Whether `session` got anchors for all of lines `first`..`last` of `digest`."""
        with self._lock:
            state = self._sessions.get(session)
            entry = state.files.get(path) if state else None
            if entry is None:
                return False
            return any(d == digest and a <= first and last <= b for d, a, b in entry.anchored)

    def lines(self, session: str, path: str) -> dict[int, int]:
        """A copy of the lines `session` was shown of `path` (number -> full hash)."""
        with self._lock:
            state = self._sessions.get(session)
            entry = state.files.get(path) if state else None
            return dict(entry.lines) if entry else {}

    def edited(
        self,
        session: str,
        path: str,
        spans: Sequence[tuple[int, int, int]],
        shown: Mapping[int, int],
    ) -> None:
        """`session` changed `path`: each span (first, last+1, new count; 1-based old line
        numbers, in order) replaced its lines. The lines it was shown outside them move
        with the edit, those inside are gone, and `shown` (new numbers) is what the edit's
        answer showed. The anchored views are of content that is no more."""
        with self._lock:
            state = self._sessions.get(session)
            entry = state.files.get(path) if state else None
            if state is None or entry is None:
                return
            moved: dict[int, int] = {}
            for number, value in entry.lines.items():
                shift, gone = 0, False
                for first, end, count in spans:
                    if number >= end:
                        shift += count - (end - first)
                    elif number >= first:
                        gone = True
                if not gone:
                    moved[number + shift] = value
            moved.update(shown)
            state.lines += len(moved) - len(entry.lines)
            entry.lines, entry.anchored = moved, []
            self._trim(state)

    def forget(self, session: str, paths: Iterable[str] | None = None) -> None:
        """Drop what `session` was shown (of `paths`, or of everything)."""
        with self._lock:
            state = self._sessions.get(session)
            if state is None:
                return
            if paths is None:
                del self._sessions[session]
                return
            for path in paths:
                entry = state.files.pop(path, None)
                if entry is not None:
                    state.lines -= len(entry.lines)

    def _trim(self, state: _Session) -> None:
        while len(state.files) > 1 and (
            state.lines > self.max_lines or len(state.files) > self.max_files
        ):
            _, dropped = state.files.popitem(last=False)
            state.lines -= len(dropped.lines)
        if state.lines > self.max_lines:  # one file alone: keep its newest lines
            (entry,) = state.files.values()
            for number in list(entry.lines)[: state.lines - self.max_lines]:
                del entry.lines[number]
            state.lines = len(entry.lines)
