"""Servers for the tests, started warm: `readkeeper serve` and `readkeeper mcp` forked from
a process that has already imported them, rather than a new interpreter importing
pygls, lsprotocol, the MCP SDK and readkeeper again for every test (0.5-1 s each, most of
what hundreds of LSP and MCP tests cost).

Each pytest process starts one *warm parent* on first use (`python warm_server.py
parent SOCKET`): it imports the servers' modules, then waits. A test starts its server as
a small *launcher* (`python -S -E warm_server.py launch SOCKET ARGS`, standard library
only, a few milliseconds) in place of `python -m readkeeper ARGS`: the launcher sends
the parent its stdin, stdout and stderr, its arguments, environment, working folder and
umask; the parent forks a child that takes them and runs readkeeper's own `main`, the
same code `python -m readkeeper` runs. The launcher lives as long as that child:
it passes on the signals it gets and exits with the child's status (or by the same
signal), so the client that started it sees the server it asked for. Killed outright,
the launcher's end of the socket closes and the parent kills the child.

What a fork cannot give is started for real (the launcher `exec`s `python -m
readkeeper`): an environment that changes how the interpreter starts (PYTHON*, the
locale), a closed stdin, stdout or stderr (the launcher's socket would take its
number), no parent (it failed to start), or a test that needs the server's own pid,
which names the launcher here (`real_command()`).

The parent starts no thread and opens nothing a child could inherit by mistake; it
ends when the pytest process that started it does (end of file on its stdin), killing
the children still running.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from typing import Any

MAX_MESSAGE = 1 << 20
# The variables read while the interpreter starts (encodings, paths, flags): a child
# forked from a parent started under other values would not be what `python` makes.
_STARTUP = ("PYTHON", "LC_", "LANG")
# Passed on by the launcher; SIGKILL and SIGSTOP cannot be caught (the parent kills
# the child when the launcher dies).
_FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1)


def _startup_env(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(_STARTUP)}


# -- the launcher (standard library only, started with -S -E) ---------------------------


def launch(path: str, args: list[str]) -> None:
    """Have the warm parent at `path` run `readkeeper ARGS` on this process's stdio, and
    end as it ends; start it for real when the parent cannot."""
    request = {
        "argv": args,
        "env": dict(os.environ),
        "cwd": os.getcwd(),
        "umask": os.umask(0o22),
    }
    os.umask(request["umask"])
    if not all(_is_open(fd) for fd in (0, 1, 2)):  # a test of a closed stdio: as it is
        _start_for_real(args)
    link = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        link.connect(path)
        socket.send_fds(link, [json.dumps(request).encode()], [0, 1, 2])
        started = json.loads(link.recv(MAX_MESSAGE) or b"{}")
    except OSError:
        started = {}
    if "pid" not in started:
        link.close()
        _start_for_real(args)
    child = int(started["pid"])
    # For a test that signals or inspects the server itself: `real_pid`.
    with contextlib.suppress(OSError), open(_pid_file(path, os.getpid()), "w") as said:
        said.write(str(child))
    # Hold none of the client's pipes: their ends are the child's alone.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(null, fd)
    for signum in _FORWARDED:
        signal.signal(signum, lambda signum, _frame: _pass_on(child, signum))
    ended = b""
    while not ended:
        try:
            ended = link.recv(MAX_MESSAGE)
        except InterruptedError:
            continue
        if not ended:  # the parent died: nothing will say how the child ended
            os._exit(1)
    code = int(json.loads(ended)["returncode"])
    if code < 0:  # ended by a signal: end by the same one, as the client expects
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code & 0xFF)


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _start_for_real(args: list[str]) -> None:
    os.execv(sys.executable, [sys.executable, "-m", "readkeeper", *args])


def _pid_file(path: str, launcher: int) -> str:
    return os.path.join(os.path.dirname(path), f"{launcher}.pid")


def _pass_on(child: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(child, signum)


# -- the warm parent --------------------------------------------------------------------


def _warm_up() -> None:
    """Import what `serve` and `mcp` import, and what their first calls do, with the
    collector's full passes held off as the servers load (readkeeper.loading)."""
    from readkeeper.loading import loading

    with loading():
        import anyio  # noqa: F401
        import mcp.server.stdio  # noqa: F401

        import readkeeper.cli
        import readkeeper.lsp.app
        import readkeeper.mcp.quick
        import readkeeper.mcp.server
        import readkeeper.mcp.stdio
        import readkeeper.read.pipeline  # noqa: F401


