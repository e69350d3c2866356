"""What the benchmarks share: a synchronous client for a language server over stdio,
the figures of a row of samples, the machine, and the scratch folder a run works in.

The client is hand-written rather than pygls' `LanguageClient`, so that a round trip is
the server plus the pipe plus one `json.loads`, without a Python client's own event
loop and converters. The scripts import this as `from common import ...`: a script's
own folder is on sys.path when it runs.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

READKEEPER_SERVE = [sys.executable, "-m", "readkeeper", "serve"]


def compile_like_an_install() -> None:
    """Compile readkeeper's modules to bytecode (__pycache__), as installing it does: pip
    compiles every module of a wheel it installs. Run from a checkout through an editable
    install where PYTHONDONTWRITEBYTECODE is set (as on these machines), each server
    start would compile every module from source again (about 60 ms of a start here), a
    cost no installed readkeeper pays; the dependencies it is compared with were
    compiled when pip installed them."""
    import compileall

    import readkeeper
    import readkeeper.attachments

    for package in (readkeeper, readkeeper.attachments):
        compileall.compile_dir(Path(package.__file__).parent, quiet=1)


def clean_env() -> dict[str, str]:
    """This process's environment without `READKEEPER_*`, so the defaults are measured."""
    return {k: v for k, v in os.environ.items() if not k.startswith("READKEEPER_")}


def two_cpus() -> tuple[int, int] | None:
    """Two CPUs this process may run on, for `pinned`; None where the OS cannot pin
    processes or allows only one CPU."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    allowed = sorted(os.sched_getaffinity(0))
    return (allowed[0], allowed[1]) if len(allowed) > 1 else None


@contextmanager
def pinned(cpu: int) -> Iterator[None]:
    """Run this process, and the processes it starts meanwhile, on CPU `cpu` only. Two
    processes pinned to one CPU take turns on it, so a round trip between them never
    waits for another CPU to wake up (tens of microseconds a wake-up on a virtual
    machine); pinned to two, it always does."""
    allowed = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    try:
        yield
    finally:
        os.sched_setaffinity(0, allowed)


# --- a minimal stdio JSON-RPC client ------------------------------------------------------


class LspProcess:
    """One language-server subprocess, spoken to over stdio, one request at a time.

    Requests from the server are answered as they arrive; notifications go to
    `notified`, which drops them unless a subclass keeps them.
    """

    close_timeout = 5.0

    def __init__(self, argv: list[str], log: IO[bytes], cwd: Path | None = None) -> None:
        self.started = self.answered = self.initialized_at = time.perf_counter()
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            cwd=cwd,
            env=clean_env(),
        )
        if self.proc.stdin is None or self.proc.stdout is None:
            raise RuntimeError("no pipes to the server")
        self._in, self._out = self.proc.stdin, self.proc.stdout
        self._next_id = 0

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message, separators=(",", ":")).encode()
        self._in.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self._in.flush()

    def _receive(self) -> dict[str, Any]:
        length = None
        while True:
            header = self._out.readline()
            if not header:
                raise RuntimeError(f"server exited (code {self.proc.poll()}); see its log")
            if header in (b"\r\n", b"\n"):
                break
            name, _, value = header.decode("ascii").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        if length is None:
            raise RuntimeError("message without Content-Length")
        message: dict[str, Any] = json.loads(self._out.read(length))
        if "method" in message:
            if "id" in message:
                self._answer(message)
            else:
                self.notified(message)
        return message

    def notified(self, message: dict[str, Any]) -> None:
        """A notification from the server (dropped here)."""

    def _answer(self, message: dict[str, Any]) -> None:
        result: Any = None
        if message["method"] == "workspace/configuration":
            result = [None for _ in message.get("params", {}).get("items", [])]
        self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def notify(self, method: str, params: Any = None) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any = None) -> Any:
        self._next_id += 1
        ident = self._next_id
        self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        while True:
            message = self._receive()
            if "method" in message or message.get("id") != ident:
                continue
            if "error" in message:
                raise RuntimeError(f"{method} failed: {message['error']}")
            return message.get("result")

    def initialize(self, root: Path, options: dict[str, Any] | None = None) -> Any:
        """`initialize` with `root` as the one workspace folder (and `options` as the
        initializationOptions, if given), then `initialized`."""
        uri = root.as_uri()
        params: dict[str, Any] = {
            "processId": os.getpid(),
            "rootUri": uri,
            "workspaceFolders": [{"uri": uri, "name": root.name}],
            "capabilities": {},
        }
        if options is not None:
            params["initializationOptions"] = options
        result = self.request("initialize", params)
        self.answered = time.perf_counter()
        self.notify("initialized", {})
        self.initialized_at = time.perf_counter()
        return result

    def rss_mb(self) -> dict[str, float]:
        """VmRSS and VmHWM (peak) of the server process, in MB."""
        return proc_status(self.pid)

    def close(self) -> None:
        try:
            self.request("shutdown")
            self.notify("exit")
            self.proc.wait(timeout=self.close_timeout)
        except (RuntimeError, OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()


@contextmanager
def server(
    argv: list[str], root: Path, log: IO[bytes], cwd: Path | None = None
) -> Iterator[LspProcess]:
    """A server started in `cwd` and initialized with `root`, closed afterwards."""
    process = LspProcess(argv, log, cwd)
    try:
        process.initialize(root)
        yield process
    finally:
        process.close()


def proc_status(pid: int, keys: Sequence[str] = ("VmRSS", "VmHWM")) -> dict[str, float]:
    """Fields of /proc/<pid>/status, in the order it lists them: sizes (kB there) in
    MB, counts (such as Threads) as they are."""
    figures: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in keys:
            number, *unit = value.split()
            figures[key] = int(number) / 1024 if unit == ["kB"] else int(number)
    return figures


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a process has used so far (from /proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children(parent: int | None = None) -> dict[int, list[str]]:
    """The child processes of `parent` (default: this process), with their command
    lines."""
    parent = os.getpid() if parent is None else parent
    found: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
            if ppid == parent:
                found[int(entry.name)] = (entry / "cmdline").read_text().split("\0")[:-1]
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
    return found


def process_tree(pid: int) -> list[int]:
    """`pid` and every process below it (a launcher such as npx and the server it
    starts, or a server's worker processes)."""
    tree, pending = [], [pid]
    while pending:
        current = pending.pop()
        tree.append(current)
        pending.extend(children(current))
    return tree


# --- figures ------------------------------------------------------------------------------


def percentile(samples: Sequence[float], q: int) -> float:
    """The q-th percentile of `samples` (inclusive method)."""
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1]


