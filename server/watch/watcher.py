"""The watcher: external changes to the workspace, noticed as they happen.

It tells the change notices (changes.py) which paths may have changed; it never
decides anything itself. Reads and edits always check the file (DESIGN.md,
"Read-state: the rules"), so a missed or late event costs a late notice, never a wrong
answer.

- One backend watches every workspace root, set up after `initialized` by a setup
  thread, so a large workspace never holds up a request; roots added later are watched
  the same way. The `watcher` setting picks it: a watchdog observer (`inotify`;
  watchdog is imported then, not at start-up), Watchman (watchman.py) or polling.
  `auto` uses Watchman when it already watches every root, or when the inotify setup
  walk passes `_WATCHMAN_OVER_FOLDERS` folders (Linux), else the observer.
- Skipped: VCS folders, the `watch_exclude` patterns and .gitignore'd paths
  (ignore.py). On Linux, skipped folders cost no inotify watch (observer.py).
- Coalescing: a path is handed on once it has been quiet for `watch_debounce_ms`
  (longer while a writer still has it open, never more than `_MAX_DELAY` after its
  first event), so a formatter's burst of writes, or an editor's write-and-rename
  save, is one change.
- A kernel event queue overflow (events lost) makes the watcher re-check every read
  file under the watched roots against its read-state record (stat, then digest).
- .gitignore edits apply to events at once; a folder they newly un-ignore is watched
  from the next start (the watch set is not walked again).
- Fallback, Watchman then inotify then polling: when Watchman cannot be reached or
  its connection breaks for good, or the kernel refuses more watches (inotify ENOSPC
  or EMFILE), that backend is stopped (freeing every watch it held for the editor and
  other tools), one warning goes to `WatchCallbacks.warn` (the LSP server logs it and
  shows it to the user), the next backend watches the roots, and the files agents have
  read are re-checked against their records (events may have been lost on the way).
  Polling checks the files agents have read every `watch_poll_interval_ms`, at most
  `_POLL_BATCH` stats per round. Roots on a filesystem whose events are unreliable
  (network and VM shares) are polled the same way, and `watcher` `polling` (or
  `watch_force_polling`) polls everything.
"""

from __future__ import annotations

import contextlib
import errno
import heapq
import logging
import math
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..files.ignore import IgnoreRules
from ..files.paths import is_within
from ..settings import Settings
from ..state.stats import WatchCounters
from . import watchman
from .threads import is_folder, name_os_thread

if TYPE_CHECKING:
    from watchdog.events import FileSystemEvent

log = logging.getLogger("readkeeper")

Kind = Literal["modified", "created", "deleted", "moved"]
Backend = Literal["watchman", "inotify", "polling"]

# A path a writer still holds open (modified, no close seen yet) waits this long for
# the close before it is looked at anyway; and no path waits longer than _MAX_DELAY.
_OPEN_WRITE_GRACE = 0.5
# A path gone waits this long for the other half of a rename: watchdog pairs the two
# halves only within half a second, and a busy machine can split them into a delete
# and, a moment later, a create, which change notices then pair by content.
_UNPAIRED_MOVE_GRACE = 0.5
_MAX_DELAY = 2.0
_POLL_BATCH = 10_000
_PROGRESS_EVERY = 0.25  # seconds between progress reports during setup
_STOP_TIMEOUT = 5.0
# `auto` on Linux: an inotify setup walk that passes this many folders (ignored ones do
# not count) hands the workspace to Watchman. Below it the walk takes well under a
# second and its watches are a small share of the per-user budget (8,192 on kernels
# before 5.11); above it Watchman's shared crawl is the cheaper watch.
_WATCHMAN_OVER_FOLDERS = 10_000