class _Parent:
    def __init__(self, listener: socket.socket) -> None:
        self.listener = listener
        self.selector = selectors.DefaultSelector()
        self.selector.register(listener, selectors.EVENT_READ, "listener")
        self.selector.register(sys.stdin, selectors.EVENT_READ, "stdin")
        self.children: dict[int, tuple[int, socket.socket]] = {}  # pidfd: pid, link
        self.startup = _startup_env(dict(os.environ))

    def serve(self) -> None:
        while True:
            for key, _ in self.selector.select():
                if key.data == "stdin":
                    if not os.read(sys.stdin.fileno(), 4096):
                        self._kill_all()
                        return
                elif key.data == "listener":
                    link, _ = self.listener.accept()
                    self.selector.register(link, selectors.EVENT_READ, "link")
                elif key.data == "link":
                    self._request(key.fileobj)  # type: ignore[arg-type]
                elif isinstance(key.data, str):  # "gone:PIDFD": a launcher's link
                    self._gone(int(key.data[5:]))
                else:
                    self._reap(key.fd, int(key.data))

    def _request(self, link: socket.socket) -> None:
        self.selector.unregister(link)
        try:
            message, fds, _, _ = socket.recv_fds(link, MAX_MESSAGE, 3)
            request = json.loads(message)
        except (OSError, ValueError):
            link.close()
            return
        try:
            if len(fds) == 3 and _startup_env(request["env"]) == self.startup:
                self._fork(request, fds, link)
            else:
                link.close()  # the launcher starts it for real
        finally:
            for fd in fds:
                os.close(fd)

    def _fork(self, request: dict[str, Any], fds: list[int], link: socket.socket) -> None:
        pid = os.fork()
        if pid == 0:
            _child(request, fds)  # never returns
        pidfd = os.pidfd_open(pid)
        self.children[pidfd] = (pid, link)
        self.selector.register(pidfd, selectors.EVENT_READ, pid)
        # A link whose launcher died (EOF) is noticed by the pidfd's end or _kill_all;
        # a launcher killed outright must not leave its child serving nobody.
        self.selector.register(link, selectors.EVENT_READ, f"gone:{pidfd}")
        link.send(json.dumps({"pid": pid}).encode())

    def _gone(self, pidfd: int) -> None:
        """A running child's launcher ended without its status (killed outright): the
        child would serve nobody, so it ends too (its pidfd then reaps it)."""
        _, link = self.children[pidfd]
        self.selector.unregister(link)
        with contextlib.suppress(OSError):
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)

    def _reap(self, pidfd: int, pid: int) -> None:
        _, link = self.children.pop(pidfd)
        self.selector.unregister(pidfd)
        with contextlib.suppress(KeyError):  # unless _gone did
            self.selector.unregister(link)
        os.close(pidfd)
        _, status = os.waitpid(pid, 0)
        with contextlib.suppress(OSError):
            link.send(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}).encode())
        link.close()

    def _kill_all(self) -> None:
        for pidfd, (pid, _) in list(self.children.items()):
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            os.waitpid(pid, 0)


def _child(request: dict[str, Any], fds: list[int]) -> None:
    """Become `python -m readkeeper ARGV` on the launcher's stdio, then exit as an
    interpreter does (threads joined, atexit run, streams flushed)."""
    code: Any = 1
    try:
        # The signals as a new interpreter has them (the parent ignores ^C).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for fd, target in zip(fds, (0, 1, 2), strict=True):
            os.dup2(fd, target)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        os.chdir(request["cwd"])
        os.umask(int(request["umask"]))
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = [sys.argv[0], *request["argv"]]
        from readkeeper.cli import main

        code = main()
    except SystemExit as exc:
        code = exc.code
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        os._exit(_exit(code))


def _exit(code: Any) -> int:
    import atexit
    import threading

    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr, flush=True)
    return 1


def parent(path: str) -> None:
    _warm_up()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
    # A child's ^C (the launcher passes it on) is its own; the parent only ends at EOF.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    print("ready", flush=True)
    _Parent(listener).serve()


# -- the tests' side ------------------------------------------------------------------

_parent: subprocess.Popen[bytes] | None = None
_path = ""


def command(*args: str) -> list[str]:
    """The command that starts `readkeeper ARGS` warm (`python -m readkeeper ARGS` when
    no warm parent could start, or WARM_SERVERS=0 is set)."""
    if os.environ.get("WARM_SERVERS") == "0" or not _started():
        return real_command(*args)
    return [sys.executable, "-S", "-E", os.path.abspath(__file__), "launch", _path, *args]


def real_pid(pid: int) -> int:
    """The pid of the server a process started by `command` runs: the warm child's when
    it is a launcher (which passes on signals, but has no threads to inspect and goes
    on running when sent SIGSTOP), else `pid` itself."""
    try:
        with open(_pid_file(_path, pid)) as said:
            return int(said.read())
    except (OSError, ValueError):
        return pid


def real_command(*args: str) -> list[str]:
    """`python -m readkeeper ARGS`: for a test that needs the server's own pid."""
    return [sys.executable, "-m", "readkeeper", *args]


def _started() -> bool:
    global _parent, _path
    if _parent is None:
        folder = tempfile.mkdtemp(prefix="rkw-")  # short: a socket's path has 107 bytes
        _path = os.path.join(folder, "warm.sock")
        _parent = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "parent", _path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        atexit.register(_stop, _parent, folder)
        assert _parent.stdout is not None
        if _parent.stdout.readline() != b"ready\n":
            _parent.kill()
    return _parent.poll() is None


def _stop(process: subprocess.Popen[bytes], folder: str) -> None:
    assert process.stdin is not None
    process.stdin.close()  # the parent kills its children and ends
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(10)
    process.kill()
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1] == "launch":
        launch(sys.argv[2], sys.argv[3:])
    else:
        parent(sys.argv[2])
