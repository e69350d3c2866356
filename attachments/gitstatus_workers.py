"""The warm processes that compute git status (gitstatus_worker.py), one status at a
time each: started on first use, replaced after a timeout, a crash or an idle spell,
and killed with the server however it ends (files/lifeline.py). Up to `MOST_WORKERS`
run side by side, so that the status of a root that stalls holds up no other root's.

What a worker costs a status is never the repository's: the wait for a free worker,
its start (importing pygit2), and a worker that died or stopped (SIGKILL, SIGSTOP from
outside) before the status was sent. Each status is first preceded by a ping; a
worker that does not answer it is killed and replaced (`Worker.ping`). A status's own
timeout starts when it is sent (attack round 30: a healthy root that waited behind
four stalled ones was remembered as stalled)."""

from __future__ import annotations

import atexit
import bisect
import itertools
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Hashable
from contextlib import suppress
from subprocess import PIPE
from typing import Any, TypeVar

from readkeeper.errors import ReadkeeperError
from readkeeper.files import landlock, lifeline

from . import gitstatus_worker

# How long a new worker may take to import pygit2 (seconds), not a status's time.
START_SECONDS = 20.0
# A reply holds at most gitstatus_worker.MAX_LINES lines of quoted paths.
REPLY_MAX = 64 << 20
T = TypeVar("T")
# How long a warm worker may take to answer a ping before it is taken for stopped.
PING_SECONDS = 0.5


class NotRun(Exception):
    """The status did not run to its end in the call's time, for no fault of the
    repository's: no worker came free or started (`started` False), or it was sent but
    cut by the call's time before it had run the time that counts as its own."""

    def __init__(self, started: bool = False, stopped: bool = False) -> None:
        super().__init__(started)
        self.started = started
        self.stopped = stopped  # its worker found stopped from outside (SIGSTOP)


def stopped(pid: int, depth: int = 3) -> bool:
    """Whether process `pid`, or one it started (the confined reader that runs the
    status: round 34), is stopped (SIGSTOP, a debugger): their states in /proc. False
    where there is no /proc, or the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            state = stat.read().rpartition(b")")[2].split()[:1]
        if state in ([b"T"], [b"t"]):
            return True
        with open(f"/proc/{pid}/task/{pid}/children", "rb") as listed:
            children = [int(child) for child in listed.read().split()]
    except (OSError, ValueError):
        return False
    return depth > 0 and any(stopped(child, depth - 1) for child in children)


def read_line(fd: int, deadline: float) -> bytes:
    """One line from `fd`, by `deadline` (else TimeoutError); less at end of file."""
    got = bytearray()
    while not got.endswith(b"\n") and len(got) < REPLY_MAX:
        if not select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
            raise TimeoutError
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        got += chunk
    return bytes(got)


class Worker:
    """A warm worker process, started on first use, replaced after a timeout, a crash,
    or an idle spell; used by one status at a time (`Workers`)."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        self.used = 0.0
        self.started = 0.0
        self.sent: float | None = None  # when the status it runs was sent
        self.spare = False  # stopped once given back (`Workers`)
        # Whether the worker confines each status with Landlock (None: not yet ready).
        self.confined: bool | None = None

    def spawn(self) -> None:
        """Start the worker process; its "ready" line is read by `ready`."""
        env = {"LC_ALL": "C", "PATH": os.environ.get("PATH", "/usr/bin")}
        if "PYTHONPATH" in os.environ:
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        # Its own process group, so a timeout ends it whatever it is blocked on; it
        # and its child die with the server (lifeline.py), whatever ends the server.
        scripts = [gitstatus_worker.__file__, landlock.__file__, lifeline.__file__]
        command = [sys.executable, "-P", *map(os.path.abspath, scripts), str(os.getpid())]

        def start() -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                command, stdin=PIPE, stdout=PIPE, env=env, cwd="/", start_new_session=True
            )

        self.process = lifeline.spawn(start)
        self.started = time.monotonic()
        self.confined = None

    def ready(self, until: float, again: bool = True) -> subprocess.Popen[bytes]:
        """The worker, started and answering, by `until` (else NotRun: a worker still
        starting is kept for the next status); one that ended before it said it was ready
        (killed from outside while it started) is started `again`, once."""
        idle = time.monotonic() - self.used > gitstatus_worker.IDLE_SECONDS / 2
        if self.process is not None and self.confined is not None and idle:
            self.stop()
        if self.process is not None and self.process.poll() is not None:
            self.stop()
        if self.process is None:
            self.spawn()
        assert self.process is not None
        assert self.process.stdout is not None
        if self.confined is None:
            # The start is not the repository's time (a short git timeout must not kill
            # every worker before it imported pygit2), but it is the call's.
            end = self.started + START_SECONDS
            try:
                hello = read_line(self.process.stdout.fileno(), min(until, end))
            except TimeoutError:
                if time.monotonic() < end:
                    raise NotRun from None
                hello = b""
            if hello not in (b"ready\n", b"ready confined\n"):
                self.stop()
                if again:
                    return self.ready(until, again=False)
                raise ReadkeeperError(
                    "internal",
                    "git status failed: its reader (pygit2) did not start. Ask for the "
                    "attachments again.",
                )
            self.confined = hello == b"ready confined\n"
            self.used = time.monotonic()
        return self.process

    def ping(self) -> bool:
        """Whether the worker answers a ping within `PING_SECONDS`; one that does not
        (died, or stopped from outside) is killed."""
        process = self.process
        assert process is not None
        assert process.stdin is not None
        assert process.stdout is not None
        try:
            process.stdin.write(b'{"ping": true}\n')
            process.stdin.flush()
            deadline = time.monotonic() + PING_SECONDS
            if read_line(process.stdout.fileno(), deadline) == b"pong\n":
                return True
        except (BrokenPipeError, TimeoutError):
            pass
        self.stop()
        return False

    def stop(self) -> None:
        if self.process is None:
            return
        with suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.communicate()
        self.process = None
        self.confined = None


