"""Programs run confined by Landlock to a call's folders, through warm launchers
(zygote.py): one per domain (the folders a call may read, matched by device and inode,
and what it may run), confined to it for good, that starts each program with vfork and
exec, so a call pays neither a Python start nor a confinement of its own.

`Launcher.start` answers like `subprocess.Popen` as far as rg.py uses it (the stdout
and stderr pipes, `poll`, `kill`, `wait`). The child is the launcher's, not ours: it is
killed through a pidfd (exactly that process, never a pid reused since) and its exit
status comes back on the call's own reply socket. A launcher that died (killed, out of
memory) is started again on the next call; past `MAX_LAUNCHERS` domains, the one used
longest ago with nothing running is retired.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import IO

from . import zygote

_REPLY_BYTES = 4096
# Warm launchers kept at once: a server has a root or a few, each a domain of its own.
MAX_LAUNCHERS = 4
# The program's output pipe: ripgrep listing 100,000 files prints over a megabyte, and
# with the default 64 KiB it waits on this process's reader at every turn.
PIPE_BYTES = 1 << 20


def widen_pipe(fd: int) -> None:
    """Give the pipe `fd` PIPE_BYTES of room, where the system allows it."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)  # Linux only
    if set_size is not None:
        with contextlib.suppress(OSError):  # over /proc/sys/fs/pipe-max-size
            fcntl.fcntl(fd, set_size, PIPE_BYTES)


class LaunchError(OSError):
    """The launcher could not start the program (it answered with an error, or is gone)."""


class _Gone(LaunchError):
    """The launcher is not there to answer: started again, once."""


def _close(*fds: int) -> None:
    for fd in fds:
        os.close(fd)


class Child:
    """A program the launcher started for one call."""

    def __init__(
        self,
        pid: int,
        pidfd: int,
        reply: socket.socket,
        stdout: int,
        stderr: int,
        ended: Callable[[Child], None] = lambda _: None,
    ):
        self.pid = pid
        self._pidfd = pidfd
        self._reply = reply
        self._ended = ended  # told once, when the exit status is known
        self.stdout: IO[bytes] = os.fdopen(stdout, "rb")
        self.stderr: IO[bytes] = os.fdopen(stderr, "rb")
        self.returncode: int | None = None
        self._lock = threading.Lock()

    def poll(self) -> int | None:
        """The exit status when the program has ended, else None."""
        return self._status(block=False)

    def wait(self) -> int:
        """Wait for the program to end; its exit status (-N: killed by signal N)."""
        status = self._status(block=True)
        assert status is not None
        return status

    def ended_fd(self) -> int:
        """A descriptor of the caller's own, readable once the program has ended (a dup
        of its pidfd; the caller closes it), or -1 when its status is known already."""
        with self._lock:
            return os.dup(self._pidfd) if self._pidfd >= 0 else -1

    def kill(self) -> None:
        """SIGKILL the program, if it still runs."""
        with self._lock:
            if self.returncode is not None or self._pidfd < 0:
                return
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)

    def _status(self, *, block: bool) -> int | None:
        with self._lock:
            if self.returncode is not None:
                return self.returncode
            self._reply.setblocking(block)
            try:
                message = self._reply.recv(_REPLY_BYTES)
            except BlockingIOError:
                return None
            except OSError:
                message = b""
            if not message and self._pidfd >= 0:
                # Its launcher died: the program may still run (it outlives its parent).
                with contextlib.suppress(ProcessLookupError):
                    signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            self.returncode = _returncode(message)
            self._reply.close()
            if self._pidfd >= 0:
                os.close(self._pidfd)
                self._pidfd = -1
            self._ended(self)
            return self.returncode


def _returncode(message: bytes) -> int:
    """The exit status a launcher's message gives (none: the launcher died, and the
    program was killed)."""
    try:
        return int(json.loads(message)["returncode"]) if message else -signal.SIGKILL
    except (ValueError, KeyError, TypeError):
        return -signal.SIGKILL


Domain = tuple[tuple[tuple[int, int], ...], tuple[str, ...]]


