"""The PDF workers: PDFs are opened, read and drawn in processes of their own, with
limits; this module is the server's side of them (the pool, the leases, the verdicts).

A PDF is a program for its reader. A 1 MB file can hold a gigabyte of zlib-compressed
zeros that pdfium inflates whole before it draws the page (seconds of CPU and 2 GB of
memory), and neither pypdf nor pdfium can be interrupted once a page has started. So the
server never parses a PDF itself: `read_pdf` (pdf.py) leases a worker process and asks
it for the page count, page sizes, page text and PNG pages, one job at a time.

- The worker is pdf_worker.py run as a script (`python -P pdf_worker.py`: no
  readkeeper import, nothing from the working directory on `sys.path`), started by
  `subprocess` (fork+exec, never a bare fork of the threaded server) on the first PDF
  read, and kept warm for the next: up to `POOL_SIZE` processes, so two reads run side
  by side, while each process does one job at a time (pdfium is not thread-safe; alone
  in its process it needs no lock, and nothing else in the server shares its state).
- Each job runs under limits the worker sets on itself with `resource.setrlimit`: its
  address space (`RLIMIT_AS`, `MEMORY_BASE` plus `MEMORY_PER_INPUT_BYTE` per byte of the
  PDF) and its CPU time (`RLIMIT_CPU`, `CPU_SECONDS` more than it has used). The parent
  holds the wall clock: a lease that runs past `TIME_LIMIT`, or whose request is
  cancelled, gets its worker killed.
- Bytes go in (the PDF) and come out (text, PNG bytes) over the worker's stdin and
  stdout, as frames: a JSON header and raw blobs. The parent never unpickles anything a
  worker (which parses hostile input) says, and bounds every frame's size.
- A worker that dies is reaped with its resource usage, which tells a limit hit
  (`too_large`: the CPU limit's SIGXCPU, or a peak RSS near the memory limit, where
  pdfium aborts on a failed allocation) from a crash on a damaged file (`corrupt`) and
  from a kill from outside (`internal`). The server carries on either way; the next
  lease starts a fresh worker.

The limits are module constants, not settings: they bound the server against hostile
files, and settings come partly from the client and the workspace, which must not be
able to lift them.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import resource
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any, TypeVar

from ... import errors, quoting
from ...files import lifeline
from . import pdf_worker
from .pdf_worker import IDLE_SECONDS, MAX_FRAME, frame, parse_header
from .pdf_worker import Failure as Failure  # what a lease raises, for its callers

# At most this many worker processes: two reads of PDFs run side by side (on a 2-core
# machine more would only compete for the cores), later ones wait for a free worker.
POOL_SIZE = 2
# Wall-clock seconds one read may hold its worker (every job of the read together);
# pages stop being started after `pdf_reading.MAX_SECONDS`, so this bounds the page in
# flight.
TIME_LIMIT = 20.0
# CPU seconds one job may use. Below TIME_LIMIT, so a page that only computes is stopped
# by the kernel (SIGXCPU) and reported as such; the wall clock catches the rest.
CPU_SECONDS = 15
# Address space of a job. A worker with pypdf, pdfium and Pillow loaded maps about
# 120 MB, a 20-page render peaks under 100 MB of RSS, and a full-page 600 dpi A3 scan
# decodes to about 210 MB; a decompression bomb is stopped here instead of at the 2 GB+
# it takes unbounded. The PDF itself is held up to about four times (the request
# frame, pypdf's stream, pdfium's copy, slack), hence the per-byte allowance.
MEMORY_BASE = 768 << 20
MEMORY_PER_INPUT_BYTE = 4
# A worker is not reused after it has served LEASES_PER_WORKER reads or grown past
# RETIRE_RSS (memory a big PDF made it keep), nor near its IDLE_SECONDS (pdf_worker.py).
LEASES_PER_WORKER = 100
RETIRE_RSS = 256 << 20
# How often a waiting parent looks at its deadline and at cancellation.
_POLL_SECONDS = 0.05

T = TypeVar("T")
Item = dict[str, Any]
OnItem = Callable[[Item, list[bytes]], None]

# --- what the parent sees -----------------------------------------------------------


class Cancelled(Exception):
    """The request was cancelled and its worker killed; nobody waits for an answer."""


_cancel: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar(
    "readkeeper_cancel", default=None
)


def cancelled() -> bool:
    """Whether the request this thread serves was cancelled (for any blocking wait)."""
    cancel = _cancel.get()
    return cancel is not None and cancel.is_set()


def cancellable(cancel: threading.Event, function: Callable[..., T], *args: Any) -> T:
    """Call `function(*args)` in this thread so that setting `cancel` (the front end
    does, when the client cancels the request) kills the worker it is waiting for."""
    token = _cancel.set(cancel)
    try:
        return function(*args)
    finally:
        _cancel.reset(token)


# --- the parent side: processes, leases, the pool -------------------------------------


class _Process:
    """One worker process and the parent's ends of its pipes."""

    def __init__(self) -> None:
        # What the child's `ru_maxrss` starts from (it survives exec): the parent's peak.
        self.inherited_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        # Dies with the server (files/lifeline.py); cwd: nothing of the workspace importable.
        scripts = [os.path.abspath(pdf_worker.__file__), os.path.abspath(lifeline.__file__)]
        command, pipe = [sys.executable, "-P", *scripts, str(os.getpid())], subprocess.PIPE
        start = partial(subprocess.Popen, command, stdin=pipe, stdout=pipe, cwd="/", close_fds=True)
        self.proc = lifeline.spawn(start)
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.to_worker = self.proc.stdin.fileno()
        self.from_worker = self.proc.stdout.fileno()
        os.set_blocking(self.to_worker, False)
        os.set_blocking(self.from_worker, False)
        self.leases = 0
        self.peak_rss = 0
        self.idle_since = time.monotonic()
        self.reaped: tuple[int, Any] | None = None  # (wait status, rusage)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def sample_peak(self) -> None:
        """Note the worker's own peak RSS (VmHWM) while it works: its `ru_maxrss` at death
        also counts the parent's peak, which hides a bomb's growth in a larger parent."""
        try:
            with open(f"/proc/{self.proc.pid}/status", "rb") as status:
                for line in status:
                    if line.startswith(b"VmHWM:"):
                        self.peak_rss = max(self.peak_rss, int(line.split()[1]) * 1024)
                        return
        except (OSError, ValueError, IndexError):  # no /proc, or the worker is gone
            return

    def reusable(self) -> bool:
        return (
            self.reaped is None
            and self.proc.poll() is None
            and self.leases < LEASES_PER_WORKER
            and self.peak_rss < RETIRE_RSS
            # The worker leaves by itself after IDLE_SECONDS: never hand out one that
            # may be leaving as the request reaches it.
            and time.monotonic() - self.idle_since < IDLE_SECONDS - 30
        )

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()
        self.reap()

    def reap(self, timeout: float | None = None) -> tuple[int, Any]:
        """Wait for the process to exit (killing it after `timeout`), with its rusage."""
        if self.reaped is None:
            if self.proc.returncode is not None:  # already reaped by Popen.poll
                self.reaped = (0, None)
            else:
                end = None if timeout is None else time.monotonic() + timeout
                while True:
                    pid, status, usage = os.wait4(self.pid, 0 if end is None else os.WNOHANG)
                    if pid:
                        break
                    if end is not None and time.monotonic() > end:
                        with contextlib.suppress(ProcessLookupError):
                            self.proc.kill()
                        end = None
                    else:
                        time.sleep(0.01)
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                self.reaped = (status, usage)
            for pipe in (self.proc.stdin, self.proc.stdout):
                with contextlib.suppress(OSError):
                    pipe.close()  # type: ignore[union-attr]
        return self.reaped


