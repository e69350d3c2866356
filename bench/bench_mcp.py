"""Benchmark the MCP front end (issue 15): a read of a 2,000-line file through
`readkeeper mcp`, stand-alone and attached to an editor's `readkeeper serve`.

Run it as `.venv/bin/python bench/bench_mcp.py`. It prints a table and writes the same
figures to `bench/results/mcp.json`.

Rows, each a `read` tool call with `force: true` (the whole file every time, never the
stub) made with the `mcp` SDK's own client over stdio, p50/p95 of `--samples` calls:

- **stand-alone**: `readkeeper mcp --standalone --root WS`, its own core;
- **attached**: `readkeeper mcp --root WS` while `readkeeper serve` runs for WS, so each
  call crosses the attach socket and is served by the editor's core;
- **filesystem server**: the MCP filesystem server's `read_text_file` of the same file,
  the figure to beat (goal: readkeeper no slower). By default the pinned one of
  `common.filesystem_server()` (installed with npm into the git-ignored `bench/.peer/`
  on first use); `--filesystem-server CMD` names another installed one, and
  `--no-peer` leaves it out.

Also the attached mode's overhead over the stand-alone one (goal under 1 ms p50).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import shlex
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from bench_read import python_like_source
from common import (
    READKEEPER_SERVE,
    children,
    clean_env,
    compile_like_an_install,
    cpu_seconds,
    filesystem_server,
    machine,
    process_tree,
    scratch,
    server,
    summarize,
    write_json,
)
from readkeeper.attach import discovery
from readkeeper.errors import ReadkeeperError

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "mcp.json"
TARGET_OVERHEAD_MS = 1.0
READKEEPER_MCP = [sys.executable, "-m", "readkeeper", "mcp"]
STANDALONE = "read, MCP stand-alone"
ATTACHED = "read, MCP attached to the editor's server"
PEER = "read_text_file, MCP filesystem server"


async def timed_calls(
    servers: dict[str, tuple[list[str], str, dict[str, Any]]],
    samples: int,
    helpers: dict[str, list[int]],
    warmup: int = 20,
) -> tuple[dict[str, list[float]], dict[str, float], dict[str, dict[str, Any]]]:
    """Milliseconds of each server's tool call, the CPU milliseconds per call its
    processes used (the server's own, plus `helpers[row]`: the editor's server an
    attached one forwards to), and each one's stats (if it has a `stats` tool).
    `servers` maps a row to (argv, tool, arguments). The calls are interleaved, one to
    each server in turn (the order rotating), so that a change in the machine's load
    weighs on every row alike; CPU time hardly depends on that load at all."""
    async with contextlib.AsyncExitStack() as stack:
        calls: dict[str, Callable[[], Awaitable[Any]]] = {}
        clients: dict[str, Client] = {}
        started: dict[str, int] = {}
        for row, (argv, tool, arguments) in servers.items():
            params = StdioServerParameters(command=argv[0], args=argv[1:], env=clean_env())
            before = set(children())
            client = await stack.enter_async_context(Client(params, read_timeout_seconds=120))
            started[row] = _the_new_child(before, argv)
            clients[row] = client
            calls[row] = functools.partial(client.call_tool, tool, arguments)
        for row, call in calls.items():
            for _ in range(warmup):
                result = await call()
                if result.is_error:
                    raise RuntimeError(f"{row} failed: {result.content}")
        # Each server with whatever it started (a launcher's node, worker processes).
        pids = {row: [*process_tree(started[row]), *helpers.get(row, [])] for row in servers}
        cpu_before = {row: sum(map(cpu_seconds, pids[row])) for row in servers}
        times: dict[str, list[float]] = {row: [] for row in servers}
        rows = list(servers)
        for sample in range(samples):
            turn = sample % len(rows)
            for row in rows[turn:] + rows[:turn]:
                started = time.perf_counter()
                await calls[row]()
                times[row].append((time.perf_counter() - started) * 1000)
        cpu_ms = {
            row: (sum(map(cpu_seconds, pids[row])) - cpu_before[row]) * 1000 / samples
            for row in servers
        }
        stats: dict[str, dict[str, Any]] = {}
        for row, client in clients.items():
            if any(t.name == "stats" for t in (await client.list_tools()).tools):
                stats[row] = (await client.call_tool("stats", {})).structured_content or {}
        return times, cpu_ms, stats


def _the_new_child(before: set[int], argv: list[str]) -> int:
    """The pid of the one child process started since `before` was taken: the server
    the client just spawned for `argv` (whatever its command line became: a shebang
    script runs as its interpreter)."""
    found = set(children()) - before
    if len(found) != 1:
        raise RuntimeError(f"expected one new process for {argv}, found {len(found)}")
    return found.pop()


def summary(ms: list[float]) -> dict[str, float]:
    return summarize(ms, ("p50_ms", "p95_ms", "min_ms", "mean_ms"), count="samples")


def wait_for_discovery(root: Path, timeout: float = 60) -> None:
    """Wait until the editor's server has published its socket for `root`."""

    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(ReadkeeperError):  # its folder may not exist yet
            if discovery.find(str(root)) is not None:
                return
        if time.monotonic() > deadline:
            raise RuntimeError("readkeeper serve did not publish its attach socket")
        time.sleep(0.05)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=200, help="timed reads per row")
    parser.add_argument("--output", type=Path, default=RESULTS, help="JSON results file")
    parser.add_argument(
        "--filesystem-server",
        default="",
        help="command of another installed MCP filesystem server to compare with "
        "(default: the pinned one, installed into bench/.peer/ on first use)",
    )
    parser.add_argument(
        "--no-peer", action="store_true", help="leave the MCP filesystem server out"
    )
    args = parser.parse_args()
    compile_like_an_install()
    peer: list[str] | None = None
    if args.filesystem_server:
        peer = shlex.split(args.filesystem_server)
    elif not args.no_peer:
        peer = filesystem_server()  # None, with the reason printed, without node
    # A private runtime folder: the attach socket of this run only.
    os.environ["XDG_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="rk-bench-")
    with scratch("rk-bench-mcp-") as (root, log):
        path = root / "module.py"
        path.write_text(python_like_source(15, 2000))
        size = path.stat().st_size
        read = {"file_path": str(path), "force": True}
        argv = [*READKEEPER_MCP, "--root", str(root)]

        servers = {
            STANDALONE: ([*argv, "--standalone"], "read", read),
            ATTACHED: (argv, "read", read),
        }
        if peer is not None:
            servers[PEER] = ([*peer, str(root)], "read_text_file", {"path": str(path)})
        with server(READKEEPER_SERVE, root, log) as editor:
            wait_for_discovery(root)
            helpers = {ATTACHED: [editor.proc.pid]}
            times, cpu_ms, stats = anyio.run(timed_calls, servers, args.samples, helpers)
        rows = {row: {**summary(ms), "cpu_ms_per_call": cpu_ms[row]} for row, ms in times.items()}
        modes = {
            "stand-alone": stats[STANDALONE].get("mode"),
            "attached": stats[ATTACHED].get("mode"),
        }
        if modes != {"stand-alone": "standalone", "attached": "attached"}:
            # A front end that did not attach would make the overhead row meaningless.
            raise RuntimeError(f"the MCP servers ran in the wrong modes: {modes}")

    standalone = rows[STANDALONE]["p50_ms"]
    attached = rows[ATTACHED]["p50_ms"]
    overhead = attached - standalone
    verdict = "pass" if overhead <= TARGET_OVERHEAD_MS else "MISS"
    print(f"MCP read of a 2,000-line file ({size:,} bytes)")
    print(f"{'row':<44}{'p50 ms':>9}{'p95 ms':>9}{'min ms':>9}{'CPU ms':>9}")
    for name, row in rows.items():
        figures = (row[key] for key in ("p50_ms", "p95_ms", "min_ms", "cpu_ms_per_call"))
        print(f"{name:<44}" + "".join(f"{value:>9.2f}" for value in figures))
    print(f"attached over stand-alone, p50: {overhead:.2f} ms (target < 1 ms: {verdict})")
    peer_row = rows.get(PEER)
    peer_ratio = None
    if peer_row is None:
        print("(no MCP filesystem server compared)")
    else:
        peer_ratio = standalone / peer_row["p50_ms"]
        met = "pass" if peer_ratio <= 1 else "MISS"
        print(f"stand-alone / filesystem server, p50: {peer_ratio:.2f}x (target <= 1x: {met})")
        cpu_ratio = rows[STANDALONE]["cpu_ms_per_call"] / peer_row["cpu_ms_per_call"]
        print(f"stand-alone / filesystem server, server CPU per call: {cpu_ratio:.2f}x")
    write_json(
        args.output,
        {
            "benchmark": "mcp",
            "machine": machine(),
            "file_lines": 2000,
            "file_bytes": size,
            "rows": rows,
            "modes": modes,
            "standalone_over_filesystem_server_p50": {
                "value": peer_ratio,
                "target": 1.0,
                "met": peer_ratio is not None and peer_ratio <= 1,
            },
            "attached_overhead_p50_ms": {
                "value": overhead,
                "target": TARGET_OVERHEAD_MS,
                "met": overhead <= TARGET_OVERHEAD_MS,
            },
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
