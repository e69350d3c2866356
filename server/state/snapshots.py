"""What each read showed, kept for a while, so an edit can prove a change is disjoint.

When a file changed between an agent's read and its edit, the edit is refused unless the
change provably does not touch the edited text; that proof needs the text the agent
read. The read path puts it here (files read whole, within the read caps), keyed by
the real path and the digest the read-state recorded, so every session that saw the
same content shares one copy. The store is an LRU bounded in entries and characters:
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


class Snapshots:
    """What reads (and edits) showed, by real path and digest: one LRU for every session."""

    def __init__(
        self, max_entries: int = DEFAULT_MAX_ENTRIES, max_chars: int = DEFAULT_MAX_CHARS
    ) -> None:
        self.max_entries = max_entries
        self.max_chars = max_chars
        self._items: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def put(self, path: str, content_digest: str, text: str) -> None:
        """Keep `text`, recorded as `content_digest`, as the newest (not kept when it alone
        is over `max_chars`)."""
        if len(text) > self.max_chars:
            return
        key = (path, content_digest)
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return
            self._items[key] = text
            self._chars += len(text)
            while len(self._items) > self.max_entries or self._chars > self.max_chars:
                _, dropped = self._items.popitem(last=False)
                self._chars -= len(dropped)

    def touch(self, path: str, content_digest: str) -> None:
        """Count the text recorded as `content_digest` as just used, when it is kept: a
        re-read answered without reading the file uses it as a read that puts it does."""
        with self._lock:
            if (path, content_digest) in self._items:
                self._items.move_to_end((path, content_digest))

    def get(self, path: str, content_digest: str) -> str | None:
        """The text recorded as `content_digest`, or None when it was never kept or was
        evicted."""
        key = (path, content_digest)
        with self._lock:
            text = self._items.get(key)
            if text is not None:
                self._items.move_to_end(key)
            return text

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)
