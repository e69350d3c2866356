"""Which lines each session was shown, at which content: what makes an anchor valid.

An anchor ("12ab": line 12, whose content hashes to "ab") names a line the agent wants
to change without repeating it. readkeeper accepts it only when this session was shown
line 12 with exactly the content the file has there now (or, moved, near it): the
short hash in the anchor only catches a slip, the check is against a 64-bit hash of
the line as it was shown. Two kinds of entry say what was shown:
- lines, each with the hash of its content: what a search showed, the fresh lines of a
  `stale` refusal, an anchored edit's snippet, a read of lines no snapshot keeps;
  the last such read of a session waits unhashed (`saw_later`): hashed when an edit
  asks, or when the session's next such read comes, and not at all when that read
  showed the same lines again (a forced re-read of a log's tail);
- views of a read: a range of lines of a content digest whose text the snapshots keep
  (state/snapshots.py). A read costs a tuple here, not a hash per line: the lines are
  hashed only when an edit asks, and a view whose text has been evicted since counts
  for nothing (the edit is refused `stale` with the lines shown again).
When two entries name one line, the newer says what it showed.

Also kept, per file: the anchored views the session got, by content digest and line
range, so a re-read in the anchors format is a stub only when the agent holds anchors
for those lines of that content (read/anchors.py).

Bounded: at most `MAX_LINES` lines per session (whole files forgotten, least recently
shown first), `MAX_FILES` files and `MAX_VIEWS` views per file.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

MAX_FILES = 256
MAX_LINES = 200_000
MAX_VIEWS = 8

# A read's view: (stamp, content digest, first line, last line, the longest line shown
# whole then); expanded into lines (number -> hash) when an edit asks.
View = tuple[int, str, int, int, int]
Expand = Callable[[str, int, int, int], Mapping[int, int]]
Lines = Callable[[], Mapping[int, int]]


@dataclass
class _Later:
    """Lines shown by a read that no snapshot keeps, not hashed yet: `lines` hashes them."""

    path: str
    stamp: int
    key: object  # equal for a read that showed the same lines of the same text
    lines: Lines


@dataclass
class _File:
    lines: dict[int, tuple[int, int]] = field(default_factory=dict)  # number -> stamp, hash
    views: list[View] = field(default_factory=list)  # newest first
    anchored: list[tuple[str, int, int]] = field(default_factory=list)  # digest, first, last


@dataclass
class _Session:
    files: OrderedDict[str, _File] = field(default_factory=OrderedDict)
    lines: int = 0
    later: _Later | None = None  # at most one read's lines wait unhashed


class ShownLines:
    """Every session's shown lines, safe to use from the server's worker threads."""

    def __init__(self, max_lines: int = MAX_LINES, max_files: int = MAX_FILES) -> None:
        self.max_lines = max_lines
        self.max_files = max_files
        self._sessions: dict[str, _Session] = {}
        self._lock = threading.Lock()
        self._stamps = itertools.count(1)

    def saw(self, session: str, path: str, lines: Mapping[int, int]) -> None:
        """`session` was shown these lines of `path` (number -> hash of the line)."""
        if not lines:
            return
        with self._lock:
            stamp = next(self._stamps)
            state, entry = self._entry(session, path)
            state.lines -= len(entry.lines)
            entry.lines.update((number, (stamp, value)) for number, value in lines.items())
            state.lines += len(entry.lines)
            self._trim(state)

    def saw_later(self, session: str, path: str, key: object, lines: Lines) -> None:
        """`session` was shown the lines `lines()` gives (number -> hash), hashed only
        when needed: `key` is equal for a read that showed the same lines of the same
        text, which then renews them without hashing them again. `lines` must not call
        back into these shown lines."""
        with self._lock:
            stamp = next(self._stamps)
            state, _ = self._entry(session, path)
            later = state.later
            if later is not None and later.path == path and later.key == key:
                later.stamp = stamp  # the same lines shown again: now the newest
                return
            self._settle(state)
            state.later = _Later(path, stamp, key, lines)

    def saw_view(
        self, session: str, path: str, digest: str, first: int, last: int, max_chars: int
    ) -> None:
        """`session` was shown lines `first`..`last` of content `digest` (the snapshots
        keep its text), each line of at most `max_chars` characters whole."""
        with self._lock:
            _, entry = self._entry(session, path)
            entry.views.insert(0, (next(self._stamps), digest, first, last, max_chars))
            del entry.views[MAX_VIEWS:]

    def saw_anchored(self, session: str, path: str, digest: str, first: int, last: int) -> None:
        """`session` got lines `first`..`last` of content `digest` with their anchors."""
        with self._lock:
            _, entry = self._entry(session, path)
            view = (digest, first, last)
            if view not in entry.anchored:
                entry.anchored.insert(0, view)
                del entry.anchored[MAX_VIEWS:]

    def holds_anchors(self, session: str, path: str, digest: str, first: int, last: int) -> bool:
        """Whether `session` got anchors for all of lines `first`..`last` of `digest`."""
        with self._lock:
            entry = self._find(session, path)
            if entry is None:
                return False
            return any(d == digest and a <= first and last <= b for d, a, b in entry.anchored)

    def lines(self, session: str, path: str, expand: Expand) -> dict[int, int]:
        """The lines `session` was shown of `path` (number -> hash), the newer entry
        where two name one line; `expand` turns a view into its lines."""
        with self._lock:
            state = self._sessions.get(session)
            if state is not None and state.later is not None and state.later.path == path:
                self._settle(state)
            entry = self._find(session, path)
            if entry is None:
                return {}
            stamped, views = dict(entry.lines), list(entry.views)
        for stamp, digest, first, last, max_chars in reversed(views):  # oldest first
            for number, value in expand(digest, first, last, max_chars).items():
                if stamped.get(number, (0, 0))[0] < stamp:
                    stamped[number] = (stamp, value)
        return {number: value for number, (_, value) in stamped.items()}

    def replace(self, session: str, path: str, lines: Mapping[int, int]) -> None:
        """What `session` holds of `path` after its own edit: `lines` only (see `moved`);
        its views and anchored views are of content that is no more."""
        with self._lock:
            state, entry = self._entry(session, path)
            if state.later is not None and state.later.path == path:
                state.later = None  # of content that is no more
            stamp = next(self._stamps)
            state.lines += len(lines) - len(entry.lines)
            entry.lines = {number: (stamp, value) for number, value in lines.items()}
            entry.views, entry.anchored = [], []
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
                if state.later is not None and state.later.path == path:
                    state.later = None
                entry = state.files.pop(path, None)
                if entry is not None:
                    state.lines -= len(entry.lines)

    def _find(self, session: str, path: str) -> _File | None:
        state = self._sessions.get(session)
        return state.files.get(path) if state else None

    def _entry(self, session: str, path: str) -> tuple[_Session, _File]:
        """The session's entry of `path`, made the most recently shown."""
        state = self._sessions.setdefault(session, _Session())
        entry = state.files.pop(path, None) or _File()
        state.files[path] = entry
        return state, entry

    def _settle(self, state: _Session) -> None:
        """Hash the session's lines waiting unhashed into their file's entry, where no
        newer entry showed those lines since."""
        later, state.later = state.later, None
        entry = state.files.get(later.path) if later is not None else None
        if later is None or entry is None:
            return
        before = len(entry.lines)
        for number, value in later.lines().items():
            if entry.lines.get(number, (0, 0))[0] < later.stamp:
                entry.lines[number] = (later.stamp, value)
        state.lines += len(entry.lines) - before
        self._trim(state)

    def _trim(self, state: _Session) -> None:
        while len(state.files) > 1 and (
            state.lines > self.max_lines or len(state.files) > self.max_files
        ):
            path, dropped = state.files.popitem(last=False)
            state.lines -= len(dropped.lines)
            if state.later is not None and state.later.path == path:
                state.later = None
        if state.lines > self.max_lines:  # one file alone: keep its newest lines
            (entry,) = state.files.values()
            oldest = sorted(entry.lines, key=lambda number: entry.lines[number][0])
            for number in oldest[: state.lines - self.max_lines]:
                del entry.lines[number]
            state.lines = len(entry.lines)


def moved(
    lines: Mapping[int, int], spans: Sequence[tuple[int, int, int]], shown: Mapping[int, int]
) -> dict[int, int]:
    """The lines a session holds after its edit: each span (first, last+1, new count;
    1-based old numbers, in order) replaced its lines, so the lines outside move with
    the edit and those inside are gone; `shown` (new numbers) is what the edit's answer
    showed."""
    result: dict[int, int] = {}
    for number, value in lines.items():
        shift = 0
        for first, end, count in spans:
            if number >= end:
                shift += count - (end - first)
            elif number >= first:
                break
        else:
            result[number + shift] = value
    result.update(shown)
    return result
