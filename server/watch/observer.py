"""watchdog's inotify observer, pruned to what the watcher watches (Linux).

A recursive inotify watch costs one kernel watch per folder, and the watches are a
per-user budget shared with the editor and every other tool. watchdog's recursive
watch adds one for every folder under the root (node_modules and .git included) and
quietly skips any folder the kernel refuses, so a monorepo either exhausts the budget
or ends up half watched without anyone knowing. This module extends watchdog's inotify
watch group (7.1+), emitter and reader at six points, and leaves the rest (reading
inotify, pairing moves, following renamed folders, rebuilding after a queue overflow)
to watchdog:

- the walk that adds watches asks `Hooks.subfolders` which folders to descend into, so
  ignored folders cost no watch and no walk;
- a watch the kernel refuses for lack of room (ENOSPC, EMFILE) is reported through
  `Hooks.limit_reached`, and aborts the initial setup with `WatchLimitReached`;
- the events simulated for a folder that appears whole (moved in, `mkdir -p`) skip
  ignored folders too;
- a kernel queue overflow is reported (`Hooks.overflowed`), so files agents have read
  can be re-checked;
- events go from the emitter's thread straight to `Hooks.event`, not through watchdog's
  event queue and dispatch thread (whose handler stays registered, and idle);
- inotify is read in batches: once an event is there, `BATCH_SECONDS` pass before the
  read (each read wakes three threads).

Its threads carry names (`rk-watch-*`, at most 15 bytes) in /proc/<pid>/task/*/comm and `ps -L`.
Imported only when watching starts, never at server start-up.
"""

from __future__ import annotations

import contextlib
import errno
import os
import time
from dataclasses import dataclass
from typing import Any, Protocol

from watchdog.events import FileSystemEvent
from watchdog.observers.api import DEFAULT_OBSERVER_TIMEOUT, BaseObserver, EventQueue, ObservedWatch
from watchdog.observers.inotify import InotifyEmitter, InotifyWatchGroup
from watchdog.observers.inotify_c import InotifyConstants, InotifyEvent, InotifyFD, Mask

from .threads import is_folder, name_os_thread

_LIMIT_ERRNOS = (errno.ENOSPC, errno.EMFILE)
# How long inotify's events gather once one is there, before they are read (below).
BATCH_SECONDS = 0.005
# The private hooks this module overrides; checked once so that a watchdog release
# that renames them makes the watcher fall back to polling instead of half-working.
_REQUIRED = ("_add_all_callbacks", "_add_callback", "_recursive_simulate", "on_queue_overflow")
COMPATIBLE = all(callable(getattr(InotifyWatchGroup, name, None)) for name in _REQUIRED)


class Hooks(Protocol):
    """What the observer asks and tells the watcher, on the observer's threads."""

    def subfolders(self, folder: bytes) -> list[bytes]:
        """The folders inside `folder` to watch (not ignored, not symlinks)."""
        ...

    def limit_reached(self, error: OSError) -> None:
        """The kernel refused a watch (ENOSPC, EMFILE) while watching."""
        ...

    def overflowed(self) -> None:
        """The kernel's event queue overflowed: events were lost."""
        ...

    def event(self, event: FileSystemEvent) -> None:
        """One event of a kind the watch is filtered to, on an emitter's thread."""
        ...


class WatchLimitReached(OSError):
    """The kernel refused a watch while a root was being set up."""


