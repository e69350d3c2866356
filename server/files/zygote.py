"""The warm launcher of confined programs: one small process, started once, that forks a
child per call; the child confines itself with Landlock to the call's own folders and
then becomes the program. A call then pays a fork, not a Python start (13-56 ms each,
bench/bench_search.py).

It runs as a script (`python -S -P -E zygote.py FD`), standard library only, and is
never confined itself: each child applies its own Landlock domain after the fork, so no
call's folders are ever added to another's (a domain only narrows, and the launcher
holds none). It stays single-threaded, so a fork never copies a lock another thread
held.

The protocol, over the SOCK_SEQPACKET socket FD (its only input, from the process that
started it): a request is one JSON message `{argv, env, cwd, read, run}` carrying four
descriptors (stdin, stdout, stderr, and the call's own reply socket). On the reply
socket the launcher sends `{pid}` with a pidfd of the child (so the caller can kill
exactly that process, never a reused pid), then `{returncode}` when it has exited. End
of file on FD (the caller is gone) ends the launcher.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import selectors
import signal
import socket
import sys
from typing import Any

MAX_REQUEST = 1 << 20
# Exit statuses of a child that could not become the program (as the per-call launcher).
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


def _child(landlock: Any, request: dict[str, Any], stdio: list[int], parent: int) -> None:
    """In the forked child: take the call's stdio, confine, become the program (killed
    when the launcher ends). Never returns."""
    try:
        if not landlock.die_with_parent(parent):
            os._exit(NOT_STARTED)
        for target, fd in enumerate(stdio):
            os.dup2(fd, target)
        os.closerange(3, 1 << 16)  # the launcher's socket and every other call's pipes
        # Python ignores SIGPIPE; the program should die of it as it would from a shell.
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.chdir(request["cwd"])
        argv = [str(arg) for arg in request["argv"]]
        landlock.limit_memory()
        if not landlock.restrict(list(request["read"]), [argv[0], *request["run"]]):
            os.write(2, b"readkeeper: Landlock could not be applied\n")
            os._exit(NOT_CONFINED)
        os.execve(argv[0], argv, {str(k): str(v) for k, v in request["env"].items()})
    except BaseException as exc:
        try:
            os.write(2, f"readkeeper: the confined launch failed: {exc}\n".encode())
        finally:
            os._exit(NOT_STARTED)


def _spawn(landlock: Any, control: socket.socket, selector: selectors.BaseSelector) -> bool:
    """Serve one request; False when the caller is gone."""
    try:
        message, fds, _, _ = socket.recv_fds(control, MAX_REQUEST, 4)
    except OSError:
        return False
    if not message:
        return False
    if len(fds) != 4:
        for fd in fds:
            os.close(fd)
        return True
    answering = socket.socket(fileno=fds[3])
    reply: socket.socket | None = answering
    try:
        request = json.loads(message)
        launcher = os.getpid()
        pid = os.fork()
        if pid == 0:
            _child(landlock, request, fds[:3], launcher)
        pidfd = os.pidfd_open(pid)
        selector.register(pidfd, selectors.EVENT_READ, (pid, answering))  # reaped whatever comes
        socket.send_fds(answering, [json.dumps({"pid": pid}).encode()], [pidfd])
        reply = None  # answered when the child exits
    except (OSError, ValueError) as exc:
        if reply is not None:
            with contextlib.suppress(OSError):
                reply.send(json.dumps({"error": str(exc)}).encode())
    finally:
        for fd in fds[:3]:
            os.close(fd)
        if reply is not None:
            reply.close()
    return True


def _reap(selector: selectors.BaseSelector, pidfd: int, pid: int, reply: socket.socket) -> None:
    selector.unregister(pidfd)
    os.close(pidfd)
    _, status = os.waitpid(pid, 0)
    with contextlib.suppress(OSError):  # the caller may have stopped listening
        reply.send(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}).encode())
    reply.close()


def serve(control_fd: int) -> None:
    """Fork a confined child per request on `control_fd` until its other end closes."""
    landlock = _landlock()
    landlock.abi()  # libc loaded once, here, not in every child
    # ...and its prctl looked up once: ctypes makes a function object on first use,
    # which each child would otherwise make again (0.1 ms of a launch).
    landlock.warm()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's ^C is the caller's to handle
    control = socket.socket(fileno=control_fd)
    selector = selectors.DefaultSelector()
    selector.register(control, selectors.EVENT_READ, None)
    while True:
        for key, _ in selector.select():
            if key.data is None:
                if not _spawn(landlock, control, selector):
                    return
            else:
                pid, reply = key.data
                _reap(selector, int(key.fd), pid, reply)


if __name__ == "__main__":
    serve(int(sys.argv[1]))
