"""Reads made ahead while the agent thinks (read/ahead.py, issue 34): what they give,
and what they must not take.

Run it as `.venv/bin/python bench/bench_ahead.py`. It prints two tables and writes
the figures of every round to `bench/results/ahead.json`.

1. **A call waiting on a file in progress** (in this process): a thread makes files
   ahead (`Ahead.run_once`, each file alone) from modules of the standard library
   grouped by size, while the main thread wakes every millisecond and notes how late
   it woke: the wait for the GIL a call arriving then would have had (tree-sitter's
   parse holds it). Beside it, the same with no worker. This sizes `MAX_BYTES`.
2. **In this process, on and off interleaved** (repeatable on a loaded machine): the
   medians of each round's reads, with `calls.call` as a front end calls it, for the
   rows below; the worker is told the machine is idle.
3. **Over MCP, beside the filesystem server** (medians of the rounds' p50s), three
   servers: readkeeper with `read_ahead` on (the default), readkeeper with it off,
   and the peer:
   - *back to back*: first reads (default parameters) of distinct never-read real
     modules of 30-250 KB, one call after the other, as `bench_peer.py`'s first row:
     the worker must not make these slower (it waits `SETTLE_SECONDS` of quiet);
   - *after 300 ms idle*: first reads of distinct never-read modules in one folder,
     each after 300 ms without a call (a model's turn takes at least that): the worker
     has made the siblings of the last read by then; once for modules of 30-250 KB
     (the worker makes only those under `MAX_BYTES`), once for modules under it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from bench_peer import Side, cache_home, copies, real_modules, timed
from common import (
    clean_env,
    compile_like_an_install,
    filesystem_server,
    machine,
    percentile,
    scratch,
    summarize,
    write_json,
)
from readkeeper.core import Readkeeper
from readkeeper.read import ahead

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "ahead.json"
READKEEPER_MCP = [sys.executable, "-m", "readkeeper", "mcp", "--standalone"]
THINK_SECONDS = 0.3
THINK = THINK_SECONDS
SIZES = ((8_000, 32_000), (32_000, 64_000), (64_000, 128_000), (128_000, 250_000))


# --- 1. a call waiting on a file in progress -------------------------------------------


def stdlib_modules(low: int, high: int, most: int) -> list[Path]:
    return real_modules_sized(low, high)[:most]


def real_modules_sized(low: int, high: int) -> list[Path]:
    import bench_peer

    saved = bench_peer.MODULE_BYTES
    bench_peer.MODULE_BYTES = (low, high)
    try:
        return bench_peer.real_modules("stdlib")
    finally:
        bench_peer.MODULE_BYTES = saved


def lateness(root: Path, modules: list[Path] | None) -> dict[str, float]:
    """How late (ms) the main thread wakes from 1 ms sleeps while a worker makes
    `modules` ahead, one file a trigger (None: no worker)."""
    late: list[float] = []
    done = threading.Event()
    made = [0.0]
    if modules is None:
        done.set()
        for _ in range(2_000):
            start = time.perf_counter()
            time.sleep(0.001)
            late.append((time.perf_counter() - start) * 1000 - 1)
    else:
        folder = (root / f"late-{len(list(root.iterdir()))}").resolve()
        paths = copies(folder, modules)
        core = Readkeeper(roots=[str(folder)])
        saved, ahead.MAX_BYTES = ahead.MAX_BYTES, 1 << 20  # every size, to size it
        core.tokens.warm_up()
        core.ahead.busy = lambda: False

        def work() -> None:
            started = time.perf_counter()
            for path in paths:
                core.ahead._make(str(path), core.ahead._calls)
            made[0] = (time.perf_counter() - started) * 1000 / len(paths)
            done.set()

        thread = threading.Thread(target=work)
        thread.start()
        while not done.is_set():
            start = time.perf_counter()
            time.sleep(0.001)
            late.append((time.perf_counter() - start) * 1000 - 1)
        thread.join()
        core.close()
        ahead.MAX_BYTES = saved
    return {
        "p50_ms": statistics.median(late),
        "p99_ms": percentile(late, 99),
        "max_ms": max(late),
        "per_file_ms": made[0],
    }


# --- 2. in this process, on and off interleaved -------------------------------------


def in_process(root: Path, on: bool, paths: list[Path], pause: float) -> float:
    """The median ms of reads of `paths` (the first left out), each after `pause`."""
    from readkeeper import calls
    from readkeeper.read.readers import outline
    from readkeeper.read.readers import text as text_reader

    folder = (root / f"ab-{len(list(root.iterdir()))}").resolve()
    copied = copies(folder, paths)
    # Cold: nothing this process made of another row's modules, a new cache folder.
    with outline._languages_lock:
        outline._cache.clear()
    with text_reader._VIEWS_LOCK:
        text_reader._VIEWS.clear()
    os.environ["XDG_CACHE_HOME"] = str(folder) + "-cache"
    core = Readkeeper(roots=[str(folder)], client_settings={"read_ahead": on})
    core.tokens.warm_up()
    core.ahead.busy = lambda: False
    times = []
    for path in copied:
        time.sleep(pause)
        started = time.perf_counter()
        calls.call(core, "readkeeper/read", {"file_path": str(path)})
        times.append((time.perf_counter() - started) * 1000)
    core.close()
    return statistics.median(times[1:])


def interleaved(root: Path, rounds: int, first: int) -> dict[str, dict[str, list[float]]]:
    pools = {
        "back to back, 30-250 KB": (real_modules_sized(30_000, 250_000), 0.0),
        "after 300 ms idle, 30-250 KB": (real_modules_sized(30_000, 250_000)[::-1], THINK),
        "after 300 ms idle, under MAX_BYTES": (real_modules_sized(8_000, ahead.MAX_BYTES), THINK),
    }
    found: dict[str, dict[str, list[float]]] = {}
    for number in range(rounds):
        for on in (True, False) if number % 2 == 0 else (False, True):
            for row, (pool, pause) in pools.items():
                start = (2 * number + on) * first
                median = in_process(root, on, pool[start : start + first], pause)
                found.setdefault(row, {}).setdefault("on" if on else "off", []).append(median)
    return found


# --- 3. over MCP --------------------------------------------------------------------------


def params_for(name: str, argv: list[str], root: Path) -> StdioServerParameters:
    env = {**clean_env(), "XDG_CACHE_HOME": str(cache_home(root) / name)}
    if name == "readkeeper, ahead off":
        env["READKEEPER_READ_AHEAD"] = "false"
    args = [*argv[1:], str(root)] if name == "peer" else [*argv[1:], "--root", str(root)]
    return StdioServerParameters(command=argv[0], args=args, env=env)


async def paused(client: Client, side: Side, paths: list[Path]) -> list[float]:
    """Each read after THINK_SECONDS without a call; the first (nothing made ahead
    yet) is left out."""
    times = []
    for path in paths:
        await anyio.sleep(THINK_SECONDS)
        times.extend(await timed(client, [side.read(path)]))
    return times[1:]


async def one_round(
    name: str, argv: list[str], root: Path, number: int, sets: dict[str, list[Path]], first: int
) -> dict[str, list[float]]:
    folder = root / f"{name.replace(', ', '-').replace(' ', '')}-{number}"
    mine = {
        key: copies(folder / key.replace(" ", "-"), modules[number * first : (number + 1) * first])
        for key, modules in sets.items()
    }
    warm = folder / "warm.py"
    warm.write_text("x = 1\n" * 50)
    side = Side("peer" if name == "peer" else "readkeeper", argv)
    async with Client(params_for(name, argv, root), read_timeout_seconds=120) as client:
        await timed(client, [side.forced(warm)] * 10)
        rows = {"back to back": await timed(client, [side.read(p) for p in mine["back"]])}
        rows["after 300 ms idle, 30-250 KB"] = await paused(client, side, mine["idle"])
        rows["after 300 ms idle, under MAX_BYTES"] = await paused(client, side, mine["small"])
        if name != "peer":
            stats = (await client.call_tool("stats", {})).structured_content or {}
            shown = stats.get("ahead", {})
            rows["files made ahead (count)"] = [float(shown.get("made", 0))]
            rows["stopped by a call (count)"] = [float(shown.get("stopped_by_call", 0))]
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds (the table: medians)")
    parser.add_argument("--first", type=int, default=12, help="never-read files per row")
    parser.add_argument("--output", type=Path, default=RESULTS, help="JSON results file")
    args = parser.parse_args()
    peer_argv = filesystem_server()
    if peer_argv is None:
        return 1
    compile_like_an_install()
    report: dict[str, Any] = {"benchmark": "ahead", "machine": machine()}
    with scratch("rk-bench-ahead-") as (scratch_root, _log):
        root = scratch_root / "files"
        root.mkdir()
        # This process's outlines go to the run's cache folder, never the user's, and
        # start cold.
        os.environ["XDG_CACHE_HOME"] = str(scratch_root / "in-process-cache")
        busy = ahead.machine_busy()
        print(
            f"load {os.getloadavg()[0]:.1f}: " + ("BUSY, the worker stays off" if busy else "idle")
        )
        report["busy_at_start"] = busy
        print("a call waiting on a file in progress (wake-up lateness, ms)")
        print(f"{'modules made ahead':<28}{'p50':>7}{'p99':>7}{'max':>7}{'per file':>10}")
        waits = {"no worker": lateness(root, None)}
        for low, high in SIZES:
            waits[f"{low // 1000}-{high // 1000} KB"] = lateness(
                root, stdlib_modules(low, high, 20)
            )
        for name, row in waits.items():
            print(
                f"{name:<28}{row['p50_ms']:>7.2f}{row['p99_ms']:>7.2f}{row['max_ms']:>7.2f}"
                f"{row['per_file_ms']:>10.2f}"
            )
        report["lateness"] = waits

        print("\nin this process, on and off interleaved: medians of the rounds' medians, ms")
        found = interleaved(root, args.rounds, args.first)
        for row, sides_found in found.items():
            on, off = (statistics.median(sides_found[k]) for k in ("on", "off"))
            print(f"{row:<38}{'on':>4}{on:>8.2f}{'off':>5}{off:>8.2f}{on / off:>7.2f}x")
        report["in_process"] = found

        modules = real_modules("stdlib")
        small = real_modules_sized(8_000, ahead.MAX_BYTES)
        need = args.first * args.rounds
        sets = {
            "back": modules[:need],
            "idle": modules[need : 2 * need],
            "small": small[-need:],
        }
        sides = [
            ("readkeeper, ahead on", READKEEPER_MCP),
            ("readkeeper, ahead off", READKEEPER_MCP),
            ("peer", peer_argv),
        ]
        rounds: list[dict[str, dict[str, Any]]] = []
        for number in range(args.rounds):
            print(f"round {number + 1} of {args.rounds} ...", file=sys.stderr)
            figures: dict[str, dict[str, Any]] = {}
            order = sides[number % 3 :] + sides[: number % 3]
            for name, argv in order:
                rows = anyio.run(one_round, name, argv, root, number, sets, args.first)
                for row, ms in rows.items():
                    figures.setdefault(row, {})[name] = summarize(ms, ("p50_ms", "min_ms"))
            rounds.append(figures)
    report["rounds"] = rounds
    table: dict[str, dict[str, float]] = {}
    print(f"\nfirst reads over MCP: p50 ms, median of {args.rounds} rounds (uptime below)")
    print(f"{'row':<38}{'ahead on':>10}{'off':>8}{'peer':>8}{'on/peer':>9}{'on/off':>8}")
    for row in rounds[0]:
        if "(count)" in row:
            made = [r[row]["readkeeper, ahead on"]["p50_ms"] for r in rounds]
            print(f"{row:<38}{statistics.median(made):>10.0f}   per round: {made}")
            table[row] = {"on": statistics.median(made)}
            continue
        values = {
            name: statistics.median(r[row][name]["p50_ms"] for r in rounds) for name, _ in sides
        }
        on, off, peer = values.values()
        print(f"{row:<38}{on:>10.2f}{off:>8.2f}{peer:>8.2f}{on / peer:>8.2f}x{on / off:>7.2f}x")
        table[row] = {"on_p50_ms": on, "off_p50_ms": off, "peer_p50_ms": peer}
    report["medians"] = table
    report["busy_at_end"] = ahead.machine_busy()
    if report["busy_at_start"] or report["busy_at_end"]:
        print(f"The machine was busy (load over {ahead.BUSY_LOAD} per core): the worker was off.")
    write_json(args.output, report)
    print(f"written to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
