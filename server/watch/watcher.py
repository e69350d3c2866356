"""The watcher: external changes to the workspace, noticed as they happen.

It tells the change notices (changes.py) which paths may have changed and decides
nothing itself: reads and edits always check the file (DESIGN.md, "Read-state: the
rules"), so a missed or late event costs a late notice, never a wrong answer. `Watcher`
sets up the backends, runs the worker thread, and leaves each step to a module:

- backends.py: which backend watches (the `watcher` setting, `auto`), what it falls
  back to, and starting the observer (readkeeper's own inotify reader on Linux,
  inotify.py; watchdog's elsewhere) or Watchman (watchman.py). One backend watches
  every workspace root, set up after `initialized` by a setup thread, so a large
  workspace never holds up a request; roots added later are watched the same way.
- intake.py: the backend's events, through the ignore rules (VCS folders, `watch_exclude`,
  .gitignore'd paths: ignore.py; skipped folders cost no inotify watch). .gitignore edits
  apply at once; a folder they un-ignore is watched from the next start.
- coalesce.py, worker.py: each path handed on once quiet (a burst is one change), by
  one thread; if it ends on an error, `stats` says `failed` and why (state/health.py).
- polling.py: roots no backend watches (`watch_force_polling`, `watcher` `polling`, an
  unreliable filesystem: probes.py) have their read files checked every
  `watch_poll_interval_ms`; after an overflow or a fallback every read file under the
  roots is re-checked against its read-state record.
- roots.py: a root whose folder is deleted, moved or replaced is missing until a folder
  is there again, then watched afresh.
- Fallback (backends.py): a backend unreachable, broken for good or refused more watches
  (ENOSPC, EMFILE) is stopped; one warning goes to `WatchCallbacks.warn`, the next
  backend watches the roots, and the read files are re-checked (events may be lost).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..files.ignore import IgnoreRules
from ..settings import Settings
from ..state.stats import WatchCounters
from ..words import count
from . import watchman
from .backends import (
    STOP_TIMEOUT,
    Backend,
    Observer,
    Reports,
    TooBig,
    Unsupported,
    chain,
    fallback_message,
    start_observer,
)
from .beneath_watch import folder_entries
from .coalesce import FsChange, Kind
from .hears import Hears
from .intake import Intake
from .probes import UNRELIABLE_FILESYSTEMS, filesystem_type, limit_reason
from .roots import FollowsRoots, RootLives, outermost
from .threads import name_os_thread
from .worker import Worker

log = logging.getLogger("readkeeper")

_PROGRESS_EVERY = 0.25  # seconds between progress reports during setup


@dataclass
class WatchCallbacks:
    """What the watcher calls. All of them run on the watcher's own threads."""

    changed: Callable[[list[FsChange]], None]
    # The files in the read-state: path -> (mtime_ns, size) of its newest record.
    read_files: Callable[[], dict[str, tuple[int, int]]]
    warn: Callable[[str], None] = log.warning
    # Setup progress: ("begin" | "report" | "end", message).
    progress: Callable[[str, str], None] | None = None


State = Literal["starting", "watching", "partial", "polling", "root_missing", "stopped", "failed"]


