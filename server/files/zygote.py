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

A spare child waits for the next call: forked when a call's program has ended, it
confines itself at once to the folders of that call (the likeliest next one: a session
searches one workspace), through descriptors the launcher opened and identified, then
waits for its command. A request whose cwd, folders and program are those very files
(the same names, and each name still the same file: a folder swapped since is not)
is handed to it; any other gets a fresh fork, and the spare is killed. So a call skips
the fork and the confinement (0.2-0.5 ms of a grep here: bench/bench_grep_ab.py). The
spare, like every child, dies with the launcher, holds none of another call's
descriptors, and runs nothing until its command comes: what it can read was fixed
before, and is exactly what a fresh child's would be.
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
        os.chdir(request["cwd"])
        argv = [str(arg) for arg in request["argv"]]
        landlock.limit_memory()
        confined = landlock.restrict(list(request["read"]), [argv[0], *request["run"]])
        _become(request, confined)
    except BaseException as exc:
        _failed(exc)


def _become(request: dict[str, Any], confined: bool) -> None:
    """Become the program of `request`, its stdio in place; exit NOT_CONFINED unless
    `confined`."""
    if not confined:
        os.write(2, b"readkeeper: Landlock could not be applied\n")
        os._exit(NOT_CONFINED)
    # Python ignores SIGPIPE; the program should die of it as it would from a shell.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    argv = [str(arg) for arg in request["argv"]]
    os.execve(argv[0], argv, {str(k): str(v) for k, v in request["env"].items()})


def _failed(exc: BaseException) -> None:
    try:
        os.write(2, f"readkeeper: the confined launch failed: {exc}\n".encode())
    finally:
        os._exit(NOT_STARTED)


class _Spare:
    """A child confined ahead to one call's files, waiting for its command on `sock`."""

    def __init__(self, landlock: Any, request: dict[str, Any]) -> None:
        self.key = _key(request)
        held = _open_all(request)  # opened here: the spare's rules are on these very files
        try:
            self.files = tuple(_file(fd) for fd in held)
            mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            launcher = os.getpid()
            self.pid = os.fork()
            if self.pid == 0:
                _waiting(landlock, held, len(request["read"]), theirs.fileno(), launcher)
            theirs.close()
            self.sock = mine
            self.pidfd = os.pidfd_open(self.pid)
        finally:
            for fd in held:
                if fd >= 0:
                    os.close(fd)

    def fits(self, request: dict[str, Any]) -> bool:
        """Whether `request` names the files this spare is confined to, each still the
        file it was when the spare was made."""
        if _key(request) != self.key:
            return False
        names = _names(request)
        return tuple(_file_by_name(name, request["cwd"]) for name in names) == self.files

    def hand(self, request: dict[str, Any], stdio: list[int]) -> None:
        """Give the spare its command and stdio: it becomes the program."""
        message = json.dumps({"argv": request["argv"], "env": request["env"]}).encode()
        socket.send_fds(self.sock, [message], stdio)
        self.sock.close()

    def drop(self) -> None:
        """End the spare unused (it reads end of file; the kill makes sure)."""
        self.sock.close()
        with contextlib.suppress(ProcessLookupError):
            signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)


def _key(request: dict[str, Any]) -> tuple[Any, ...]:
    argv = request["argv"]
    return (request["cwd"], tuple(request["read"]), argv[0] if argv else "", tuple(request["run"]))


def _names(request: dict[str, Any]) -> list[str]:
    """The files a child's confinement is made of: its cwd, then what it may read, then
    what it may run."""
    return [".", *request["read"], request["argv"][0], *request["run"]]


def _open_all(request: dict[str, Any]) -> list[int]:
    """Each of `_names` opened (O_PATH, -1 when missing), relative ones in the cwd."""
    cwd = os.open(request["cwd"], os.O_PATH | os.O_DIRECTORY)
    held = [cwd]
    for name in _names(request)[1:]:
        try:
            held.append(os.open(name, os.O_PATH, dir_fd=cwd))
        except OSError:
            held.append(-1)
    return held


def _file(fd: int) -> tuple[int, int] | None:
    if fd < 0:
        return None
    st = os.fstat(fd)
    return (st.st_dev, st.st_ino)


