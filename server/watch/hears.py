"""What a cache of file metadata asks the watcher (search/mtimes.py): whether every
change to a folder's entries is reported now, and to be told of each one.

Only readkeeper's own inotify reader answers yes, for the folders it holds a watch on,
while the watcher is `watching`: a folder the ignore rules or `watch_exclude` skip has
no watch, Watchman and polling are not asked, and a watcher setting up, fallen back or
missing a root hears nothing for sure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .backends import Observer
    from .intake import Intake


class Hears:
    """The watcher's side of it (a base of `Watcher`)."""

    state: str
    intake: Intake
    _observer: Observer | None

    def hears(self, folder: bytes) -> bool:
        """Whether every change to the entries of `folder` (absolute) is reported now."""
        if self.state != "watching":
            return False
        is_watched = getattr(self._observer, "is_watched", None)
        return bool(is_watched(folder)) if is_watched is not None else False

    def listen(self, listener: Callable[[str, str | None, bool], None]) -> None:
        """Call `listener(path, moved_to, is_dir)` for every event from now on."""
        self.intake.listeners.append(listener)
