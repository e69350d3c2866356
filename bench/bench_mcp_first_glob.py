"""The first glob of a `readkeeper mcp` session, over stdio with the SDK's client, on the
generated 100,000-file tree of bench_search.py: the core made at the first tool call
(no `--root`: the roots may come from the client) against the core made when the
handshake ends (`--root`, mcp/early_start.py), the glob sent N ms after the handshake,
each against `rg --files` run in the same round.

Run it as `.venv/bin/python bench/bench_mcp_first_glob.py [--runs N] [--after 0,1000,3000]`.
A fresh server a sample (its own cache folder). A row's figure is the median of the
runs' first globs (`**/*.py`), in ms, as the client waits for it; `stats` after it says
when the core started and whether the build ahead could run (read/ahead.py builds glob's
listing only when the machine is not busy: on a busy one the first glob is ripgrep's
sort whenever it comes). `--idle`: the servers are told the machine is idle (their
`read/ahead.py` BUSY_LOAD raised, by a `sitecustomize` of this script's on their
PYTHONPATH), as a machine with free cores is: the build ahead then runs. Writes
bench/results/mcp_first_glob.json; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from bench_search import generated, shell_rg
from common import clean_env, machine, write_json

HERE = Path(__file__).resolve().parent
READKEEPER_MCP = [sys.executable, "-m", "readkeeper", "mcp", "--standalone"]


# Loaded by the servers' interpreter when `--idle`: read/ahead.py's BUSY_LOAD raised
# once that module is imported, so its worker never finds the machine busy.
IDLE_SITECUSTOMIZE = """
import importlib.abc, importlib.machinery, sys

class _Idle(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "readkeeper.read.ahead":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module
        def exec_module(module):
            run(module)
            module.BUSY_LOAD = float("inf")
        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, _Idle())
"""


async def first_glob(
    root: Path, early: bool, after_s: float, cache: Path, site: str | None
) -> dict[str, Any]:
    """One fresh server: the handshake, `after_s` of quiet, then the first glob."""
    args = [*READKEEPER_MCP[1:], *(["--root", str(root)] if early else [])]
    env = {**clean_env(), "XDG_CACHE_HOME": str(cache)}
    if site is not None:
        env["PYTHONPATH"] = site
    params = StdioServerParameters(command=READKEEPER_MCP[0], args=args, env=env, cwd=root)
    started = time.perf_counter()
    async with Client(params, read_timeout_seconds=120) as client:
        await client.list_tools()
        handshake = time.perf_counter() - started
        await anyio.sleep(after_s)
        sent = time.perf_counter()
        result = await client.call_tool("glob", {"pattern": "**/*.py"})
        took = time.perf_counter() - sent
        assert not result.is_error
        assert isinstance(result.structured_content, dict)
        stats = await client.call_tool("stats", {})
        shown = stats.structured_content or {}
    return {
        "handshake_ms": handshake * 1000,
        "glob_ms": took * 1000,
        "paths": len(result.structured_content["paths"]),
        "core_started": shown.get("core_started"),
        "busy": (shown.get("ahead") or {}).get("busy"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--after", default="0,1000,3000", help="ms after the handshake")
    parser.add_argument("--idle", action="store_true", help="the servers think it idle")
    args = parser.parse_args()
    root = generated(args.files)
    theirs = shell_rg(root, "--files", "-g", "*.py")
    afters = [int(a) for a in args.after.split(",")]
    samples: dict[tuple[bool, int], list[dict[str, Any]]] = {}
    base: list[float] = []
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="rk-first-glob-") as scratch:
        site = None
        if args.idle:
            site = os.path.join(scratch, "site")
            os.mkdir(site)
            Path(site, "sitecustomize.py").write_text(IDLE_SITECUSTOMIZE)
        for run in range(args.runs):
            for after in afters:
                for early in (False, True):
                    cache = Path(scratch) / f"{run}-{after}-{early}"
                    got = anyio.run(first_glob, root, early, after / 1000, cache, site)
                    samples.setdefault((early, after), []).append(got)
                    start = time.perf_counter()
                    theirs()
                    base.append(time.perf_counter() - start)
    load_after = os.getloadavg()
    base_ms = statistics.median(base) * 1000
    rows = []
    print(f"{'core made':18} {'glob after':>10} {'first glob':>10} {'ratio':>6}  samples (ms)")
    for (early, after), got in samples.items():
        ms = statistics.median(g["glob_ms"] for g in got)
        when = "at the handshake" if early else "at the first call"
        rows.append(
            {"core": when, "after_ms": after, "glob_ms": ms, "ratio": ms / base_ms, "samples": got}
        )
        shown = " ".join(f"{g['glob_ms']:.0f}" for g in got)
        print(f"{when:18} {after:>8}ms {ms:>8.0f}ms {ms / base_ms:5.2f}x  {shown}")
    print(f"rg --files -g '*.py': {base_ms:.0f} ms (median of {len(base)})")
    busy = sorted({str(g["busy"]) for got in samples.values() for g in got})
    print(f"machine busy (no build ahead): {', '.join(busy)}")
    print(f"load average: before {load_before}, after {load_after}")
    report = {
        "machine": machine(),
        "load": [load_before, load_after],
        "rg_files_ms": base_ms,
        "rows": rows,
    }
    name = "mcp_first_glob_idle.json" if args.idle else "mcp_first_glob.json"
    write_json(HERE / "results" / name, json.loads(json.dumps(report)))


if __name__ == "__main__":
    main()
