"""Helper processes die with readkeeper, however it ends (a clean exit, SIGTERM, SIGKILL).

A helper (the git status worker and the child it forks, the PDF worker, ripgrep's
per-call launcher) calls `hold(parent)` first thing: on Linux the kernel then sends it
SIGKILL when its parent ends (PR_SET_PDEATHSIG), and a parent that ended before that
call (getppid() no longer names it) ends the helper at once. A git status worker blocked
in open() of a FIFO for good is killed with the server (attack round 28: a pair
reparented to init, holding the server's stderr open, for 11 minutes and more).

The kernel sends that signal when the *thread* that started the helper ends, not the
process: `spawn` starts helpers from one thread that lives as long as the server, so a
pool thread retiring never kills a warm worker another thread is using.

Only the standard library is imported: the helpers load this file by its path, before
anything else, with no readkeeper import in the way. Off Linux nothing is set (the
server still kills its workers when it exits normally).
"""

from __future__ import annotations

import ctypes
import os
import queue
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_PR_SET_PDEATHSIG = 1
# The exit status of a helper whose parent was gone before it could tie itself to it.
ORPHANED = 111


def hold(parent: int) -> bool:
    """Die (SIGKILL) when the process `parent` ends; exit at once when it already has.
    Whether the kernel will send the signal (Linux only)."""
    armed = False
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        armed = bool(libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0)
    if os.getppid() != parent:  # it ended before the prctl: nobody would send the signal
        os._exit(ORPHANED)
    return armed


_jobs: queue.SimpleQueue[tuple[Callable[[], Any], list[Any], threading.Event]] = queue.SimpleQueue()
_started = threading.Lock()
_thread: threading.Thread | None = None


def _serve() -> None:
    while True:
        job, box, done = _jobs.get()
        try:
            box.append((True, job()))
        except BaseException as exc:  # handed to the caller, raised there
            box.append((False, exc))
        done.set()


def spawn(start: Callable[[], T]) -> T:
    """`start()` (a subprocess.Popen of a helper that calls `hold`), run in the thread
    that lives as long as the server, so that the helper's parent-death signal comes
    when the server ends, never when a pool thread does."""
    global _thread
    with _started:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_serve, name="readkeeper-spawner", daemon=True)
            _thread.start()
    box: list[tuple[bool, Any]] = []
    done = threading.Event()
    _jobs.put((start, box, done))
    done.wait()
    ok, value = box[0]
    if not ok:
        raise value
    result: T = value
    return result