# Filesystems whose change events miss changes made elsewhere (another machine, the
# VM host, Windows): their roots are polled.
UNRELIABLE_FILESYSTEMS = frozenset(
    {
        "nfs",
        "nfs4",
        "cifs",
        "smb3",
        "smbfs",
        "9p",
        "drvfs",
        "virtiofs",
        "vboxsf",
        "vmhgfs",
        "fuse.vmhgfs-fuse",
        "fuse.sshfs",
        "fuse.rclone",
        "fuse.s3fs",
        "fuse.gcsfuse",
        "fuse.glusterfs",
        "ceph",
        "afs",
        "lustre",
        "gpfs",
        "davfs",
        "fuse.davfs2",
    }
)


@dataclass(frozen=True)
class FsChange:
    """A path that may have changed. `kind` is what the events suggested; changes.py
    looks at the file itself. `folder` means a whole folder went away (or moved), and
    with it every file read under it."""

    path: str
    kind: Kind
    moved_to: str | None = None
    folder: bool = False
    events: int = 1


@dataclass
class WatchCallbacks:
    """What the watcher calls. All of them run on the watcher's own threads."""

    changed: Callable[[list[FsChange]], None]
    # The files in the read-state: path -> (mtime_ns, size) of its newest record.
    read_files: Callable[[], dict[str, tuple[int, int]]]
    warn: Callable[[str], None] = log.warning
    # Setup progress: ("begin" | "report" | "end", message).
    progress: Callable[[str, str], None] | None = None


@dataclass
class _Pending:
    kind: Kind
    first: float
    last: float
    moved_to: str | None = None
    folder: bool = False
    writing: bool = False
    events: int = 1


State = Literal["starting", "watching", "partial", "polling", "stopped"]


