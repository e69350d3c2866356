"""What each read showed, kept for a while, so an edit can prove a change is disjoint.

When a file changed between an agent's read and its edit, the edit is refused unless the
change provably does not touch the edited text; that proof needs the text the agent
read. The read path puts it here (files read whole, within the read caps), keyed by
the real path and the digest the read-state recorded, so every session that saw the
same content shares one copy. The store is an LRU bounded in entries and characters
(and a second one, with a budget of its own, for the files a search showed lines of):
a snapshot that has been evicted only means a changed file's edit is refused with
`stale` instead of merged, never that anything is lost. The same copies are what a
re-read of a changed file (read/delta.py) and a change notice (watch/changes.py) diff
from.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

DEFAULT_MAX_ENTRIES = 512
DEFAULT_MAX_CHARS = 32 * 1024 * 1024
# A search's snapshots (search/seen.py: the files whose lines a grep showed) have a
# budget of their own: a grep of up to 2,000 files would otherwise evict every read's.
DEFAULT_SEARCHED_ENTRIES = 512
DEFAULT_SEARCHED_CHARS = 16 * 1024 * 1024


class _Lru:
    """One budget: entries by key, the oldest dropped past `max_entries` or `max_chars`."""

    def __init__(self, max_entries: int, max_chars: int) -> None:
        self.max_entries = max_entries
        self.max_chars = max_chars
        self.items: OrderedDict[tuple[str, str], str] = OrderedDict()
        self.chars = 0

    def add(self, key: tuple[str, str], text: str) -> None:
        self.items[key] = text
        self.chars += len(text)
        while len(self.items) > self.max_entries or self.chars > self.max_chars:
            _, dropped = self.items.popitem(last=False)
            self.chars -= len(dropped)

    def pop(self, key: tuple[str, str]) -> str | None:
        text = self.items.pop(key, None)
        if text is not None:
            self.chars -= len(text)
        return text


class Snapshots:
    """What reads (and edits) showed, by real path and digest: one LRU for every session,
    and one of their own for what searches showed (`searched`), which never evicts the
    first: a search kept a snapshot the agent may never edit from, a read one it will."""

    def __init__(
        self,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        max_chars: int = DEFAULT_MAX_CHARS,
        searched_entries: int = DEFAULT_SEARCHED_ENTRIES,
        searched_chars: int = DEFAULT_SEARCHED_CHARS,
    ) -> None:
        self._read = _Lru(max_entries, max_chars)
        self._searched = _Lru(searched_entries, searched_chars)
        self._lock = threading.Lock()

    @property
    def max_entries(self) -> int:
        """The reads' budget in entries (a search's is apart)."""
        return self._read.max_entries

    def put(self, path: str, content_digest: str, text: str, *, searched: bool = False) -> None:
        """Keep `text`, recorded as `content_digest`, as the newest of its budget (a
        search's when `searched`; not kept when it alone is over that budget's chars).
        A read's put of what a search kept moves it to the reads' budget; a search's put
        of what a read kept only counts it as used."""
        key = (path, content_digest)
        with self._lock:
            if key in self._read.items:
                self._read.items.move_to_end(key)
                return
            if searched:
                if key in self._searched.items:
                    self._searched.items.move_to_end(key)
                elif len(text) <= self._searched.max_chars:
                    self._searched.add(key, text)
                return
            self._searched.pop(key)
            if len(text) <= self._read.max_chars:
                self._read.add(key, text)

    def touch(self, path: str, content_digest: str) -> None:
        """Count the text recorded as `content_digest` as just used, when it is kept: a
        re-read answered without reading the file uses it as a read that puts it does."""
        key = (path, content_digest)
        with self._lock:
            for lru in (self._read, self._searched):
                if key in lru.items:
                    lru.items.move_to_end(key)

    def get(self, path: str, content_digest: str) -> str | None:
        """The text recorded as `content_digest`, or None when it was never kept or was
        evicted."""
        key = (path, content_digest)
        with self._lock:
            for lru in (self._read, self._searched):
                text = lru.items.get(key)
                if text is not None:
                    lru.items.move_to_end(key)
                    return text
            return None

    def __len__(self) -> int:
        with self._lock:
            return len(self._read.items) + len(self._searched.items)
