"""The backends: which one watches the workspace, what it falls back to, and starting
the observer.

The `watcher` setting picks the backend: the observer (`inotify`: readkeeper's own
inotify reader on Linux, inotify.py; watchdog's observer elsewhere, imported then, not
at start-up), Watchman (watchman.py) or polling. `auto` uses Watchman when it already
watches every root, or when the inotify setup walk passes `_WATCHMAN_OVER_FOLDERS`
folders (Linux), else the observer. The fallback goes Watchman, then inotify, then
polling: a backend that cannot be reached, breaks for good, or is refused more watches
by the kernel hands its roots to the next one (watcher.py).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..settings import Settings
from . import watchman
from .intake import event_filter

if TYPE_CHECKING:
    from .inotify import Hooks
    from .intake import Intake

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
    """The backend cannot work here at all (this libc lacks inotify's calls)."""


class TooBig(Exception):
    """`auto`: the inotify setup walk passed the folders Watchman takes over at."""


class Observer(Protocol):
    """What watches the roots when Watchman does not: inotify.py's reader on Linux,
    watchdog's observer elsewhere."""

    def watch(self, root: str) -> Any:
        """Watch `root` recursively; the handle `unwatch` takes."""
        ...

    def unwatch(self, handle: Any) -> None:
        """Stop watching one root."""
        ...

    def stop(self) -> None:
        """Stop every watch, and the threads, waiting for them."""
        ...


def start_observer(hooks: Hooks, intake: Intake) -> Observer:
    """A started observer: on Linux readkeeper's own inotify reader (inotify.py), which
    asks `hooks` where to descend, reports limits and overflows to it, and hands it
    each change; elsewhere watchdog's, whose events go to `intake`."""
    if sys.platform.startswith("linux"):
        from . import inotify

        if not inotify.watches_supported():
            raise Unsupported("this C library lacks inotify's calls")
        observer: Observer = inotify.Inotify(hooks)
    else:
        observer = _Watchdog(intake)
    return observer


class _Watchdog:
    """watchdog's observer (FSEvents, ReadDirectoryChangesW: one watch per tree, nothing
    to prune), its events through `Intake.handler`."""

    def __init__(self, intake: Intake) -> None:
        from watchdog.observers import Observer as WatchdogObserver

        self._intake = intake
        self._observer = WatchdogObserver()
        self._observer.start()

    def watch(self, root: str) -> Any:
        handler = self._intake.handler()
        return self._observer.schedule(handler, root, recursive=True, event_filter=event_filter())

    def unwatch(self, handle: Any) -> None:
        with contextlib.suppress(Exception):
            self._observer.unschedule(handle)

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self._observer.stop()
        with contextlib.suppress(RuntimeError):
            self._observer.join(STOP_TIMEOUT)


@dataclass
class Reports:
    """watchman.py's view of the watcher (a `watchman.Sink`): where a subscription's
    reports go."""

    on_changes: Callable[[list[watchman.Change]], None]
    on_fresh: Callable[[str], None]
    on_lost: Callable[[str, str], None]  # the root, and why it was lost

    def changed(self, root: str, changes: list[watchman.Change]) -> None:
        """Paths under `root` changed."""
        self.on_changes(changes)

    def fresh(self, root: str) -> None:
        """Changes under `root` may have been missed."""
        self.on_fresh(root)

    def lost(self, root: str, reason: str) -> None:
        """The subscription of `root` ended for good (the watcher asks whether its folder
        went)."""
        self.on_lost(root, reason)
