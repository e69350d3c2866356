"""The warm processes that compute git status (gitstatus_worker.py), one status at a
time each: started on first use, replaced after a timeout, a crash or an idle spell,
and killed with the server however it ends (files/lifeline.py). Several run side by
side, so that the status of a root that stalls holds up no other root's."""

from __future__ import annotations

import atexit
import os
import select
import signal
import subprocess
import sys
import threading
import time
from contextlib import suppress
from subprocess import PIPE

from readkeeper.errors import ReadkeeperError
from readkeeper.files import landlock, lifeline

from . import gitstatus_worker

# How long a new worker may take to import pygit2 (seconds), not a status's time.
START_SECONDS = 20.0
# A reply holds at most gitstatus_worker.MAX_LINES lines of quoted paths.
REPLY_MAX = 64 << 20


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
        # Whether the last started worker confines each status with Landlock.
        self.confined: bool | None = None

    def ready(self) -> subprocess.Popen[bytes]:
        idle = time.monotonic() - self.used > gitstatus_worker.IDLE_SECONDS / 2
        if self.process is not None and (idle or self.process.poll() is not None):
            self.stop()
        if self.process is None:
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
            # The start is not the repository's time (a short git timeout must not kill
            # every worker before it imported pygit2).
            assert self.process.stdout is not None
            try:
                hello = read_line(self.process.stdout.fileno(), time.monotonic() + START_SECONDS)
            except TimeoutError:
                hello = b""
            if hello not in (b"ready\n", b"ready confined\n"):
                self.stop()
                raise ReadkeeperError(
                    "internal",
                    "git status failed: its reader (pygit2) did not start. Ask for the "
                    "attachments again.",
                )
            self.confined = hello == b"ready confined\n"
        return self.process

    def stop(self) -> None:
        if self.process is None:
            return
        with suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.communicate()
        self.process = None


class Workers:
    """The workers, one status at a time each: the statuses of several roots run side by
    side, so a root whose status stalls holds up no other (round 29: four stalled roots
    took a 2 s call each, the others waiting behind it, told to ask again)."""

    def __init__(self, most: int) -> None:
        self._all = [Worker() for _ in range(most)]
        self._free = list(self._all)
        self._changed = threading.Condition()

    def take(self, deadline: float) -> Worker | None:
        """A free worker, waiting for one until `deadline` (None: none came free)."""
        with self._changed:
            while not self._free:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._changed.wait(left)
            return self._free.pop()

    def give(self, worker: Worker) -> None:
        with self._changed:
            self._free.append(worker)
            self._changed.notify()

    def stop(self) -> None:
        for worker in self._all:
            worker.stop()


# Workers at most: a workspace has a root or a few (each a worker pair while it runs).
MOST_WORKERS = 4
WORKERS = Workers(MOST_WORKERS)
# Its process group ends as the server exits, before the interpreter waits for the
# threads of its pools (concurrent.futures joins them at exit: a thread waiting on a
# worker blocked for good held the exit of a server whose client had left).
getattr(threading, "_register_atexit", atexit.register)(WORKERS.stop)
