"""Reads made ahead of the agent, while it thinks (issue 34): the outline and the token
count of the files it is likely to read next, so that its first read of one finds them
in the read's own caches.

An agent's turn between two calls takes hundreds of milliseconds; a first read of a
real module spends most of its ten-odd milliseconds on the tree-sitter parse, the walk
and the count. When no call has been in flight for `SETTLE_SECONDS`, one thread takes
the likely files in order: the editor's open documents, the files the last git status
attachment named, the files the watcher saw change, the modules the last file read
imports, then its siblings (its extension first, newest first; ahead_sources.py), and
makes of each what a whole read with the
default parameters makes (`outline_read.plan`, then its outline's or its lines' view),
through the same functions, so the same caches fill: the symbols by content digest (in
memory and in the user's cache folder), the numbered lines' counts, the last views.
Then its `jobs` run (search/ahead.py: each root's glob listing).

It is polite: it starts only when no call is in flight, checks before each file and
before each file's count and parse that none arrived, and stops at once if one did.
One step is bounded (files of at most `MAX_BYTES`: tree-sitter's parse holds the GIL,
so a call arriving mid-parse waits for its end; bench/bench_ahead.py measures it); a
trigger takes at most `FILES_PER_TRIGGER` files and `CPU_PER_TRIGGER` seconds of its
thread's CPU, a minute at most `FILES_PER_MINUTE` files and `CPU_PER_MINUTE` seconds.
It does nothing while the token table is not loaded (its views would carry a bound),
the machine's load is over `BUSY_LOAD` per core, or `read_ahead` is off; its thread runs
at the lowest priority, and one that ended on an error is said (`health`) and restarted.

It is safe: a file is opened only beneath a root or allowed folder (never a session's
grant), with the read's own confined open (`fileio.open_regular`: no symlink on the
way, no FIFO, device or socket), only if it is a regular text file of at most
`MAX_BYTES`, and none the watcher's ignore rules skip. It records nothing in any
session's read-state and writes no user file; what it makes is what a read would have
made, so no answer differs (caches are keyed by content).
"""

from __future__ import annotations

import logging
import os
import stat
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import ReadkeeperError
from ..files.fileio import digest, open_regular, peek, read_at_most
from ..files.paths import is_within
from ..protocol import ReadParams
from ..state.health import Health
from . import ahead_sources

if TYPE_CHECKING:
    from ..files.paths import Workspace
    from ..settings import Settings
    from ..state.buffers import Buffers
    from .tokens import TokenCounter

log = logging.getLogger("readkeeper")

# Quiet after the last call before anything starts: calls sent back to back (an
# agent's parallel reads, a script) never meet the worker; an agent's turn is longer.
SETTLE_SECONDS = 0.05
# The largest file made ahead: a 64 KB module parses in about 3 ms here, the longest a
# call arriving mid-parse may wait for the GIL (bench/bench_ahead.py).
MAX_BYTES = 64 * 1024
FILES_PER_TRIGGER, CPU_PER_TRIGGER = 4, 0.1
FILES_PER_MINUTE, CPU_PER_MINUTE = 60, 3.0
# The machine is busy when its one-minute load per core is over this.
BUSY_LOAD = 1.5
# The siblings of the last file read looked at (a huge folder is not listed whole).
SIBLINGS_LOOKED_AT = 512
# Files made ahead, by (path, mtime_ns, size): not made again while unchanged.
MADE_KEPT = 4096
# Files the watcher saw change, newest last.
CHANGED_KEPT = 64


class AheadServices(Protocol):
    """What the worker reads of the core (core.py)."""

    @property
    def settings(self) -> Settings: ...

    @property
    def tokens(self) -> TokenCounter: ...

    @property
    def buffers(self) -> Buffers: ...

    @property
    def trusted(self) -> bool: ...