class _Eof(Exception):
    pass


class Lease:
    """A worker process held for one read: its jobs run in order on the same document,
    under one wall-clock deadline."""

    def __init__(self, process: _Process, cancel: threading.Event | None) -> None:
        self._process = process
        self._cancel = cancel
        self.deadline = time.monotonic() + TIME_LIMIT
        self._memory = MEMORY_BASE
        self._failure: Failure | None = None

    @property
    def pid(self) -> int:
        """The worker's process id (tests tell a warm worker from a new one by it)."""
        return self._process.pid

    @property
    def healthy(self) -> bool:
        """False once a job failed in a way that leaves the worker unfit for another
        read: it is then not given back to the pool."""
        return self._failure is None

    def call(
        self,
        job: str,
        args: dict[str, Any] | None = None,
        data: bytes | None = None,
        on_item: OnItem | None = None,
    ) -> dict[str, Any]:
        """Run `job` in the worker (with the PDF's bytes, for the first job of a read).
        Each page it streams back goes to `on_item` as it arrives; the job's own result
        is returned. Raises `Failure` (the worker is then gone, unless the job only found
        the file damaged or encrypted) or `Cancelled`."""
        if self._failure is not None:
            raise self._failure
        if data is not None:
            self._memory = MEMORY_BASE + MEMORY_PER_INPUT_BYTE * len(data)
        limits = {"cpu": CPU_SECONDS, "memory": self._memory}
        blobs = [] if data is None else [data]
        request = frame({"job": job, "args": args or {}, "limits": limits}, blobs)
        try:
            self._send(request)
            while True:
                header, blobs = self._receive()
                if "item" in header:
                    if on_item is not None:
                        on_item(header["item"], blobs)
                    continue
                self._process.peak_rss = max(self._process.peak_rss, int(header.get("rss", 0)))
                if "error" in header:
                    error = header["error"]
                    own = quoting.phrase(errors.library_detail(str(error["reason"]), ""))
                    reason = errors.with_library_words(own, error.get("words"))  # quoted
                    failure = Failure(error["kind"], reason, error.get("page"))
                    if failure.kind in ("too_large", "internal"):
                        self._fail(failure)  # the worker leaves after these
                    raise failure
                result: dict[str, Any] = header["done"]
                return result
        except _Eof:
            failure = self._verdict()
            self._failure = failure
            raise failure from None
        except (Failure, Cancelled):
            raise
        except BaseException:
            # Anything else (a bad frame, an error while handling an item) leaves the
            # conversation in an unknown state: the worker cannot be trusted further.
            self._fail(Failure("internal", "the PDF worker's answer was cut short"))
            raise

    def _fail(self, failure: Failure) -> None:
        self._failure = failure
        self._process.kill()

    def _wait(self, fd: int, events: int) -> None:
        poller = select.poll()
        poller.register(fd, events | select.POLLHUP | select.POLLERR)
        while True:
            if self._cancel is not None and self._cancel.is_set():
                self._fail(Failure("internal", "cancelled"))
                raise Cancelled
            left = self.deadline - time.monotonic()
            if left <= 0:
                failure = Failure("too_large", f"the {TIME_LIMIT:.0f}-second time limit")
                self._fail(failure)
                raise failure
            if poller.poll(min(left, _POLL_SECONDS) * 1000):
                return
            self._process.sample_peak()

    def _send(self, parts: list[bytes]) -> None:
        for part in parts:
            view = memoryview(part)
            while view:
                self._wait(self._process.to_worker, select.POLLOUT)
                try:
                    sent = os.write(self._process.to_worker, view[: 1 << 20])
                except BlockingIOError:
                    continue
                except BrokenPipeError:
                    raise _Eof from None
                view = view[sent:]

    def _read(self, size: int) -> bytes:
        chunks = bytearray()
        while len(chunks) < size:
            self._wait(self._process.from_worker, select.POLLIN)
            try:
                chunk = os.read(self._process.from_worker, min(size - len(chunks), 1 << 20))
            except BlockingIOError:
                continue
            if not chunk:
                raise _Eof
            chunks += chunk
        return bytes(chunks)

    def _receive(self) -> tuple[dict[str, Any], list[bytes]]:
        (length,) = struct.unpack(">I", self._read(4))
        if length > MAX_FRAME:
            raise ValueError(f"a {length:,}-byte frame header")
        header, sizes = parse_header(self._read(length))
        return header, [self._read(size) for size in sizes]

    def _verdict(self) -> Failure:
        """Why the worker died, from how it ended and what it used."""
        status, usage = self._process.reap(timeout=1.0)
        # The peak is the worker's, over its life; one that grew past RETIRE_RSS was not
        # reused, so a peak near this lease's limit was reached in this lease.
        rss = self._process.peak_rss  # the last the worker reported
        if usage is not None and usage.ru_maxrss * 1024 > self._process.inherited_rss:
            rss = max(rss, usage.ru_maxrss * 1024)  # grown past what it inherited
        memory = f"the {self._memory / (1 << 20):,.0f} MB memory limit"
        if os.WIFSIGNALED(status):
            number = os.WTERMSIG(status)
            name = signal.Signals(number).name if number in signal.valid_signals() else number
            if number == signal.SIGXCPU:
                return Failure("too_large", f"the {CPU_SECONDS}-second CPU limit")
            # pdfium aborts when an allocation fails, Python raises: either way the
            # process had grown to near its limit.
            if rss >= self._memory // 2:
                return Failure("too_large", memory)
            if number in _CRASHES:
                return Failure("corrupt", f"the PDF reader crashed ({name})")
            return Failure("internal", f"the PDF worker was stopped by {name} from outside")
        if rss >= self._memory // 2:
            return Failure("too_large", memory)
        code = os.waitstatus_to_exitcode(status)
        return Failure("internal", f"the PDF worker exited unexpectedly (code {code})")