def _file_by_name(name: str, cwd: str) -> tuple[int, int] | None:
    try:
        st = os.stat(os.path.join(cwd, name))
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _waiting(landlock: Any, held: list[int], reads: int, sock: int, parent: int) -> None:
    """In the spare: confine to `held` (cwd, `reads` folders to read, then the program
    and what else it may run), wait for the command, become it. Never returns."""
    try:
        if not landlock.die_with_parent(parent):
            os._exit(NOT_STARTED)
        os.fchdir(held[0])
        landlock.limit_memory()
        kept = [(i, fd) for i, fd in enumerate(held) if i and fd >= 0]
        read = [fd for i, fd in kept if i <= reads]
        confined = landlock.restrict(read, [fd for i, fd in kept if i > reads])
        os.dup2(sock, 3)
        os.closerange(4, 1 << 16)  # the files held, every other call's pipes and sockets
        message, fds, _, _ = socket.recv_fds(socket.socket(fileno=3), MAX_REQUEST, 3)
        if not message or len(fds) != 3:
            os._exit(NOT_STARTED)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.closerange(3, 1 << 16)
        _become(json.loads(message), confined)
    except BaseException as exc:
        _failed(exc)


class _Calls:
    """What the launcher keeps between requests: the spare, and the last request (the
    folders the next spare is confined to)."""

    def __init__(self, landlock: Any, selector: selectors.BaseSelector, spare: bool) -> None:
        self.landlock = landlock
        self.selector = selector
        self.spares = spare
        self.spare: _Spare | None = None
        self.last: dict[str, Any] | None = None

    def make_spare(self) -> None:
        """A spare for the last request's files, when there is none."""
        if self.spare is not None or self.last is None or not self.spares:
            return
        try:
            spare = _Spare(self.landlock, self.last)
        except (OSError, LookupError, TypeError, ValueError):
            return  # a folder gone: the next call forks afresh
        self.selector.register(spare.pidfd, selectors.EVENT_READ, (spare.pid, None))
        self.spare = spare

    def start(self, request: dict[str, Any], stdio: list[int], answering: socket.socket) -> int:
        """Start the program of `request`, by the spare when it fits; its pid."""
        spare, self.spare, self.last = self.spare, None, request
        handed = False
        if spare is not None:
            try:
                if spare.fits(request):
                    spare.hand(request, stdio)
                    handed = True
            except (OSError, LookupError, TypeError, ValueError):
                pass  # it died, or the request is malformed: a fresh child says how
            if handed:
                self.selector.modify(spare.pidfd, selectors.EVENT_READ, (spare.pid, answering))
                socket.send_fds(answering, [json.dumps({"pid": spare.pid}).encode()], [spare.pidfd])
                return spare.pid
            spare.drop()
        launcher = os.getpid()
        pid = os.fork()
        if pid == 0:
            _child(self.landlock, request, stdio, launcher)
        pidfd = os.pidfd_open(pid)
        # Reaped whatever comes (a spare's pidfd too: it is registered when made).
        self.selector.register(pidfd, selectors.EVENT_READ, (pid, answering))
        socket.send_fds(answering, [json.dumps({"pid": pid}).encode()], [pidfd])
        return pid


def _spawn(calls: _Calls, control: socket.socket) -> bool:
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
        calls.start(json.loads(message), fds[:3], answering)
        reply = None  # answered when the child exits
    except (OSError, LookupError, TypeError, ValueError) as exc:
        if reply is not None:
            with contextlib.suppress(OSError):
                reply.send(json.dumps({"error": str(exc)}).encode())
    finally:
        for fd in fds[:3]:
            os.close(fd)
        if reply is not None:
            reply.close()
    return True


def _reap(calls: _Calls, pidfd: int, pid: int, reply: socket.socket | None) -> None:
    calls.selector.unregister(pidfd)
    os.close(pidfd)
    _, status = os.waitpid(pid, 0)
    if reply is None:  # a spare that ended unused
        if calls.spare is not None and calls.spare.pid == pid:
            calls.spare.sock.close()
            calls.spare = None
        return
    with contextlib.suppress(OSError):  # the caller may have stopped listening
        reply.send(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}).encode())
    reply.close()
    calls.make_spare()  # now, while its caller reads the output: not during the run


def serve(control_fd: int, spare: bool = True) -> None:
    """Fork a confined child per request on `control_fd` until its other end closes;
    `spare`: keep a spare child (False: the bench's baseline)."""
    landlock = _landlock()
    landlock.abi()  # libc loaded once, here, not in every child
    # ...and its prctl looked up once: ctypes makes a function object on first use,
    # which each child would otherwise make again (0.1 ms of a launch).
    landlock.warm()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's ^C is the caller's to handle
    control = socket.socket(fileno=control_fd)
    selector = selectors.DefaultSelector()
    selector.register(control, selectors.EVENT_READ, None)
    calls = _Calls(landlock, selector, spare)
    while True:
        for key, _ in selector.select():
            if key.data is None:
                if not _spawn(calls, control):
                    return
            else:
                pid, reply = key.data
                _reap(calls, int(key.fd), pid, reply)


if __name__ == "__main__":
    serve(int(sys.argv[1]), spare="--no-spare" not in sys.argv[2:])