def machine_busy() -> bool:
    """Whether the machine's one-minute load per core is over `BUSY_LOAD`."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    try:
        return os.getloadavg()[0] > BUSY_LOAD * cores
    except OSError:
        return False


class Ahead:
    """The worker: told of every call (`call`) and of the last file read (`read`)."""

    def __init__(
        self,
        services: AheadServices,
        workspace: Callable[[], Workspace],
        watcher: Callable[[], Any],
        busy: Callable[[], bool] = machine_busy,
    ) -> None:
        """`workspace`: the editor's roots (never an agent's); `watcher`: hears.py's, or None."""
        self._services = services
        self._workspace = workspace
        self._watcher = watcher
        self.busy = busy  # tests may say the machine is idle
        self._cond = threading.Condition()
        self._in_flight = 0
        self._calls = 0  # calls started so far: a trigger stops when this moves
        self._last_end = 0.0
        self._pending = False  # a call ended: run once the calls have been quiet a while
        self._running = False
        self._closed = False
        self._thread: threading.Thread | None = None
        self._last_read: str | None = None
        self._made: OrderedDict[tuple[str, int, int], None] = OrderedDict()
        self._changed: deque[str] = deque(maxlen=CHANGED_KEPT)
        self._heard_by: Any = None
        self._minute: deque[tuple[float, float]] = deque()  # (when, CPU seconds), per file
        self._git: dict[str, list[str]] = {}  # root -> the files git status names
        # Run in each trigger after the files, told whether a call came (search/ahead.py).
        self.jobs: list[Callable[[Callable[[], bool]], object]] = []
        self.made: deque[str] = deque(maxlen=64)  # the last files made, for tests
        self.counts = {"made": 0, "skipped": 0, "stopped_by_call": 0, "triggers": 0}
        self.health = Health("reading ahead")

    # --- told by the core -----------------------------------------------------------------

    @contextmanager
    def call(self) -> Iterator[None]:
        """A call is in flight for the block; when the last one ends, a trigger."""
        with self._cond:
            self._in_flight += 1
            self._calls += 1
        try:
            yield
        finally:
            with self._cond:
                self._in_flight -= 1
                self._last_end = time.monotonic()
                self._trigger()

    def poke(self) -> None:
        """Something worth doing ahead is ready (the watcher's setup ended): a trigger."""
        with self._cond:
            self._trigger()

    def _trigger(self) -> None:
        # A worker waiting for quiet rereads `_last_end`: waking it per call costs the GIL.
        idle = not (self._pending or self._in_flight or self._closed)
        if idle and self._services.settings.read_ahead:
            self._pending = True
            self._start()
            self._cond.notify_all()

    def read(self, path: str | None) -> None:
        """The file a read just answered for (its siblings come next)."""
        if path:
            self._last_read = path

    def close(self) -> None:
        """Stop the worker: it leaves after its step in progress, waited for (5 s at most)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5)

    def settle(self, timeout: float) -> bool:
        """Wait until no trigger is pending or running (tests, benchmarks); whether in time."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._pending or self._running:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    # --- the thread -------------------------------------------------------------------------

    def _start(self) -> None:
        if self._thread is None or self.health.restart_due(self._thread):
            target = self.health.run(self._loop)  # it says why a thread ended (health.py)
            self._thread = threading.Thread(target=target, name="readkeeper-ahead", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        with suppress(OSError, AttributeError):
            # Linux takes a thread id here: only this thread yields to the machine's work.
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        while True:
            with self._cond:
                trigger = self._wait_for_quiet()
                if trigger is None:
                    return
                self._running = True
            try:
                self.run_once(trigger)
            except Exception:  # never let the worker die, nor a fault reach a call
                log.exception("Reading ahead failed")
            finally:
                with self._cond:
                    self._running = False
                    self._cond.notify_all()

    def _wait_for_quiet(self) -> int | None:
        """(Holding the condition) the trigger to run once no call has come for
        SETTLE_SECONDS; None when closed."""
        while True:
            while not self._closed and not self._pending:
                self._cond.wait()
            if self._closed:
                return None
            left = self._last_end + SETTLE_SECONDS - time.monotonic()
            if self._in_flight:
                self._pending = False  # its end triggers again
                self._cond.notify_all()
            elif left > 0:
                self._cond.wait(left)
            else:
                self._pending = False
                return self._calls

    def _interrupted(self, trigger: int) -> bool:
        return self._closed or self._in_flight > 0 or self._calls != trigger

    # --- one trigger ------------------------------------------------------------------------

    def run_once(self, trigger: int | None = None) -> int:
        """Make the likely files ahead, within the budgets, until a call comes (any
        call after `trigger`, a count of calls; None: now's). How many it made."""
        trigger = self._calls if trigger is None else trigger
        services = self._services
        if not services.settings.read_ahead or self.busy():
            return 0
        made = self._files(trigger) if services.tokens.loaded else 0
        for job in self.jobs:  # after the files: the likelier reads come first
            if self._interrupted(trigger):
                break
            job(lambda: self._interrupted(trigger))
        return made

    def _files(self, trigger: int) -> int:
        self.counts["triggers"] += 1
        if self._interrupted(trigger):
            self.counts["stopped_by_call"] += 1
            return 0
        now = time.monotonic()
        while self._minute and self._minute[0][0] < now - 60:
            self._minute.popleft()
        files = len(self._minute)
        cpu = sum(c for _, c in self._minute)
        started = time.thread_time()
        made = 0
        for path in self._candidates(trigger):
            spent = time.thread_time() - started
            if made >= FILES_PER_TRIGGER or spent >= CPU_PER_TRIGGER:
                break
            if files + made >= FILES_PER_MINUTE or cpu + spent >= CPU_PER_MINUTE:
                break
            if self._interrupted(trigger):
                self.counts["stopped_by_call"] += 1
                break
            before = time.thread_time()
            if self._make(path, trigger):
                made += 1
                self.counts["made"] += 1
                self.made.append(path)
                self._minute.append((time.monotonic(), time.thread_time() - before))
            else:
                self.counts["skipped"] += 1
        return made

    def _candidates(self, trigger: int) -> Iterator[str]:
        """The likely files, most likely first, each once (found lazily: the later
        sources cost more to list and are often not reached)."""
        seen: set[str] = set()
        if self._last_read:
            seen.add(os.path.normpath(self._last_read))  # the read just made it
        sources: tuple[Callable[[], list[str]], ...] = (
            self._services.buffers.paths,
            self._git_status,
            self._recently_changed,
            self._imports,
            self._siblings,
        )
        rules = getattr(self._watcher(), "intake", None)
        for source in sources:
            if self._interrupted(trigger):
                return
            for path in source():
                path = os.path.normpath(path)
                if path not in seen and "/.git/" not in path:
                    seen.add(path)
                    ignoring = rules.rules_for(path) if rules is not None else None
                    if ignoring is None or not ignoring.ignored(path):
                        yield path

    def git_status(self, root: str, answer: str) -> None:
        """What the git status attachment found in `root` (attachments/collect.py) comes
        next. The worker never runs git: an attachment asking meanwhile would wait."""
        paths = ahead_sources.status_paths(answer, root, MADE_KEPT)
        with self._cond:
            self._git[root] = paths

    def _git_status(self) -> list[str]:
        if not self._services.trusted:
            return []  # restricted mode: not even what an earlier status named
        with self._cond:
            return [path for paths in self._git.values() for path in paths]

    def _recently_changed(self) -> list[str]:
        watcher = self._watcher()
        if watcher is not None and watcher is not self._heard_by:
            self._heard_by = watcher
            watcher.listen(self._heard)
        return list(reversed(self._changed))

    def _heard(self, path: str, moved_to: str | None, is_dir: bool, kind: str) -> None:
        # On the watcher's thread: keep it to an append (`kind` tells nothing more here).
        if not is_dir:
            self._changed.append(moved_to or path)

    def _imports(self) -> list[str]:
        """The modules the last file read imports, beneath its root (a Python file's
        first lines, opened as a read opens it)."""
        last = self._last_read
        workspace = self._workspace()
        if not last or not last.endswith((".py", ".pyi")):
            return []
        where = workspace.locate(os.path.normpath(last), grants=False)
        top = next((r for r in (*workspace.roots, *workspace.allowed) if is_within(last, r)), None)
        if where is None or top is None:
            return []
        try:
            with open_regular(where) as opened:
                head = read_at_most(opened.fd, ahead_sources.IMPORTS_HEAD)
        except (ReadkeeperError, OSError):
            return []
        return ahead_sources.imported(where.path, head, top)

    def _siblings(self) -> list[str]:
        last = self._last_read
        return ahead_sources.siblings(last, SIBLINGS_LOOKED_AT) if last else []

    # --- one file ---------------------------------------------------------------------------

    def _make(self, path: str, trigger: int) -> bool:
        """Make what a whole read of `path` with the default parameters makes; whether
        it did (False: not a candidate, or a call came)."""
        services = self._services
        settings = services.settings
        try:
            info = os.lstat(path)
        except (OSError, ValueError):
            return False
        if not stat.S_ISREG(info.st_mode) or not 0 < info.st_size <= self._max_bytes(settings):
            return False  # a symlink itself is never a candidate
        # A read opens a file by its real path (what names it in the caches); a folder
        # on the way that leads out of the roots is refused by `locate`, and any symlink
        # met when opening it beneath its root by `open_regular`.
        path = os.path.realpath(path)
        key = (path, info.st_mtime_ns, info.st_size)
        if key in self._made:
            return False
        where = self._workspace().locate(path, grants=False)
        if where is None:
            return False
        try:
            made = self._read_like_a_read(where, path, settings, trigger)
        except (ReadkeeperError, OSError, UnicodeError):
            made = False  # not text, gone, or refused: a read says why, when asked
        self._made[key] = None
        while len(self._made) > MADE_KEPT:
            self._made.popitem(last=False)
        return made

    def _max_bytes(self, settings: Settings) -> int:
        return min(MAX_BYTES, settings.max_size_bytes)

    def _read_like_a_read(self, where: Any, path: str, settings: Settings, trigger: int) -> bool:
        # The read path's modules, imported by the first read anyway (not at start).
        from . import pipeline, readers
        from .readers import outline_read
        from .readers import text as text_reader

        services = self._services
        limit = self._max_bytes(settings)
        with open_regular(where) as opened:
            if opened.size > limit:
                return False
            if readers.sniff(peek(opened.fd, readers.SNIFF_BYTES), path) is not None:
                return False  # images, PDFs and notebooks are not made ahead
            data = read_at_most(opened.fd, limit + 1)
        if len(data) > limit:
            return False
        text, encoding = text_reader.decode_text(data, path)
        content_digest = digest(data)
        buffer = services.buffers.get(path)
        if buffer is not None and buffer.text != text:
            # The editor's unsaved changes are what a read shows (pipeline.py).
            text = buffer.text
            content_digest = digest(text.encode("utf-8", "surrogatepass"))
        if self._interrupted(trigger):
            return False
        counter = services.tokens
        params = ReadParams(file_path=path)
        planned = outline_read.plan(params, path, text, content_digest, settings, counter)
        if isinstance(planned, outline_read.Outline):
            outline_read.view(text, path, encoding, planned, content_digest, settings, counter)
        else:
            window = pipeline.window_for(params, settings)
            text_reader.view(text, path, encoding, window, content_digest, settings, counter)
        return True

    def status(self) -> dict[str, Any]:
        """As `readkeeper/stats` shows it: counts, its thread's health, the setting, busy."""
        on, busy = self._services.settings.read_ahead, self.busy()
        return {**self.counts, "on": on, "busy": busy, **self.health.status(self._thread)}


__all__ = ["Ahead", "AheadServices", "machine_busy"]