class _Warm:
    """One launcher process, its control socket, and its programs still running."""

    def __init__(self, process: subprocess.Popen[bytes], control: socket.socket) -> None:
        self.process = process
        self.control = control
        self.asked = 0  # requests sent, not answered yet
        self.pidfds: dict[Child, int] = {}  # a running program -> a pidfd of our own

    @property
    def running(self) -> int:
        return self.asked + len(self.pidfds)

    def stop(self) -> None:
        """Kill its programs still running (a launcher killed leaves them behind) and
        close its socket: it ends (waited for, 5 s at most)."""
        for pidfd in self.pidfds.values():
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            os.close(pidfd)
        self.pidfds.clear()
        self.control.close()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _folders(cwd: str, read: Sequence[str]) -> list[tuple[int, int, int]]:
    """Each folder of `read` (relative to `cwd`) opened as the path it names now: its
    descriptor, device and inode. One that does not exist is left out."""
    found = []
    for path in read:
        try:
            fd = os.open(os.path.join(cwd, path), os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue
        info = os.fstat(fd)
        found.append((fd, info.st_dev, info.st_ino))
    return found


class Launcher:
    """The warm launchers of this process, each started on first use of its domain."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._warm: OrderedDict[Domain, _Warm] = OrderedDict()

    def start(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        read: Sequence[str],
        run: Sequence[str],
        env: Mapping[str, str],
    ) -> Child:
        """Run `argv` in `cwd`, able to read only beneath `read` (paths relative to `cwd`
        allowed) and to run only `argv[0]` and what is beneath `run`."""
        request = json.dumps({"argv": list(argv), "cwd": cwd, "env": dict(env)}).encode()
        folders = _folders(cwd, read)
        try:
            domain = (tuple((dev, ino) for _, dev, ino in folders), (argv[0], *run))
            fds = [fd for fd, _, _ in folders]
            try:
                return self._launch(domain, fds, request, argv[0])
            except _Gone:  # it died between calls (killed, out of memory): once more, afresh
                with self._lock:
                    gone = self._warm.pop(domain, None)
                    if gone is not None:
                        gone.stop()
                return self._launch(domain, fds, request, argv[0])
        finally:
            _close(*(fd for fd, _, _ in folders))

    def _launch(self, domain: Domain, fds: list[int], request: bytes, program: str) -> Child:
        null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        out_r, out_w = os.pipe()
        widen_pipe(out_w)
        err_r, err_w = os.pipe()
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            with self._lock:
                warm = self._running(domain, fds)
                socket.send_fds(warm.control, [request], [null, out_w, err_w, theirs.fileno()])
                warm.asked += 1
        except OSError as exc:
            _close(out_r, err_r)
            mine.close()
            raise _Gone(str(exc)) from None
        finally:
            _close(null, out_w, err_w)
            theirs.close()
        try:
            message, got, _, _ = socket.recv_fds(mine, _REPLY_BYTES, 1)
            answer = json.loads(message) if message else {}
        except (OSError, ValueError):
            message, answer, got = b"", {}, []
        with self._lock:
            warm.asked -= 1
            if "pid" in answer and len(got) == 1:
                child = Child(int(answer["pid"]), got[0], mine, out_r, err_r, self._ender(warm))
                warm.pidfds[child] = os.dup(got[0])
                return child
        _close(*got)
        if "returncode" not in answer:
            _close(out_r, err_r)
            mine.close()
            if not message:
                raise _Gone("the launcher ended")
            raise LaunchError(f"readkeeper's launcher could not start {program}: {answer}")
        # It never started (no such program, no confinement): ended already, and said why.
        child = Child(-1, -1, mine, out_r, err_r)
        child.returncode = _returncode(message)
        mine.close()
        return child

    def _ender(self, warm: _Warm) -> Callable[[Child], None]:
        def ended(child: Child) -> None:
            with self._lock:
                pidfd = warm.pidfds.pop(child, None)
                if pidfd is not None:
                    os.close(pidfd)

        return ended

    def pid(self) -> int | None:
        """The pid of the launcher used last, when it runs."""
        with self._lock:
            if not self._warm:
                return None
            return next(reversed(self._warm.values())).process.pid

    def pids(self) -> list[int]:
        """The pids of the launchers running, the one used last at the end."""
        with self._lock:
            return [warm.process.pid for warm in self._warm.values()]

    def close(self) -> None:
        """Stop every launcher (the end of its socket is its signal to exit)."""
        with self._lock:
            while self._warm:
                self._warm.popitem(last=False)[1].stop()

    def _running(self, domain: Domain, fds: list[int]) -> _Warm:
        warm = self._warm.get(domain)
        if warm is not None and warm.process.poll() is not None:
            del self._warm[domain]
            warm.stop()
            warm = None
        if warm is None:
            warm = self._started(domain, fds)
            self._warm[domain] = warm
            self._retire_idle(keep=domain)
        self._warm.move_to_end(domain)
        return warm

    def _started(self, domain: Domain, fds: list[int]) -> _Warm:
        control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        spec = json.dumps({"read": fds, "run": list(domain[1])})
        try:
            process = subprocess.Popen(
                [sys.executable, "-S", "-P", "-E", zygote.__file__, str(theirs.fileno()), spec],
                pass_fds=(theirs.fileno(), *fds),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                cwd="/",
                env={},
            )
        finally:
            theirs.close()
        return _Warm(process, control)

    def _retire_idle(self, keep: Domain) -> None:
        """Past MAX_LAUNCHERS, stop those used longest ago that run nothing (a launcher
        with a program running is kept: its call is still reading)."""
        for domain, warm in list(self._warm.items()):
            if len(self._warm) <= MAX_LAUNCHERS:
                return
            if warm.running == 0 and domain != keep:
                del self._warm[domain]
                warm.stop()


LAUNCHER = Launcher()