class Watcher:
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
        self._debounce = settings.watch_debounce_ms / 1000
        self._interval = settings.watch_poll_interval_ms / 1000
        self._wanted = outermost(roots)
        self._rules: dict[str, IgnoreRules] = {}
        # root -> its watchdog ObservedWatch, or its watchman.Subscription
        self._watches: dict[str, Any] = {}
        self._polled: dict[str, str] = {}  # root -> why it is polled
        self._observer: Any = None
        self._backends: list[Backend] = []  # the one in use, then what it falls back to
        self._switch_at: int | None = None  # auto: folders walked before Watchman takes over
        self._walk_base = 0  # folders_walked when the current setup began
        self._starting: watchman.Subscription | None = None
        self._fallback: str | None = None
        self._warned: set[str] = set()
        # Events -> pending paths -> batches, guarded by _cond.
        self._cond = threading.Condition()
        self._pending: dict[str, _Pending] = {}
        self._due: list[tuple[float, str]] = []
        self._recheck: set[str] = set()  # roots whose read files need a stat check
        self._leaving: dict[Backend, str] = {}  # backends to leave, and why
        # Polling (worker thread only).
        self._poll_queue: deque[str] = deque()
        self._poll_base: dict[str, tuple[int, int]] = {}
        self._poll_seen: dict[str, tuple[int, int, int] | None] = {}
        self._stopping = threading.Event()
        self._setup_lock = threading.RLock()
        self._setups: list[threading.Thread] = []
        self._worker = threading.Thread(
            target=self._run, name="readkeeper-watch-worker", daemon=True
        )
        self._last_progress = 0.0
        self._setup_started = 0.0
        self.setup_seconds: float | None = None
        self.state: State = "starting"

    # --- lifecycle ----------------------------------------------------------------------

    def start(self) -> None:
        self._worker.start()
        self._setup_async()

    def set_roots(self, roots: Sequence[str]) -> None:
        self._wanted = outermost(roots)
        self._setup_async()

    def stop(self) -> None:
        """Stop every thread the watcher started, and release its watches."""
        self._stopping.set()
        with self._cond:
            self._cond.notify_all()
        starting = self._starting
        if starting is not None:  # a setup waiting on Watchman
            starting.stop()
        with self._setup_lock:  # a setup in progress ends its walk at the next folder
            self._release()
        for thread in [*self._setups, self._worker]:
            if thread.is_alive() and thread is not threading.current_thread():
                thread.join(_STOP_TIMEOUT)
        self.state = "stopped"

    def status(self) -> dict[str, Any]:
        with self._cond:
            pending = len(self._pending)
        return {
            "state": self.state,
            "backend": self._backends[0] if self._backends else None,
            "watched_roots": sorted(self._watches),
            "polled_roots": dict(sorted(self._polled.items())),
            "fallback_reason": self._fallback,
            "setup_ms": None if self.setup_seconds is None else self.setup_seconds * 1000,
            "pending_paths": pending,
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
            self._backends = self._chain()
        for root in [r for r in self._watches if r not in wanted]:
            self._unwatch(self._watches.pop(root))
        for root in [r for r in self._polled if r not in wanted]:
            del self._polled[root]
        for root in [r for r in self._rules if r not in wanted]:
            del self._rules[root]
        added = [r for r in wanted if r not in self._watches and r not in self._polled]
        if not added:
            self._update_state()
            return
        self._setup_started = time.perf_counter()
        walked_before = self._walk_base = self.counters.folders_walked
        self._progress("begin", f"Watching {len(added)} workspace folder(s) for changes")
        try:
            for root in added:
                if self._stopping.is_set():
                    return
                self._rules[root] = IgnoreRules(root, self.settings.watch_exclude)
                reason = self._poll_reason(root)
                if reason is None:
                    reason = self._schedule(root)
                if reason is not None:
                    self._polled[root] = reason
                with self._cond:
                    self._recheck.add(root)  # reads made before the watch was in place
                    self._cond.notify()
            self.setup_seconds = time.perf_counter() - self._setup_started
        finally:
            self._update_state()
            watched = self.counters.folders_walked - walked_before
            polled = f", polling {len(self._polled)} root(s)" if self._polled else ""
            self._progress("end", f"Watching {watched} folders{polled}")

    def _chain(self) -> list[Backend]:
        """The backends to try, in order (the `watcher` setting; `auto` asks Watchman)."""
        setting = "polling" if self.settings.watch_force_polling else self.settings.watcher
        if setting == "polling":
            return ["polling"]
        if setting == "inotify":
            return ["inotify", "polling"]
        if setting == "watchman":
            return ["watchman", "inotify", "polling"]
        if not watchman.installed():
            return ["inotify", "polling"]
        if watchman.watches(self._wanted):
            return ["watchman", "inotify", "polling"]
        self._switch_at = _WATCHMAN_OVER_FOLDERS
        return ["inotify", "watchman", "polling"]

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
                    self._watches[root] = self._ensure_observer().schedule(
                        _Handler.make(self._on_event),
                        root,
                        recursive=True,
                        event_filter=_event_filter(),
                    )
                return None
            except (watchman.Unavailable, _Unsupported, _TooBig) as exc:
                self._leave(backend, str(exc), root)
            except OSError as exc:
                if exc.errno not in (errno.ENOSPC, errno.EMFILE):
                    self._warn_once(
                        f"root:{root}",
                        f"readkeeper: cannot watch {root} ({exc.strerror or exc}); the files "
                        f"agents read there are checked every {self._interval:g} s instead.",
                    )
                    return f"cannot watch: {exc.strerror or exc}"
                self._leave(backend, _limit_reason(exc), root)
        return None

    def _subscribe(self, root: str) -> watchman.Subscription:
        # After a break, the watch is started again only if the user asked for Watchman:
        # otherwise someone removed it on purpose.
        rewatch = self.settings.watcher == "watchman"
        subscription = watchman.Subscription(root, _Reports(self), rewatch)
        self._starting = subscription
        try:
            subscription.start(spawn=True)
        finally:
            self._starting = None
        return subscription

    def _ensure_observer(self) -> Any:
        if self._observer is None:
            if sys.platform.startswith("linux"):
                from . import observer as pruned

                if not pruned.COMPATIBLE:
                    raise _Unsupported(
                        "the installed watchdog lacks the inotify hooks readkeeper extends"
                    )
                observer: Any = pruned.PrunedObserver(_Hooks(self))
            else:  # FSEvents, ReadDirectoryChangesW: one watch per tree, nothing to prune
                from watchdog.observers import Observer

                observer = Observer()
            observer.start()
            self._observer = observer
        return self._observer

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
                self._warn_once(f"leave:{backend}", self._fallback_message(backend, reason + where))
            else:
                log.info("readkeeper: %s%s; watching with Watchman instead", reason, where)
            if successor == "polling":
                for watched in roots:
                    self._polled[watched] = reason
            elif roots:
                self._setup_async()
            self._update_state()
            with self._cond:
                self._recheck.update(roots)  # events may have been lost on the way
                self._cond.notify()

    def _fallback_message(self, left: Backend, reason: str) -> str:
        sure = "reads and edits still check each file themselves."
        if self._backends[0] != "polling":
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
            f"{self._interval:g} s instead of watching the workspace, so change notices may "
            f"come that much later; {sure} To watch again, {advice}, then restart the server."
        )

    def _release(self) -> None:
        """Stop every watch of the backend in use, and its threads (caller holds
        _setup_lock)."""
        watches = list(self._watches.values())
        self._watches.clear()
        observer, self._observer = self._observer, None
        _stop_observer(observer)  # every inotify watch at once
        for watch in watches:
            if isinstance(watch, watchman.Subscription):
                watch.stop()

    def _unwatch(self, watch: Any) -> None:
        if isinstance(watch, watchman.Subscription):
            watch.stop()
        elif self._observer is not None:
            with contextlib.suppress(Exception):
                self._observer.unschedule(watch)

    def _update_state(self) -> None:
        if self._stopping.is_set():
            self.state = "stopped"
        elif any(r not in self._watches and r not in self._polled for r in self._wanted):
            self.state = "starting"  # a root is being set up (again)
        elif self._polled and not self._watches:
            self.state = "polling"
        elif self._polled:
            self.state = "partial"
        else:
            self.state = "watching"
        self.counters.fallback_active = self._fallback is not None

    # --- what the observer threads call -------------------------------------------------

    def subfolders(self, folder: bytes) -> list[bytes]:
        """The folders in `folder` worth a watch (the pruned walk of observer.py)."""
        if self._stopping.is_set():
            return []
        walked = self.counters.folders_walked - self._walk_base
        if self._switch_at is not None and walked >= self._switch_at and self._in_setup_walk():
            raise _TooBig(f"the workspace has over {self._switch_at:,} folders to watch")
        try:
            with os.scandir(folder) as entries:
                found = [e.path for e in entries if is_folder(e)]
        except OSError:
            return []
        rules = self._rules_for(os.fsdecode(folder))
        if rules is None:
            return []
        kept = [p for p in found if not rules.ignored(os.fsdecode(p), True)]
        self.counters.folders_walked += 1
        self.counters.skipped_folders += len(found) - len(kept)
        now = time.perf_counter()
        if now - self._last_progress >= _PROGRESS_EVERY and self._in_setup_walk():
            self._last_progress = now
            self._progress("report", f"Watching {self.counters.folders_walked} folders")
        return kept

    def limit_reached(self, error: OSError) -> None:
        self.leave_soon("inotify", _limit_reason(error))

    def leave_soon(self, backend: Backend, reason: str) -> None:
        """Leave `backend` (see _leave) on the worker thread: the caller may be one of the
        threads leaving stops."""
        with self._cond:
            self._leaving.setdefault(backend, reason)
            self._cond.notify()

    def watchman_fresh(self, root: str) -> None:
        """Watchman cannot say what changed under `root` lately (a new instance or a new
        watch): re-check the files read there."""
        with self._cond:
            self.counters.fresh_instances += 1
            self._recheck.add(root)
            self._cond.notify()

    def overflowed(self) -> None:
        with self._cond:
            self.counters.overflows += 1
            self._recheck.update(self._watches)
            self._cond.notify()

    def watchman_changed(self, changes: list[watchman.Change]) -> None:
        """What a Watchman subscription reported (one PDU)."""
        # A .gitignore first: the paths reported with it are judged by its new patterns.
        for change in sorted(changes, key=lambda c: os.path.basename(c.path) != ".gitignore"):
            self._note(change.path, change.kind, change.folder)

    def _on_event(self, event: FileSystemEvent) -> None:
        kind = event.event_type
        src = os.fsdecode(event.src_path)
        if kind == "closed":  # a write is complete
            self._note(src, "modified", event.is_directory)
        elif kind in ("created", "modified", "deleted", "moved"):
            dest = os.fsdecode(event.dest_path) if kind == "moved" and event.dest_path else None
            # A modification may be one of many writes: wait for the close a while.
            writing = kind == "modified"
            self._note(src, kind, event.is_directory, dest, writing)  # type: ignore[arg-type]

    def _note(
        self, src: str, kind: Kind, is_dir: bool, dest: str | None = None, writing: bool = False
    ) -> None:
        """An event of the backend in use: skip what the ignore rules skip, mark the rest."""
        rules = self._rules_for(src)
        if rules is None:
            return
        if os.path.basename(src) == ".gitignore":
            rules.forget_folder(os.path.dirname(src))
        src_ignored = rules.ignored(src, is_dir)
        dest_ignored = dest is None or rules.ignored(dest, is_dir)
        with self._cond:
            self.counters.events += 1
            if src_ignored and dest_ignored:
                self.counters.ignored_events += 1
                return
            if is_dir:  # a folder gone or moved: files read under it
                if kind in ("deleted", "moved") and not src_ignored:
                    self._mark(src, "moved" if dest and not dest_ignored else "deleted", dest, True)
            elif kind == "moved":
                if not src_ignored:
                    self._mark(src, "moved" if not dest_ignored else "deleted", dest)
                if dest is not None and not dest_ignored:
                    self._mark(dest, "created")
            elif not src_ignored:
                self._mark(src, kind, writing=writing)

    def _mark(
        self,
        path: str,
        kind: Kind,
        moved_to: str | None = None,
        folder: bool = False,
        writing: bool | None = None,
    ) -> None:
        """Note a possible change (caller holds _cond)."""
        now = time.monotonic()
        pending = self._pending.get(path)
        if pending is None:
            self._pending[path] = _Pending(kind, now, now, moved_to, folder, writing=bool(writing))
            was_idle = not self._due
            heapq.heappush(self._due, (now + self._debounce, path))
            if was_idle:
                self._cond.notify()
            return
        pending.last = now
        pending.events += 1
        pending.folder = pending.folder or folder
        if kind == "deleted" and pending.kind == "moved":
            return  # a stat after the rename: the path is gone, and the move says where to
        if not (kind == "modified" and pending.kind == "created"):  # created, then written
            pending.kind = kind
        if moved_to is not None or kind != "moved":
            pending.moved_to = moved_to
        if writing is not None:
            pending.writing = writing

    # --- the worker: batches, polling ---------------------------------------------------

    def _run(self) -> None:
        name_os_thread("rk-watch-worker")
        next_poll = time.monotonic() + self._interval
        while True:
            with self._cond:
                while True:
                    if self._stopping.is_set():
                        return
                    now = time.monotonic()
                    due = self._due[0][0] if self._due else math.inf
                    poll_at = next_poll if self._polled else math.inf
                    if self._recheck or self._leaving or min(due, poll_at) <= now:
                        break
                    wait = min(due, poll_at) - now
                    self._cond.wait(None if wait == math.inf else wait)
                recheck, self._recheck = self._recheck, set()
                leaving, self._leaving = self._leaving, {}
                batch = self._take_due(now)
            try:
                for backend, reason in leaving.items():
                    self._leave(backend, reason)
                if recheck:
                    self._check_read_files(recheck, against_records=True)
                if poll_at <= now:
                    self.counters.polls += 1
                    self._check_read_files(set(self._polled), against_records=False)
                    next_poll = now + self._interval
                if batch:
                    self.counters.batches += 1
                    self._callbacks.changed(batch)
            except Exception:  # a bad batch must not end the watcher, nor flood the log
                self.counters.failures += 1
                if self.counters.failures == 1:
                    log.exception("readkeeper: the watcher failed to handle a change")
                else:
                    log.debug("readkeeper: the watcher failed again", exc_info=True)

    def _take_due(self, now: float) -> list[FsChange]:
        """Pop the paths whose quiet time has passed (caller holds _cond)."""
        ready: list[FsChange] = []
        while self._due and self._due[0][0] <= now:
            _, path = heapq.heappop(self._due)
            pending = self._pending.get(path)
            if pending is None:
                continue
            due = pending.last + self._debounce
            if pending.writing:
                due = pending.last + max(self._debounce, _OPEN_WRITE_GRACE)
            elif pending.kind == "deleted":
                due = pending.last + max(self._debounce, _UNPAIRED_MOVE_GRACE)
            due = min(due, pending.first + _MAX_DELAY)
            if due > now:
                heapq.heappush(self._due, (due, path))
                continue
            del self._pending[path]
            if pending.events > 1:
                self.counters.coalesced_bursts += 1
                self.counters.coalesced_events += pending.events - 1
            ready.append(
                FsChange(path, pending.kind, pending.moved_to, pending.folder, pending.events)
            )
        return ready

    def _check_read_files(self, roots: set[str], against_records: bool) -> None:
        """Stat the read files under `roots` and mark those that look changed.

        Polling compares each file with its own last stat, in rounds of at most
        `_POLL_BATCH`; a re-check (after setup, an overflow or a fallback) compares every
        file with what its read recorded."""
        roots = {r for r in roots if r in self._rules}
        if not roots:
            return
        if against_records:
            files = self._in_scope(self._callbacks.read_files(), roots)
            paths: Iterable[str] = list(files)
        else:
            if not self._poll_queue:
                self._poll_base = self._in_scope(self._callbacks.read_files(), roots)
                self._poll_queue.extend(self._poll_base)
                self._poll_seen = {p: s for p, s in self._poll_seen.items() if p in self._poll_base}
            files = self._poll_base
            count = min(_POLL_BATCH, len(self._poll_queue))
            paths = [self._poll_queue.popleft() for _ in range(count)]
        changed: list[tuple[str, Kind]] = []
        for path in paths:
            try:
                st = os.stat(path)
                now: tuple[int, int, int] | None = (st.st_mtime_ns, st.st_size, st.st_ino)
            except FileNotFoundError:
                now = None
            except OSError:
                continue
            if against_records or path not in self._poll_seen:
                recorded = files.get(path)
                differs = now is None or recorded is None or recorded != now[:2]
            else:
                differs = self._poll_seen[path] != now
            if not against_records:
                self._poll_seen[path] = now
                self.counters.polled_files += 1
            if differs:
                changed.append((path, "deleted" if now is None else "modified"))
        if changed:
            with self._cond:
                for path, kind in changed:
                    self._mark(path, kind)

    def _in_scope(
        self, files: dict[str, tuple[int, int]], roots: set[str]
    ) -> dict[str, tuple[int, int]]:
        kept: dict[str, tuple[int, int]] = {}
        for path, stat in files.items():
            for root in roots:
                rules = self._rules.get(root)
                if rules is not None and is_within(path, root) and not rules.ignored(path):
                    kept[path] = stat
                    break
        return kept

    # --- helpers ------------------------------------------------------------------------

    def _rules_for(self, path: str) -> IgnoreRules | None:
        for rules in list(self._rules.values()):
            if rules.covers(path):
                return rules
        return None

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


