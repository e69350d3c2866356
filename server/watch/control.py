"""The watcher's life as the front ends and the settings decide it: started after
`initialized`, started again when a watch setting changes, told when the roots change,
stopped on `shutdown`, and never started again once closed. One watcher at a time.

The core holds one `WatchControl` and hands these calls to it; the watcher's modules are
imported on the first start, not when the server starts.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..files.paths import Workspace
from ..settings import Settings
from ..state.readstate import ReadStates
from ..state.stats import Stats

if TYPE_CHECKING:
    from .changes import ChangeNotices
    from .watcher import Watcher

# The setup's steps, ("begin" | "report" | "end", message), for a progress display.
Progress = Callable[[str, str], None]


class WatchControl:
    """Starts, restarts and stops the workspace's watcher."""

    def __init__(
        self,
        workspace: Workspace,
        settings: Callable[[], Settings],
        notices: Callable[[], ChangeNotices],
        read_states: ReadStates,
        stats: Stats,
    ) -> None:
        self._workspace = workspace
        self._settings = settings
        self._notices = notices  # made on first use (the watch modules load with it)
        self._read_states = read_states
        self._stats = stats
        self.watcher: Watcher | None = None
        self._lock = threading.RLock()
        self._wanted = False
        self._closed = False  # after `close`, the watcher is never started again
        self._callbacks: tuple[Callable[[str], None] | None, Progress | None] = (None, None)

    def load(self) -> None:
        """Import the watcher's modules (its backends, pathspec) and make the change
        notices now, so that `start` does not: for a front end that would rather pay for
        them on a thread than where it calls `start`."""
        from . import watcher  # noqa: F401

        self._notices()

    def start(
        self, warn: Callable[[str], None] | None = None, progress: Progress | None = None
    ) -> bool:
        """Start watching the workspace roots (in the background: this returns at once).
        False when the `watch` setting is off, or after `close`. `warn` gets the one-off
        warnings (e.g. the fallback to polling), `progress` the setup's steps."""
        from .watcher import WatchCallbacks, Watcher

        with self._lock:
            if self._closed:
                return False
            self._wanted = True
            self._callbacks = (warn, progress)
            settings = self._settings()
            if self.watcher is not None or not settings.watch:
                return False
            notices = self._notices()
            notices.unwatched.covers = self.covers  # the rest are looked at when asked
            callbacks = WatchCallbacks(notices.process, self._read_states.files)
            if warn is not None:
                callbacks.warn = warn
            callbacks.progress = progress
            self.watcher = Watcher(self._workspace.roots, settings, callbacks, self._stats.watch)
            self.watcher.start()
            return True

    def stop(self) -> None:
        """Stop the watcher and every thread it started."""
        with self._lock:
            self._wanted = False
            watcher, self.watcher = self.watcher, None
        if watcher is not None:
            watcher.stop()

    def close(self) -> None:
        """Stop the watcher for good (the server is shutting down)."""
        with self._lock:
            self._closed = True
        self.stop()

    def roots_changed(self) -> None:
        """The workspace roots changed: the watcher follows."""
        with self._lock:
            if self.watcher is not None:
                self.watcher.set_roots(self._workspace.roots)

    def covers(self, path: str) -> bool:
        """Whether a live watch reports every change to the file `path` (hears.py)."""
        watcher = self.watcher
        return watcher is not None and watcher.covers(path)

    def status(self) -> dict[str, Any]:
        """The watcher's state and counters, as `readkeeper/stats` shows them."""
        with self._lock:
            watcher = self.watcher
        status: dict[str, Any] = {"state": "off"} if watcher is None else watcher.status()
        status.update(self._stats.watch.as_dict())
        return status

    def settings_changed(self) -> None:
        """The settings were replaced: if a watch setting changed, start again with it,
        in the background."""
        settings = self._settings()
        with self._lock:
            watcher = self.watcher
            if not self._wanted:
                return
            if watcher is not None and _watch_settings(watcher.settings) == _watch_settings(
                settings
            ):
                return
            if watcher is None and not settings.watch:
                return
            warn, progress = self._callbacks

        def restart() -> None:
            with self._lock:
                if self.watcher is not watcher:
                    return  # someone else restarted or stopped it meanwhile
                self.watcher = None
            if watcher is not None:
                watcher.stop()
            with self._lock:
                if self._wanted:
                    self.start(warn, progress)

        threading.Thread(target=restart, name="readkeeper-watch-restart", daemon=True).start()


def _watch_settings(settings: Settings) -> tuple[Any, ...]:
    return (
        settings.watch,
        settings.watcher,
        settings.watch_exclude,
        settings.watch_debounce_ms,
        settings.watch_poll_interval_ms,
        settings.watch_force_polling,
    )
