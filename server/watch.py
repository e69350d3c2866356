"""The watcher: external changes to the workspace, noticed as they happen.

It tells the change notices (changes.py) which paths may have changed; it never
decides anything itself. Reads and edits always check the file (DESIGN.md,
"Read-state: the rules"), so a missed or late event costs a late notice, never a wrong
answer.

- One watchdog observer watches every workspace root, started after `initialized`
  (watchdog is imported then, not at start-up) by a setup thread, so a large workspace
  never holds up a request. Roots added later are watched the same way.
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
- Fallback: when the kernel refuses more watches (inotify ENOSPC or EMFILE), the
  observer is stopped (freeing every watch it held for the editor and other tools), one
  warning goes to `WatchCallbacks.warn` (the LSP server logs it and shows it to the
  user), and the files agents have read are polled every
  `watch_poll_interval_ms` instead, at most `_POLL_BATCH` stats per round. Roots on a
  filesystem whose events are unreliable (network and VM shares) are polled the same
  way, and `watch_force_polling` polls everything.
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

from .ignore import IgnoreRules
from .paths import is_within
from .settings import Settings
from .stats import WatchCounters
from .threads import is_folder, name_os_thread

if TYPE_CHECKING:
    from watchdog.events import FileSystemEvent

log = logging.getLogger("readkeeper")

Kind = Literal["modified", "created", "deleted", "moved"]

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
        self._watches: dict[str, Any] = {}  # root -> watchdog ObservedWatch
        self._polled: dict[str, str] = {}  # root -> why it is polled
        self._observer: Any = None
        self._fallback: str | None = None
        self._warned: set[str] = set()
        # Events -> pending paths -> batches, guarded by _cond.
        self._cond = threading.Condition()
        self._pending: dict[str, _Pending] = {}
        self._due: list[tuple[float, str]] = []
        self._recheck: set[str] = set()  # roots whose read files need a stat check
        self._limit_hit: OSError | None = None
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
        with self._setup_lock:  # a setup in progress ends its walk at the next folder
            observer, self._observer = self._observer, None
            self._watches.clear()
        _stop_observer(observer)
        for thread in [*self._setups, self._worker]:
            if thread.is_alive() and thread is not threading.current_thread():
                thread.join(_STOP_TIMEOUT)
        self.state = "stopped"

    def status(self) -> dict[str, Any]:
        with self._cond:
            pending = len(self._pending)
        return {
            "state": self.state,
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

    def _reconcile(self) -> None:
        if self._stopping.is_set():
            return
        wanted = list(self._wanted)
        for root in [r for r in self._watches if r not in wanted]:
            with contextlib.suppress(Exception):
                self._observer.unschedule(self._watches.pop(root))
        for root in [r for r in self._polled if r not in wanted]:
            del self._polled[root]
        for root in [r for r in self._rules if r not in wanted]:
            del self._rules[root]
        added = [r for r in wanted if r not in self._watches and r not in self._polled]
        if not added:
            self._update_state()
            return
        self._setup_started = time.perf_counter()
        walked_before = self.counters.folders_walked
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

    def _poll_reason(self, root: str) -> str | None:
        if self.settings.watch_force_polling:
            return "watch_force_polling is set"
        if self._fallback is not None:
            return self._fallback
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
        """Watch `root`; None on success, else why it is polled instead."""
        try:
            observer = self._ensure_observer()
            watch = observer.schedule(
                _Handler.make(self._on_event), root, recursive=True, event_filter=_event_filter()
            )
        except _Unsupported as exc:
            self._fall_back(str(exc), root)
            return self._fallback
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EMFILE):
                self._fall_back(_limit_reason(exc), root)
                return self._fallback
            self._warn_once(
                f"root:{root}",
                f"readkeeper: cannot watch {root} ({exc.strerror or exc}); the files agents "
                f"read there are checked every {self._interval:g} s instead.",
            )
            return f"cannot watch: {exc.strerror or exc}"
        self._watches[root] = watch
        return None

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

    def _fall_back(self, reason: str, root: str | None) -> None:
        """Stop watching: release every watch, poll every root from now on."""
        with self._setup_lock:
            if self._fallback is not None:
                return
            self._fallback = reason
            observer, self._observer = self._observer, None
            roots = list(self._watches)
            self._watches.clear()
            _stop_observer(observer)
            for watched in [*roots, *([root] if root else [])]:
                self._polled[watched] = reason
            self.counters.fallback_active = True
            self._update_state()
            where = f" while watching {root}" if root else ""
            self._warn_once(
                "fallback",
                f"readkeeper: {reason}{where}. It now checks the files agents have read every "
                f"{self._interval:g} s instead of watching the workspace, so change notices "
                "may come that much later; reads and edits still check each file themselves. "
                "To watch again, add large folders to readkeeper.watch_exclude or raise the "
                "limit (e.g. sudo sysctl fs.inotify.max_user_watches=524288), then restart "
                "the server.",
            )
            with self._cond:
                self._recheck.update(roots)  # events may have been lost on the way
                self._cond.notify()

    def _update_state(self) -> None:
        if self._stopping.is_set():
            self.state = "stopped"
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
        with self._cond:
            if self._limit_hit is None:
                self._limit_hit = error
                self._cond.notify()

    def overflowed(self) -> None:
        with self._cond:
            self.counters.overflows += 1
            self._recheck.update(self._watches)
            self._cond.notify()

    def _on_event(self, event: FileSystemEvent) -> None:
        kind = event.event_type
        src = os.fsdecode(event.src_path)
        rules = self._rules_for(src)
        if rules is None:
            return
        if os.path.basename(src) == ".gitignore":
            rules.forget_folder(os.path.dirname(src))
        dest = os.fsdecode(event.dest_path) if kind == "moved" and event.dest_path else None
        src_ignored = rules.ignored(src, event.is_directory)
        dest_ignored = dest is None or rules.ignored(dest, event.is_directory)
        with self._cond:
            self.counters.events += 1
            if src_ignored and dest_ignored:
                self.counters.ignored_events += 1
                return
            if event.is_directory:  # a folder gone or moved: files read under it
                if kind in ("deleted", "moved") and not src_ignored:
                    self._mark(src, "moved" if dest and not dest_ignored else "deleted", dest, True)
            elif kind == "moved":
                if not src_ignored:
                    self._mark(src, "moved" if not dest_ignored else "deleted", dest)
                if dest is not None and not dest_ignored:
                    self._mark(dest, "created")
            elif not src_ignored and kind in ("created", "modified", "closed", "deleted"):
                self._mark(
                    src,
                    "modified" if kind == "closed" else kind,  # type: ignore[arg-type]
                    writing=kind == "modified",
                )

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
                    if self._recheck or self._limit_hit or min(due, poll_at) <= now:
                        break
                    wait = min(due, poll_at) - now
                    self._cond.wait(None if wait == math.inf else wait)
                recheck, self._recheck = self._recheck, set()
                limit, self._limit_hit = self._limit_hit, None
                batch = self._take_due(now)
            try:
                if limit is not None:
                    self._fall_back(_limit_reason(limit), None)
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