class _Hooks:
    """observer.py's view of the watcher."""

    def __init__(self, watcher: Watcher) -> None:
        self._watcher = watcher

    def subfolders(self, folder: bytes) -> list[bytes]:
        return self._watcher.subfolders(folder)

    def limit_reached(self, error: OSError) -> None:
        self._watcher.limit_reached(error)

    def overflowed(self) -> None:
        self._watcher.overflowed()


class _Reports:
    """watchman.py's view of the watcher (a `watchman.Sink`)."""

    def __init__(self, watcher: Watcher) -> None:
        self._watcher = watcher

    def changed(self, root: str, changes: list[watchman.Change]) -> None:
        self._watcher.watchman_changed(changes)

    def fresh(self, root: str) -> None:
        self._watcher.watchman_fresh(root)

    def lost(self, root: str, reason: str) -> None:
        self._watcher.leave_soon("watchman", reason)


class _Handler:
    """A watchdog event handler that hands every event to one function."""

    @staticmethod
    def make(on_event: Callable[[FileSystemEvent], None]) -> Any:
        from watchdog.events import FileSystemEventHandler

        class Handler(FileSystemEventHandler):
            def dispatch(self, event: FileSystemEvent) -> None:
                on_event(event)

        return Handler()


class _Unsupported(Exception):
    pass