class Watcher(FollowsRoots, Hears):
    """Watches the workspace roots and hands the paths that may have changed to
    `WatchCallbacks.changed`, in batches, on its worker thread."""

    def __init__(
        self,
        roots: Sequence[str],
        settings: Settings,
        callbacks: WatchCallbacks,
        counters: WatchCounters | None = None,
    ) -> None:
        self.settings = settings
        self.counters = counters or WatchCounters()
        self._callbacks = callbacks
        self._interval = settings.watch_poll_interval_ms / 1000
        self._wanted = outermost(roots)
        self._rules: dict[str, IgnoreRules] = {}
        # root -> its observer's handle, or its watchman.Subscription
        self._watches: dict[str, Any] = {}
        self._polled: dict[str, str] = {}  # root -> why it is polled
        self.roots = RootLives()  # which folder each root was set up on; those missing
        self._observer: Observer | None = None
        self._backends: list[Backend] = []  # the one in use, then what it falls back to
        self._switch_at: int | None = None  # auto: folders walked before Watchman takes over
        self._walk_base = 0  # folders_walked when the current setup began
        self._starting: watchman.Subscription | None = None
        self._fallback: str | None = None
        self._warned: set[str] = set()
        self._stopping = threading.Event()
        self._worker = Worker(
            settings,
            self.counters,
            self._rules,
            self._polled,
            self._stopping,
            callbacks.changed,
            callbacks.read_files,
            self._leave,
            self._check_roots,
            lambda message: self._warn_once("worker", message),
        )
        lock, coalescer = self._worker.lock, self._worker.coalescer
        self.intake = Intake(self._rules, coalescer, lock, self.counters)
        self._setup_lock = threading.RLock()
        self._setups: list[threading.Thread] = []
        self._last_progress = 0.0
        self._setup_started = 0.0
        self.setup_seconds: float | None = None
        self.state: State = "starting"

    # --- lifecycle ----------------------------------------------------------------------

    def start(self) -> None:
        """Start the worker thread, and set up the watches in the background."""
        self._worker.thread.start()
        self._setup_async()

    def set_roots(self, roots: Sequence[str]) -> None:
        """Watch these roots from now on (set up in the background)."""
        self._wanted = outermost(roots)
        self._setup_async()

    def stop(self) -> None:
        """Stop every thread the watcher started, and release its watches."""
        self._stopping.set()
        self._worker.wake()
        starting = self._starting
        if starting is not None:  # a setup waiting on Watchman
            starting.stop()
        with self._setup_lock:  # a setup in progress ends its walk at the next folder
            self._release()
        for thread in [*self._setups, self._worker.thread]:
            if thread.is_alive() and thread is not threading.current_thread():
                thread.join(STOP_TIMEOUT)
        self.state = "stopped"

    def status(self) -> dict[str, Any]:
        """The watcher's state, as `readkeeper/stats` shows it: a root whose folder is
        gone or replaced this very moment is missing, not watched (roots.py)."""
        pending = self._worker.pending()
        watched, polled = list(self._watches), dict(self._polled)
        missing = self.roots.gone([*watched, *polled])
        watched = [r for r in watched if r not in missing]
        polled = {r: why for r, why in polled.items() if r not in missing}
        health = self._worker.health
        state: State = "failed" if health.down and self.state != "stopped" else self.state
        if missing and state in ("watching", "partial", "polling"):
            state = "partial" if watched or polled else "root_missing"
        return {
            "state": state,
            "backend": self._backends[0] if self._backends else None,
            "watched_roots": sorted(watched),
            "polled_roots": dict(sorted(polled.items())),
            "missing_roots": dict(sorted(missing.items())),
            "fallback_reason": self._fallback,
            "setup_ms": None if self.setup_seconds is None else self.setup_seconds * 1000,
            "pending_paths": pending,
            "failure": health.failure if state == "failed" else None,
        }

    # --- setup (watching roots) ---------------------------------------------------------

    def _setup_async(self) -> None:
        if self._stopping.is_set():
            return
        thread = threading.Thread(target=self._setup, name="readkeeper-watch-setup", daemon=True)
        self._setups = [t for t in self._setups if t.is_alive()]
        self._setups.append(thread)
        thread.start()

    def _setup(self) -> None:
        name_os_thread("rk-watch-setup")
        try:
            with self._setup_lock:
                self._reconcile()
        except Exception:  # never take the server down; reads still check files
            log.exception("readkeeper: setting up the watcher failed")
            self._warn_once("setup", "readkeeper: the watcher could not start; see the log.")
            with self._setup_lock:  # what it did not set up is polled
                for root in self._wanted:
                    if root not in self._watches and root in self._rules:
                        self._polled.setdefault(root, "the watcher could not start")
                self._update_state()

    def _reconcile(self) -> None:
        if self._stopping.is_set():
            return
        wanted = list(self._wanted)
        if not self._backends:
            self._backends, self._switch_at = chain(self.settings, self._wanted)
        for root in [r for r in self._watches if r not in wanted]:
            self._unwatch(self._watches.pop(root))
        for root in [r for r in self._polled if r not in wanted]:
            del self._polled[root]
        for root in [r for r in self._rules if r not in wanted]:
            del self._rules[root]
        self.roots.forget([r for r in self.roots.missing if r not in wanted])
        added = [r for r in wanted if not self._set_up(r) and r not in self.roots.missing]
        if not added:
            self._update_state()
            return
        self._setup_started = time.perf_counter()
        walked_before = self._walk_base = self.counters.folders_walked
        self._progress("begin", f"Watching {count(len(added), 'workspace folder')} for changes")
        try:
            for root in added:
                if self._stopping.is_set():
                    return
                self._rules[root] = IgnoreRules(root, self.settings.watch_exclude)
                reason = self._poll_reason(root) if self.roots.arm(root) else None
                if reason is None and root not in self.roots.missing:
                    reason = self._schedule(root)
                if reason is not None:
                    self._polled[root] = reason
                self._worker.recheck([root])  # reads made before the watch was in place
            self.setup_seconds = time.perf_counter() - self._setup_started
        finally:
            self._update_state()
            watched = self.counters.folders_walked - walked_before
            polled = f", polling {count(len(self._polled), 'root')}" if self._polled else ""
            self._progress("end", f"Watching {count(watched, 'folder')}{polled}")

    def _poll_reason(self, root: str) -> str | None:
        if self._backends[0] == "polling":
            if self._fallback is not None:
                return self._fallback
            if self.settings.watch_force_polling:
                return "watch_force_polling is set"
            return "the watcher setting is polling"
        fstype = filesystem_type(root)
        if fstype in UNRELIABLE_FILESYSTEMS:
            self._warn_once(
                f"fs:{root}",
                f"readkeeper: {root} is on a {fstype} filesystem, whose change events miss "
                f"changes made elsewhere, so the files agents read there are checked every "
                f"{self._interval:g} s instead of watched.",
            )
            return f"{fstype} filesystem"
        return None

    def _schedule(self, root: str) -> str | None:
        """Watch `root` with the backend in use, or with the next one when that one
        cannot be used at all; None on success, else why it is polled instead."""
        while not self._stopping.is_set():
            backend = self._backends[0]
            if backend == "polling":
                return self._poll_reason(root)
            try:
                if backend == "watchman":
                    self._watches[root] = self._subscribe(root)
                else:
                    if self._observer is None:
                        self._observer = start_observer(self, self.intake)
                    self._watches[root] = self._observer.watch(root)
                return None
            except (watchman.Unavailable, Unsupported, TooBig) as exc:
                self._leave(backend, str(exc), root)
            except OSError as exc:
                if exc.errno not in (errno.ENOSPC, errno.EMFILE):
                    self._warn_once(
                        f"root:{root}",
                        f"readkeeper: cannot watch {root} ({exc.strerror or exc}); the files "
                        f"agents read there are checked every {self._interval:g} s instead.",
                    )
                    return f"cannot watch: {exc.strerror or exc}"
                self._leave(backend, limit_reason(exc), root)
        return None

    def _subscribe(self, root: str) -> watchman.Subscription:
        # After a break, the watch is started again only if the user asked for Watchman:
        # otherwise someone removed it on purpose.
        rewatch = self.settings.watcher == "watchman"
        reports = Reports(self.intake.watchman_changed, self.watchman_fresh, self._watchman_lost)
        subscription = watchman.Subscription(root, reports, rewatch)
        self._starting = subscription
        try:
            subscription.start(spawn=True)
        finally:
            self._starting = None
        return subscription

    def _leave(self, backend: Backend, reason: str, root: str | None = None) -> None:
        """Stop using `backend`, if it is the one in use: release every watch it holds
        (for the editor and other tools), and hand its roots to the next backend (set up
        again in the background) or poll them."""
        with self._setup_lock:
            if self._stopping.is_set() or not self._backends or self._backends[0] != backend:
                return
            # status() reads without a lock: it says "starting" until the next backend is
            # in place, never the new backend with the old state.
            self.state = "starting"
            successor = self._backends[1]
            step_down = (backend, successor) != ("inotify", "watchman")  # auto: Watchman
            if step_down:
                self._fallback = reason
                self.counters.fallback_active = True
            self._backends.pop(0)
            roots = list(self._watches)
            self._release()
            where = f" while watching {root}" if root else ""
            if step_down:
                message = fallback_message(backend, reason + where, successor, self._interval)
                self._warn_once(f"leave:{backend}", message)
            else:
                log.info("readkeeper: %s%s; watching with Watchman instead", reason, where)
            if successor == "polling":
                for watched in roots:
                    self._polled[watched] = reason
            elif roots:
                self._setup_async()
            self._update_state()
            self._worker.recheck(roots)  # events may have been lost on the way

    def _release(self) -> None:
        """Stop every watch of the backend in use, and its threads (caller holds
        _setup_lock)."""
        watches = list(self._watches.values())
        self._watches.clear()
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()  # every inotify watch at once
        for watch in watches:
            if isinstance(watch, watchman.Subscription):
                watch.stop()

    def _unwatch(self, watch: Any) -> None:
        if isinstance(watch, watchman.Subscription):
            watch.stop()
        elif self._observer is not None:
            self._observer.unwatch(watch)

    def _update_state(self) -> None:
        missing = self.roots.missing
        if self._stopping.is_set():
            self.state = "stopped"
        elif any(not self._set_up(r) and r not in missing for r in self._wanted):
            self.state = "starting"  # a root is being set up (again)
        elif not self._watches and not self._polled:
            self.state = "root_missing"
        elif self._polled and not self._watches and not missing:
            self.state = "polling"
        elif self._polled or missing:
            self.state = "partial"
        else:
            self.state = "watching"
        self.counters.fallback_active = self._fallback is not None

    # --- what the backends' threads call ----------------------------------------------

    def subfolders(self, folder: bytes, fd: int, files: list[bytes] | None = None) -> list[bytes]:
        """The folders in `folder`, listed from `fd` (opened beneath its root), worth a
        watch (the pruned walk of inotify.py); with `files`, the other entries are added
        to it (a folder new in the tree, whose files came before its watch)."""
        if self._stopping.is_set():
            return []
        walked = self.counters.folders_walked - self._walk_base
        if self._switch_at is not None and walked >= self._switch_at and self._in_setup_walk():
            raise TooBig(f"the workspace has over {self._switch_at:,} folders to watch")
        try:
            found = folder_entries(fd, folder, files, self.suspect_files())
        except OSError:
            return []
        rules = self.intake.rules_for(os.fsdecode(folder))
        if rules is None:
            return []
        kept = self.kept_folders(found, rules)
        self.counters.folders_walked += 1
        now = time.perf_counter()
        if now - self._last_progress >= _PROGRESS_EVERY and self._in_setup_walk():
            self._last_progress = now
            self._progress("report", f"Watching {count(self.counters.folders_walked, 'folder')}")
        return kept

    def limit_reached(self, error: OSError) -> None:
        """The kernel refused an inotify watch: leave inotify."""
        self.leave_soon("inotify", limit_reason(error))

    def leave_soon(self, backend: Backend, reason: str) -> None:
        """Leave `backend` (see _leave) on the worker thread: the caller may be one of the
        threads leaving stops."""
        self._worker.leave_soon(backend, reason)

    def watchman_fresh(self, root: str) -> None:
        """Watchman cannot say what changed under `root` lately (a new instance or a new
        watch): re-check the files read there."""
        with self._worker.lock:
            self.counters.fresh_instances += 1
            self._worker.recheck([root])

    def overflowed(self) -> None:
        """The kernel's event queue overflowed: re-check every watched root's read files."""
        with self._worker.lock:
            self.counters.overflows += 1
            self._worker.recheck(self._watches)

    def skips(self, folder: bytes) -> bool:
        """Whether `folder`, new in the tree, gets no watch (hears.py `skips_by`)."""
        return self.skips_by(folder, self.intake.rules_for(os.fsdecode(folder)))

    def note(
        self, src: str, kind: Kind, is_dir: bool, dest: str | None = None, writing: bool = False
    ) -> None:
        """A change the inotify reader saw, on its thread (inotify.py)."""
        self.intake.note(src, kind, is_dir, dest, writing)

    # --- helpers ------------------------------------------------------------------------

    def _in_setup_walk(self) -> bool:
        """Whether this is a setup walk (not a folder created while watching)."""
        return threading.current_thread() in self._setups

    def _progress(self, stage: str, message: str) -> None:
        if self._callbacks.progress is not None:
            with contextlib.suppress(Exception):
                self._callbacks.progress(stage, message)

    def _warn_once(self, key: str, message: str) -> None:
        if key in self._warned:
            return
        self._warned.add(key)
        with contextlib.suppress(Exception):
            self._callbacks.warn(message)


__all__ = ["FsChange", "WatchCallbacks", "Watcher", "outermost"]