class Workers:
    """The workers, one status at a time each: the statuses of several roots run side by
    side, so a root whose status stalls holds up no other (round 29: four stalled roots
    took a 2 s call each, the others waiting behind it, told to ask again). A free
    worker goes to the first waiter: roots whose last status answered before the others,
    then in the order they came (round 30: healthy roots of concurrent calls starved).
    While every busy worker's status has run `STUCK_SECONDS` (each likely stalled), the
    first waiter gets a spare worker, up to `spare` more, stopped once it is given back
    (round 30: a healthy root behind four stalled ones waited for their 2 s)."""

    def __init__(self, most: int, spare: int = 0) -> None:
        self._most = most
        self._spare = spare
        self._all = [Worker() for _ in range(most)]
        self._free = list(self._all)
        self._waiting: list[tuple[int, int]] = []
        self._tickets = itertools.count()
        self._changed = threading.Condition()

    def take(self, until: float, first: bool = False) -> Worker | None:
        """A free worker, waiting for one until `until` (None: none came free); `first`
        puts this wait before those of roots not known to answer quickly."""
        ticket = (0 if first else 1, next(self._tickets))
        with self._changed:
            bisect.insort(self._waiting, ticket)
            try:
                while self._waiting[0] != ticket or not (self._free or self._stuck()):
                    left = until - time.monotonic()
                    if left <= 0:
                        return None
                    self._changed.wait(min(left, STUCK_SECONDS / 4))
                if self._free:
                    return self._free.pop()
                spare = Worker()
                spare.spare = True
                self._all.append(spare)
                return spare
            finally:
                self._waiting.remove(ticket)
                self._changed.notify_all()

    def _stuck(self) -> bool:
        """Whether a spare worker may start: every busy worker's status has run
        `STUCK_SECONDS`, and fewer than `spare` spares run."""
        if len(self._all) >= self._most + self._spare:
            return False
        now = time.monotonic()
        busy = [worker for worker in self._all if worker not in self._free]
        return all(
            worker.sent is not None and now - worker.sent >= STUCK_SECONDS for worker in busy
        )

    def give(self, worker: Worker) -> None:
        with self._changed:
            if worker.spare:  # its work is done
                self._all.remove(worker)
                worker.stop()
            else:
                self._free.append(worker)
            self._changed.notify_all()

    def stop(self) -> None:
        for worker in list(self._all):
            worker.stop()


class _Shared:
    """A run in flight, and what it ended with."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None


_SHARED: dict[Hashable, _Shared] = {}
_shared_lock = threading.Lock()


def shared(key: Hashable, until: float, run: Callable[[], T]) -> T:
    """`run()`, or what the run of the same `key` another call has in flight ends with:
    concurrent calls share a root's status rather than each running it (round 30: ten
    concurrent calls ran each stalled root ten times, and 3-4 of them got no healthy
    root's status); NotRun(started=True) when that has not ended by `until`."""
    with _shared_lock:
        running = _SHARED.get(key)
        mine = running is None
        if running is None:
            running = _SHARED[key] = _Shared()
    if mine:
        try:
            running.value = run()
            return running.value  # type: ignore[no-any-return]
        except BaseException as exc:
            running.error = exc
            raise
        finally:
            with _shared_lock:
                del _SHARED[key]
            running.done.set()
    if not running.done.wait(max(0.0, until - time.monotonic())):
        raise NotRun(started=True)
    if running.error is not None:
        raise running.error
    return running.value  # type: ignore[no-any-return]


# Workers at most: a workspace has a root or a few (each a worker pair while it runs),
# and spares while each of these runs a status that looks stalled.
MOST_WORKERS = 4
SPARE_WORKERS = 4
# How long a status runs before its worker is taken for stalled (a healthy status of a
# small repository takes 0.1 s).
STUCK_SECONDS = 0.5
WORKERS = Workers(MOST_WORKERS, SPARE_WORKERS)
# Its process group ends as the server exits, before the interpreter waits for the
# threads of its pools (concurrent.futures joins them at exit: a thread waiting on a
# worker blocked for good held the exit of a server whose client had left).
getattr(threading, "_register_atexit", atexit.register)(WORKERS.stop)
