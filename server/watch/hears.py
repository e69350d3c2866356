"""What a cache of file metadata asks the watcher (search/mtimes.py, search/kept.py):
whether every change to a folder's entries is reported now, to be told of each one,
whether every change made so far has been told, and which folders no watch hears.

Only readkeeper's own inotify reader answers yes, for the folders it holds a watch on,
while the watcher is `watching`: a folder the ignore rules or `watch_exclude` skip has
no watch, Watchman and polling are not asked, and a watcher setting up, fallen back or
missing a root hears nothing for sure.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from .suspects import Suspects

if TYPE_CHECKING:
    from ..files.ignore import IgnoreRules
    from ..state.stats import WatchCounters
    from .backends import Observer
    from .intake import Intake

# Folders skipped by the ignore rules remembered at most; past that a cache trusts none.
MAX_SKIPPED = 10_000
# The deepest folder beneath its root that gets a watch, in names; deeper ones are left
# unwatched as the ignore rules leave theirs, so the files read there are looked at when
# changes are asked (unwatched.py). Real trees stay far within it; each folder of a chain
# 2,000 deep cost its depth to open and to hold, and 40 such chains took 45 s of the
# watch's set-up and 363 MB (found beside round 47).
MAX_DEPTH = 128


class Hears:
    """The watcher's side of it (a base of `Watcher`)."""

    state: str
    intake: Intake
    counters: WatchCounters
    _observer: Observer | None
    _skipped: dict[bytes, None] | None = None  # folders left unwatched by the rules
    _suspects: Suspects | None = None
    _suspects_since = 0  # the queue's overflows when the suspects were first gathered
    _suspects_lock = threading.Lock()

    def hears(self, folder: bytes) -> bool:
        """Whether every change to the entries of `folder` (absolute) is reported now."""
        if self.state != "watching":
            return False
        is_watched = getattr(self._observer, "is_watched", None)
        return bool(is_watched(folder)) if is_watched is not None else False

    def covers(self, path: str) -> bool:
        """Whether a live watch reports every change to the file `path` (absolute): the
        inotify reader, watching, with a watch on its folder, the ignore rules keeping
        it. Watchman (whose `.watchmanconfig` the repository writes) and polling never
        do: the change notices look at such files themselves (unwatched.py)."""
        rules = self.intake.rules_for(path)
        folder = os.fsencode(os.path.dirname(path))
        if rules is None or not self.hears(folder):
            return False
        return not rules.ignored(path, False)

    def era(self) -> object | None:
        """What stays the same while no event can have been missed (the inotify reader
        in use, the count of its queue's overflows, of the times it removed watches: a
        root unwatched, a folder moved out); None when no event is sure."""
        if self.state != "watching" or getattr(self._observer, "quiet", None) is None:
            return None
        return (self._observer, self.counters.overflows, getattr(self._observer, "drops", 0))

    def quiet(self) -> bool:
        """Whether every change made before this call has been told to the listeners."""
        quiet = getattr(self._observer, "quiet", None)
        return self.state == "watching" and quiet is not None and bool(quiet())

    def listen(self, listener: Callable[[str, str | None, bool, str], None]) -> None:
        """Call `listener(path, moved_to, is_dir, kind)` for every event from now on."""
        self.intake.listeners.append(listener)

    def watched_under(self, under: bytes) -> list[bytes]:
        """The folders under `under` (absolute) that have a watch now."""
        watches = getattr(self._observer, "_watches", None)
        prefix = under + b"/"
        return [f for f in list(watches or ()) if f.startswith(prefix)]

    def skipped(self, under: bytes) -> list[bytes] | None:
        """The folders under `under` (absolute) the ignore rules left unwatched; None
        when more than MAX_SKIPPED were met (then none is known for sure)."""
        skipped = self._skipped
        if skipped is not None and len(skipped) > MAX_SKIPPED:
            return None
        prefix = under + b"/"
        return [f for f in list(skipped or ()) if f.startswith(prefix)]

    def suspect_files(self) -> Suspects:
        """The tree's suspects (watch/suspects.py), told of every event from the first
        walk on."""
        with self._suspects_lock:
            if self._suspects is None:
                self._suspects = Suspects()
                self._suspects_since = self.counters.overflows
                self.intake.listeners.append(self._suspects.heard)
            return self._suspects

    def suspects(self, under: bytes) -> list[bytes] | None:
        """The entries beneath `under` (absolute) ripgrep could wait on (search/stalls.py
        looks at each again); None unless every one is known: inotify is watching and
        no event was lost."""
        if self.era() is None or self.counters.overflows != self._suspects_since:
            return None
        return self.suspect_files().under(under)

    def kept_folders(self, found: list[bytes], rules: IgnoreRules) -> list[bytes]:
        """Those of the folders `found` the ignore rules keep (a watch for each); the
        others are remembered as skipped."""
        kept = []
        for folder in found:
            if self.skips_by(folder, rules):
                continue
            kept.append(folder)
        return kept

    def skips_by(self, folder: bytes, rules: IgnoreRules | None) -> bool:
        """Whether the rules skip `folder`, or it lies more than `MAX_DEPTH` folders
        beneath its root (remembered when so)."""
        if rules is not None:
            depth = folder.count(b"/") - os.fsencode(rules.root.rstrip("/")).count(b"/")
            if depth <= MAX_DEPTH and not rules.ignored(os.fsdecode(folder), True):
                return False
        if self._skipped is None:
            self._skipped = {}
        if len(self._skipped) <= MAX_SKIPPED:
            self._skipped[folder] = None
        self.counters.skipped_folders += 1
        return True


class Heard(Protocol):
    """The watcher as glob's cache (search/mtimes.py) sees it: what this module tells."""

    def hears(self, folder: bytes) -> bool:
        """Whether every change to the entries of `folder` is reported now."""
        ...

    def era(self) -> object | None:
        """The same while no event can have been missed; None when none is sure."""
        ...

    def quiet(self) -> bool:
        """Whether every change made before this call has been told."""
        ...

    def watched_under(self, under: bytes) -> list[bytes]:
        """The folders under `under` that have a watch now."""
        ...

    def skipped(self, under: bytes) -> list[bytes] | None:
        """The folders under `under` the watcher's ignore rules leave unwatched."""
        ...

    def listen(self, listener: Callable[[str, str | None, bool, str], None]) -> None:
        """Be told of every event from now on."""
        ...

    def suspects(self, under: bytes) -> list[bytes] | None:
        """The entries under `under` ripgrep could wait on (watch/suspects.py)."""
        ...