@dataclass
class _Group(InotifyWatchGroup):
    hooks: Hooks | None = None

    def _add_all_callbacks(self, path: bytes) -> None:
        self._add_callback(path)
        if not self.is_recursive or self.hooks is None or not os.path.isdir(path):
            return
        stack = [path]
        while stack:
            for folder in self.hooks.subfolders(stack.pop()):
                self._add_callback(folder)
                stack.append(folder)

    def _add_callback(self, path: bytes) -> None:
        try:
            wd = self._inotify_fd.add_callback(path, self.event_mask, self._callback, self._id)
        except OSError as exc:
            if exc.errno in _LIMIT_ERRNOS:
                if self.hooks is not None:
                    self.hooks.limit_reached(exc)
                if not self.is_active:  # setting up: stop here, the caller falls back
                    raise WatchLimitReached(exc.errno, exc.strerror) from exc
                return
            if path == self.path:
                raise
            return  # a folder that vanished or is unreadable while being walked
        self._active_callbacks_by_path[path] = wd
        self._active_callbacks_by_watch[wd] = path

    def _recursive_simulate(self, src_path: bytes) -> list[InotifyEvent]:
        events: list[InotifyEvent] = []
        stack = [src_path]
        while stack:
            folder = stack.pop()
            wd = self._active_callbacks_by_path.get(folder)
            if wd is None:  # ignored, or not watched yet: its own events will come
                continue
            try:
                with os.scandir(folder) as entries:
                    found = [(e.name, e.path, is_folder(e)) for e in entries]
            except OSError:
                continue
            for name, path, a_folder in found:
                if a_folder:
                    mask = Mask(InotifyConstants.IN_CREATE | InotifyConstants.IN_ISDIR)
                    stack.append(path)
                else:
                    mask = Mask(InotifyConstants.IN_CREATE)
                events.append(InotifyEvent(wd, mask, 0, name))
        return events

    def on_queue_overflow(self) -> None:
        super().on_queue_overflow()
        if self.hooks is not None:
            self.hooks.overflowed()


class _Emitter(InotifyEmitter):
    def __init__(
        self,
        event_queue: EventQueue,
        watch: ObservedWatch,
        *,
        hooks: Hooks,
        **kwargs: Any,
    ) -> None:
        super().__init__(event_queue, watch, **kwargs)
        self._hooks = hooks
        kinds = getattr(self, "_event_filter", None)  # None: every kind (intake.py sorts)
        self._kinds = None if kinds is None else tuple(kinds)
        self.name = "readkeeper-watch-emitter"

    def on_thread_start(self) -> None:
        self._inotify = _Group(
            self._inotify_fd,
            os.fsencode(self.watch.path),
            is_recursive=self.watch.is_recursive,
            event_mask=self.get_event_mask_from_filter(),
            follow_symlink=False,
            hooks=self._hooks,
        )

    def queue_event(self, event: FileSystemEvent) -> None:
        """Hand the event to the watcher here, on the emitter's thread, instead of
        through watchdog's event queue to its dispatch thread: two hand-offs between
        threads fewer per event (in a burst, each hand-off is a wake-up and a turn of
        the GIL)."""
        if self._kinds is None or isinstance(event, self._kinds):
            self._hooks.event(event)

    def run(self) -> None:
        name_os_thread("rk-watch-emit")
        super().run()


class _InotifyFD(InotifyFD):
    def run(self) -> None:
        name_os_thread("rk-watch-read")
        super().run()

    def _check_inotify_fd(self) -> bool:
        """Once inotify has events, let a few more milliseconds' worth gather before
        they are read: a burst is then read, parsed and handed on in batches instead of
        an event or two at a time, each a wake-up of three threads. The notices wait
        longer than this anyway (`watch_debounce_ms`)."""
        readable = super()._check_inotify_fd()
        if readable:
            time.sleep(BATCH_SECONDS)
        return readable


class PrunedObserver(BaseObserver):
    """An inotify observer of its own (one inotify instance, closed when it stops)."""

    def __init__(self, hooks: Hooks, timeout: float = DEFAULT_OBSERVER_TIMEOUT) -> None:
        inotify_fd = _InotifyFD()  # OSError EMFILE when the instance limit is reached
        inotify_fd.name = "readkeeper-watch-inotify"
        inotify_fd.start()
        self._inotify = inotify_fd
        super().__init__(_Emitter, timeout=timeout, inotify_fd=inotify_fd, hooks=hooks)
        self.name = "readkeeper-watch-observer"

    def run(self) -> None:
        """Dispatch events, on a thread named for `ps -L`."""
        name_os_thread("rk-watch-events")
        super().run()

    def on_thread_stop(self) -> None:
        """Stop the observer's own inotify instance with it."""
        super().on_thread_stop()
        self._inotify.stop()
        with contextlib.suppress(RuntimeError):
            self._inotify.join()
