"""Programs run confined by Landlock to a call's folders, through the warm launcher
(zygote.py): started once per readkeeper process, it forks a child per call that
confines itself and becomes the program, so a call pays a fork instead of a Python start.

`Launcher.start` answers like `subprocess.Popen` as far as rg.py uses it (the stdout
and stderr pipes, `poll`, `kill`, `wait`). The child is the launcher's, not ours: it is
killed through a pidfd (exactly that process, never a pid reused since) and its exit
status comes back on the call's own reply socket. A launcher that died (killed, out of
memory) is started again on the next call.
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
from collections.abc import Mapping, Sequence
from typing import IO

from . import zygote

_REPLY_BYTES = 4096
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

    def __init__(self, pid: int, pidfd: int, reply: socket.socket, stdout: int, stderr: int):
        self.pid = pid
        self._pidfd = pidfd
        self._reply = reply
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
            try:
                code = int(json.loads(message)["returncode"]) if message else -signal.SIGKILL
            except (ValueError, KeyError, TypeError):
                code = -signal.SIGKILL
            self.returncode = code  # no answer: the launcher died, and its children with it
            self._reply.close()
            os.close(self._pidfd)
            self._pidfd = -1
            return code


class Launcher:
    """The warm launcher of this process, started on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._control: socket.socket | None = None

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
        request = json.dumps(
            {"argv": list(argv), "cwd": cwd, "read": list(read), "run": list(run), "env": dict(env)}
        ).encode()
        try:
            return self._launch(request, argv[0])
        except _Gone:  # it died between calls (killed, out of memory): once more, afresh
            with self._lock:
                self._stop_locked()
            return self._launch(request, argv[0])

    def _launch(self, request: bytes, program: str) -> Child:
        null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        out_r, out_w = os.pipe()
        widen_pipe(out_w)
        err_r, err_w = os.pipe()
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            with self._lock:
                socket.send_fds(self._running(), [request], [null, out_w, err_w, theirs.fileno()])
        except OSError as exc:
            _close(out_r, err_r)
            mine.close()
            raise _Gone(str(exc)) from None
        finally:
            _close(null, out_w, err_w)
            theirs.close()
        try:
            message, fds, _, _ = socket.recv_fds(mine, _REPLY_BYTES, 1)
            if not message:
                raise _Gone("the launcher ended")
            answer = json.loads(message)
            if "pid" not in answer or len(fds) != 1:
                _close(*fds)
                raise LaunchError(f"readkeeper's launcher could not start {program}: {answer}")
        except (OSError, ValueError):
            _close(out_r, err_r)
            mine.close()
            raise
        return Child(int(answer["pid"]), fds[0], mine, out_r, err_r)

    def pid(self) -> int | None:
        """The launcher's own pid, when it runs."""
        with self._lock:
            return self._process.pid if self._process is not None else None

    def close(self) -> None:
        """Stop the launcher (the end of its socket is its signal to exit)."""
        with self._lock:
            if self._control is not None:
                self._control.close()
                self._control = None
            if self._process is not None:
                self._process.wait(5)
                self._process = None

    def _running(self) -> socket.socket:
        if self._process is not None and self._process.poll() is not None:
            self._stop_locked()
        if self._control is None:
            control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                self._process = subprocess.Popen(
                    [sys.executable, "-S", "-P", "-E", zygote.__file__, str(theirs.fileno())],
                    pass_fds=(theirs.fileno(),),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    cwd="/",
                    env={},
                )
            finally:
                theirs.close()
            self._control = control
        return self._control

    def _stop_locked(self) -> None:
        if self._control is not None:
            self._control.close()
            self._control = None
        if self._process is not None:
            try:
                self._process.kill()
                self._process.wait(5)
            except (OSError, subprocess.TimeoutExpired):
                pass
            self._process = None


LAUNCHER = Launcher()