class _TooBig(Exception):
    """`auto`: the inotify setup walk passed the folders Watchman takes over at."""


def _event_filter() -> list[type[FileSystemEvent]]:
    # Opens and reads (readkeeper's own included) are never subscribed to.
    from watchdog.events import (
        DirDeletedEvent,
        DirMovedEvent,
        FileClosedEvent,
        FileCreatedEvent,
        FileDeletedEvent,
        FileModifiedEvent,
        FileMovedEvent,
    )

    return [
        FileCreatedEvent,
        FileModifiedEvent,
        FileClosedEvent,
        FileDeletedEvent,
        FileMovedEvent,
        DirDeletedEvent,
        DirMovedEvent,
    ]


def _stop_observer(observer: Any) -> None:
    if observer is None:
        return
    with contextlib.suppress(Exception):
        observer.stop()
    with contextlib.suppress(RuntimeError):
        observer.join(_STOP_TIMEOUT)


def _limit_reason(error: OSError) -> str:
    if error.errno == errno.EMFILE:
        return (
            "the system refused another inotify instance "
            f"(fs.inotify.max_user_instances = {_sysctl('max_user_instances')})"
        )
    return (
        "the system ran out of inotify watches "
        f"(fs.inotify.max_user_watches = {_sysctl('max_user_watches')})"
    )