_FIGURES: dict[str, Callable[[Sequence[float]], float]] = {
    "p50_ms": statistics.median,
    "p95_ms": lambda ms: percentile(ms, 95),
    "min_ms": min,
    "max_ms": max,
    "mean_ms": statistics.fmean,
}


def summarize(
    ms: Sequence[float],
    figures: Sequence[str] = ("p50_ms", "p95_ms", "min_ms", "mean_ms"),
    count: str = "n",
) -> dict[str, float]:
    """`figures` of samples in milliseconds (any of p50_ms, p95_ms, min_ms, max_ms and
    mean_ms), and their number under `count`: each result file keeps its own keys."""
    summary = {name: _FIGURES[name](ms) for name in figures}
    summary[count] = len(ms)
    return summary


def verdict(value: float, target: float) -> str:
    return "pass" if value <= target else "MISS"


def scored(targets: dict[str, tuple[float, float]]) -> dict[str, dict[str, Any]]:
    """Each (value, target) with whether it was met (at most the target)."""
    return {
        name: {"value": value, "target": target, "met": value <= target}
        for name, (value, target) in targets.items()
    }


def machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
    }


# --- a run's files ------------------------------------------------------------------------


@contextmanager
def scratch(prefix: str) -> Iterator[tuple[Path, IO[bytes]]]:
    """A temporary folder for the workspace, and a log file beside it for the servers'
    stderr: both removed afterwards, except the log when the run fails (its path is
    printed then)."""
    workdir = Path(tempfile.mkdtemp(prefix=prefix)).resolve()
    log_path = workdir.parent / f"{workdir.name}-servers.log"
    try:
        with log_path.open("wb") as log:
            yield workdir, log
    except Exception:
        print(f"server logs: {log_path}", file=sys.stderr)
        raise
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    log_path.unlink(missing_ok=True)


def write_json(path: Path, report: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n")


PEER_PACKAGE = "@modelcontextprotocol/server-filesystem"
PEER_VERSION = "2026.8.31"
PEER_FOLDER = Path(__file__).resolve().parent / ".peer"  # git-ignored


def filesystem_server() -> list[str] | None:
    """The command of the MCP filesystem server to compare with (its roots go after it).

    It is installed with npm into the git-ignored `bench/.peer/` on first use (from the
    npm registry, pinned); None, with the reason printed, where node or npm is missing
    or the install fails.
    """
    entry = PEER_FOLDER / "node_modules" / PEER_PACKAGE / "dist" / "index.js"
    if not entry.exists():
        node_ok = shutil.which("node") and shutil.which("npm")
        if not node_ok:
            print("(no MCP filesystem server compared: node and npm are needed)")
            return None
        PEER_FOLDER.mkdir(exist_ok=True)
        done = subprocess.run(
            [
                "npm",
                "install",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                "--prefix",
                str(PEER_FOLDER),
                f"{PEER_PACKAGE}@{PEER_VERSION}",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0 or not entry.exists():
            print(f"(no MCP filesystem server compared: npm install failed: {done.stderr[-300:]})")
            return None
    return [shutil.which("node") or "node", str(entry)]
