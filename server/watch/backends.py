"""The backends: which one watches the workspace, what it falls back to, and starting
and stopping watchdog's observer.

The `watcher` setting picks the backend: a watchdog observer (`inotify`; watchdog is
imported then, not at start-up), Watchman (watchman.py) or polling. `auto` uses Watchman
when it already watches every root, or when the inotify setup walk passes
`_WATCHMAN_OVER_FOLDERS` folders (Linux), else the observer. The fallback goes Watchman,
then inotify, then polling: a backend that cannot be reached, breaks for good, or is
refused more watches by the kernel hands its roots to the next one (watcher.py).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..settings import Settings
from . import watchman

if TYPE_CHECKING:
    from .observer import Hooks

Backend = Literal["watchman", "inotify", "polling"]

STOP_TIMEOUT = 5.0  # seconds to wait for a thread of the watcher's to end
# `auto` on Linux: an inotify setup walk that passes this many folders (ignored ones do
# not count) hands the workspace to Watchman. Below it the walk takes well under a
# second and its watches are a small share of the per-user budget (8,192 on kernels
# before 5.11); above it Watchman's shared crawl is the cheaper watch.
_WATCHMAN_OVER_FOLDERS = 10_000


def chain(settings: Settings, roots: Sequence[str]) -> tuple[list[Backend], int | None]:
    """The backends to try, in order (the `watcher` setting; `auto` asks Watchman), and
    with `auto`, the folders the inotify setup walk may pass before Watchman takes over."""
    setting = "polling" if settings.watch_force_polling else settings.watcher
    if setting == "polling":
        return ["polling"], None
    if setting == "inotify":
        return ["inotify", "polling"], None
    if setting == "watchman":
        return ["watchman", "inotify", "polling"], None
    if not watchman.installed():
        return ["inotify", "polling"], None
    if watchman.watches(roots):
        return ["watchman", "inotify", "polling"], None
    return ["inotify", "watchman", "polling"], _WATCHMAN_OVER_FOLDERS


def fallback_message(left: Backend, reason: str, successor: Backend, interval: float) -> str:
    """The one warning the user gets when `left` is left for `successor`, and why."""
    sure = "reads and edits still check each file themselves."
    if successor != "polling":
        return f"readkeeper: {reason}. It watches the workspace with inotify instead; {sure}"
    if left == "inotify":
        advice = (
            "add large folders to readkeeper.watch_exclude or raise the limit (e.g. sudo "
            "sysctl fs.inotify.max_user_watches=524288)"
        )
    else:
        advice = "start Watchman, or add large folders to readkeeper.watch_exclude"
    return (
        f"readkeeper: {reason}. It now checks the files agents have read every "
        f"{interval:g} s instead of watching the workspace, so change notices may "
        f"come that much later; {sure} To watch again, {advice}, then restart the server."
    )


class Unsupported(Exception):
    """The backend cannot work here at all (the installed watchdog lacks its hooks)."""


class TooBig(Exception):
    """`auto`: the inotify setup walk passed the folders Watchman takes over at."""


def start_observer(hooks: Hooks) -> Any:
    """A started watchdog observer: on Linux the pruned inotify one (observer.py), which
    asks `hooks` where to descend and reports limits and overflows to it."""
    if sys.platform.startswith("linux"):
        from . import observer as pruned

        if not pruned.COMPATIBLE:
            raise Unsupported("the installed watchdog lacks the inotify hooks readkeeper extends")
        observer: Any = pruned.PrunedObserver(hooks)
    else:  # FSEvents, ReadDirectoryChangesW: one watch per tree, nothing to prune
        from watchdog.observers import Observer

        observer = Observer()
    observer.start()
    return observer


def stop_observer(observer: Any) -> None:
    """Stop a watchdog observer and every watch it holds, waiting for its threads."""
    if observer is None:
        return
    with contextlib.suppress(Exception):
        observer.stop()
    with contextlib.suppress(RuntimeError):
        observer.join(STOP_TIMEOUT)


@dataclass
class Reports:
    """watchman.py's view of the watcher (a `watchman.Sink`): where a subscription's
    reports go."""

    on_changes: Callable[[list[watchman.Change]], None]
    on_fresh: Callable[[str], None]
    on_lost: Callable[[str], None]  # why it was lost

    def changed(self, root: str, changes: list[watchman.Change]) -> None:
        """Paths under `root` changed."""
        self.on_changes(changes)

    def fresh(self, root: str) -> None:
        """Changes under `root` may have been missed."""
        self.on_fresh(root)

    def lost(self, root: str, reason: str) -> None:
        """The subscription of `root` ended for good."""
        self.on_lost(reason)