_CRASH_NAMES = ("SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE", "SIGABRT", "SIGTRAP", "SIGSYS")
_CRASHES = {signal.Signals[name] for name in _CRASH_NAMES}


class Pool:
    """Up to `size` warm worker processes, each leased to one read at a time."""

    def __init__(self, size: int = POOL_SIZE) -> None:
        self.size = size
        self._idle: list[_Process] = []
        self._live: set[_Process] = set()
        self._starting = 0
        self._changed = threading.Condition()

    @contextlib.contextmanager
    def lease(self) -> Iterator[Lease]:
        """A worker for one read: a warm one if there is one, else a new one, else the
        first to come free (the wait ends early if the request is cancelled)."""
        cancel = _cancel.get()
        process = self._acquire(cancel)
        lease = Lease(process, cancel)
        try:
            yield lease
        finally:
            self._release(process, lease.healthy)

    def pids(self) -> list[int]:
        """The live workers' process ids (for tests and diagnostics)."""
        with self._changed:
            return [p.pid for p in self._live]

    def close(self) -> None:
        """Stop every worker (at exit): idle ones and those still on a job."""
        with self._changed:
            processes, self._idle = list(self._live), []
            self._live.clear()
        for process in processes:
            process.kill()

    def _acquire(self, cancel: threading.Event | None) -> _Process:
        with self._changed:
            while True:
                while self._idle:
                    process = self._idle.pop()
                    if process.reusable():
                        process.leases += 1
                        return process
                    self._live.discard(process)
                    process.kill()
                if len(self._live) + self._starting < self.size:
                    self._starting += 1
                    break
                if cancel is not None and cancel.is_set():
                    raise Cancelled
                self._changed.wait(_POLL_SECONDS)
        try:
            process = _Process()
        except OSError as exc:
            raise Failure("internal", f"the PDF worker could not start ({exc})") from None
        finally:
            with self._changed:
                self._starting -= 1
                self._changed.notify()
        process.leases = 1
        with self._changed:
            self._live.add(process)
        return process

    def _release(self, process: _Process, healthy: bool) -> None:
        process.idle_since = time.monotonic()
        with self._changed:
            keep = healthy and process in self._live and process.reusable()
            if keep:
                self._idle.append(process)
            else:
                self._live.discard(process)
            self._changed.notify()
        if not keep:
            process.kill()


_pool: Pool | None = None
_pool_lock = threading.Lock()


def pool() -> Pool:
    """The server's pool, created (and its shutdown at exit registered) on first use."""
    global _pool
    with _pool_lock:
        if _pool is None:
            import atexit

            _pool = Pool()
            atexit.register(_pool.close)
        return _pool


def lease() -> contextlib.AbstractContextManager[Lease]:
    """A worker of the server's pool for one read (see `Pool.lease`)."""
    return pool().lease()