def _sysctl(name: str) -> str:
    # /proc/sys/user/ holds the limits of this process's user namespace (the same as
    # fs.inotify.* outside containers); fs.inotify.* is the host-wide setting.
    user_name = {"max_user_watches": "max_inotify_watches"}.get(name, "max_inotify_instances")
    for path in (f"/proc/sys/user/{user_name}", f"/proc/sys/fs/inotify/{name}"):
        try:
            with open(path) as file:
                return file.read().strip()
        except OSError:
            continue
    return "unknown"


def outermost(roots: Iterable[str]) -> list[str]:
    """The roots, without those inside another root (watched with it)."""
    unique = sorted({os.path.realpath(r) for r in roots}, key=len)
    kept: list[str] = []
    for root in unique:
        if not any(is_within(root, k) for k in kept):
            kept.append(root)
    return kept


def filesystem_type(path: str) -> str | None:
    """The type of the filesystem `path` is on (Linux /proc/self/mountinfo), if known."""
    best: tuple[int, str] | None = None
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as file:
            for line in file:
                left, sep, right = line.partition(" - ")
                fields = left.split()
                if not sep or len(fields) < 5 or not right:
                    continue
                mount = _unescape(fields[4])
                if is_within(path, mount) and (best is None or len(mount) >= best[0]):
                    best = (len(mount), right.split()[0])
    except OSError:
        return None
    return best[1] if best else None


def _unescape(field: str) -> str:
    # mountinfo escapes space, tab, newline and backslash as octal (\040 ...).
    if "\\" not in field:
        return field
    return field.encode().decode("unicode_escape")


__all__ = ["FsChange", "WatchCallbacks", "Watcher", "filesystem_type", "outermost"]
