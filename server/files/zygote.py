"""A warm launcher of confined programs: one small process per set of folders the calls
may read (a domain), confined with Landlock to exactly those folders before it serves a
call, that starts each program with vfork and exec (`subprocess`). The program inherits
the launcher's domain, so a call pays neither a Python start (13-56 ms) nor the fork of
an interpreter and the confinement of its child (about 1 ms, bench/bench_grep_phases.py).

It runs as a script (`python -S -P -E zygote.py CONTROL_FD DOMAIN`), standard library
only. DOMAIN is JSON `{"read": [fd, ...], "run": [path, ...]}`: the folders to read,
passed as descriptors the caller opened and checked (the very folders, whatever their
names lead to later), and the programs and libraries it may run. Every import happens
before the confinement: nothing outside the domain is readable after it. A launcher
that cannot confine itself answers every call with an error (the caller then confines
each run on its own).

The protocol, over the SOCK_SEQPACKET socket CONTROL_FD (its only input): a request is
one JSON message `{argv, env, cwd}` carrying four descriptors (stdin, stdout, stderr,
and the call's own reply socket). On the reply socket the launcher sends `{pid}` with a
pidfd of the child (so the caller can kill exactly that process, never a reused pid),
then `{returncode}` when it has exited; or `{returncode: 127}` alone when the program
could not start (its reason written to the call's stderr). End of file on CONTROL_FD
(the caller retired it, closed or died) kills the programs still running and ends the
launcher, so no program outlives readkeeper's process.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
from typing import Any

MAX_REQUEST = 1 << 20
# Exit statuses of a run the launcher never made (as the per-call launcher's).
NOT_CONFINED, NOT_STARTED = 125, 127


def _landlock() -> Any:
    """landlock.py beside this file, loaded by path: `-P` keeps this folder off sys.path,
    and the package's __init__ must not run here."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "landlock.py")
    spec = importlib.util.spec_from_file_location("readkeeper_landlock", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _confine(domain: dict[str, Any]) -> str:
    """Confine this process to `domain` for good; why it could not ("" when it did)."""
    landlock = _landlock()
    try:
        landlock.limit_memory()  # inherited by every program it starts
        if landlock.restrict([int(fd) for fd in domain["read"]], list(domain["run"])):
            return ""
        return "Landlock could not be applied"
    except (OSError, ValueError, TypeError, KeyError) as exc:
        return f"Landlock could not be applied: {exc}"
    finally:
        for fd in domain.get("read", []):
            with contextlib.suppress(OSError, TypeError, ValueError):
                os.close(int(fd))


class _Server:
    """The launcher's loop: requests on the control socket, children's exits on pidfds."""

    def __init__(self, control: socket.socket, refusal: str) -> None:
        self.control = control
        self.refusal = refusal
        self.selector = selectors.DefaultSelector()
        self.selector.register(control, selectors.EVENT_READ, None)
        self.children: dict[int, tuple[subprocess.Popen[bytes], socket.socket]] = {}

    def serve(self) -> None:
        while True:
            for key, _ in self.selector.select():
                if key.data is None:
                    if not self._request():
                        self._kill_all()
                        return
                else:
                    self._reap(int(key.fd))

    def _request(self) -> bool:
        """Serve one message; False when the caller is gone."""
        try:
            message, fds, _, _ = socket.recv_fds(self.control, MAX_REQUEST, 4)
        except OSError:
            return False
        if not message:
            return False
        if len(fds) != 4:
            for fd in fds:
                os.close(fd)
            return True
        reply = socket.socket(fileno=fds[3])
        try:
            self._start(json.loads(message), fds[:3], reply)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            with contextlib.suppress(OSError):
                os.write(fds[2], f"readkeeper: the confined launch failed: {exc}\n".encode())
                reply.send(json.dumps({"returncode": NOT_STARTED}).encode())
            reply.close()
        finally:
            for fd in fds[:3]:
                os.close(fd)
        return True

    def _start(self, request: dict[str, Any], stdio: list[int], reply: socket.socket) -> None:
        if self.refusal:
            os.write(stdio[2], f"readkeeper: {self.refusal}\n".encode())
            reply.send(json.dumps({"returncode": NOT_CONFINED}).encode())
            reply.close()
            return
        argv = [str(arg) for arg in request["argv"]]
        # vfork and exec: restore_signals gives the program SIGPIPE's default (Python
        # ignores it); close_fds keeps every other call's pipes and sockets from it.
        child = subprocess.Popen(
            argv,
            cwd=str(request["cwd"]),
            stdin=stdio[0],
            stdout=stdio[1],
            stderr=stdio[2],
            env={str(k): str(v) for k, v in request["env"].items()},
            close_fds=True,
            restore_signals=True,
        )
        try:
            pidfd = os.pidfd_open(child.pid)
        except OSError:
            child.kill()
            child.wait()
            raise
        self.children[pidfd] = (child, reply)
        self.selector.register(pidfd, selectors.EVENT_READ, child.pid)
        socket.send_fds(reply, [json.dumps({"pid": child.pid}).encode()], [pidfd])

    def _reap(self, pidfd: int) -> None:
        child, reply = self.children.pop(pidfd)
        self.selector.unregister(pidfd)
        os.close(pidfd)
        code = child.wait()
        with contextlib.suppress(OSError):  # the caller may have stopped listening
            reply.send(json.dumps({"returncode": code}).encode())
        reply.close()

    def _kill_all(self) -> None:
        for pidfd, (child, _) in list(self.children.items()):
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            child.wait()


def serve(control_fd: int, domain: str) -> None:
    """Confine to `domain`, then start a program per request on `control_fd` until its
    other end closes."""
    try:
        refusal = _confine(json.loads(domain))
    except ValueError as exc:
        refusal = f"a domain that does not parse: {exc}"
    # A terminal's ^C is the caller's to handle. A handler, not SIG_IGN: an ignored
    # signal stays ignored across exec, a handled one is reset to its default there.
    signal.signal(signal.SIGINT, lambda _signum, _frame: None)
    _Server(socket.socket(fileno=control_fd), refusal).serve()


if __name__ == "__main__":
    serve(int(sys.argv[1]), sys.argv[2])
