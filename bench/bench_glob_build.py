"""What a glob meets while the root's listing is not built yet (issue 31): the build's
own cost, a glob right after a build a call stopped, and the first globs of a fresh
core at set times after it starts.

Run it as `.venv/bin/python bench/bench_glob_build.py` (`--files` for another tree of
bench_search.py's, `--runs` for more rounds). It prints a table and writes the figures
to `bench/results/glob_build.json`; nothing is asserted.

1. **The build** (search/ahead.py, from nothing: a fresh `FileTimes`): its wall time,
   its thread's CPU (ripgrep's own is its process's), and its parts: ripgrep's
   listing, the stats (search/lookup.py) and the order.
2. **A glob after a stopped build**: a build stopped by a call after `--stop-after`
   looks at the clock (ripgrep's chunks of output, then one each 512 stats), then the
   glob that call makes, broad (`**/*.py`, every file) and narrow (`pkg00*/*.py`,
   1% of them); each against `rg --files` with the same glob.
3. **The first globs of a fresh core**, as `readkeeper mcp` makes its core at the
   first tool call (the watcher starts then; the machine said idle, so the build ahead
   runs once the watcher is set up): a glob at each of `--at` seconds after the start,
   its time and whether it waited for a build (`joined`) or ran ripgrep.
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_search import generated, shell_rg, watching
from common import machine, write_json
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.search import ahead, kept, mtimes, rg
from readkeeper.search.ahead import ListingAhead
from readkeeper.search.deferred import Builds
from readkeeper.search.mtimes import FileTimes

HERE = Path(__file__).resolve().parent


def _timed(parts: dict[str, float], module: Any, name: str) -> Callable[[], None]:
    """`module.name` adds its wall time to `parts[name]` when the bench's own thread
    calls it (never a build's after an answer); what puts it back."""
    inner = getattr(module, name)
    mine = threading.current_thread()

    def timed(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is not mine:
            return inner(*args, **kwargs)
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            parts[name] = parts.get(name, 0.0) + time.perf_counter() - start

    setattr(module, name, timed)
    return lambda: setattr(module, name, inner)


def build_rows(core: Readkeeper, runs: int) -> dict[str, float]:
    """Medians of the build from nothing, in ms: wall, thread CPU, and its parts."""
    parts: dict[str, float] = {}
    wrapped = ((ahead, "list_files"), (mtimes, "look_up"), (kept, "order_of"))
    restores = [_timed(parts, module, name) for module, name in wrapped]
    samples: dict[str, list[float]] = {}
    for n in range(runs + 1):  # the first warms up
        parts.clear()
        core.file_times = FileTimes(lambda: core.watching.watcher)
        cpu, start = time.thread_time(), time.perf_counter()
        ListingAhead(core.file_times, lambda: core.workspace)(lambda: False)
        took = {"wall": time.perf_counter() - start, "thread CPU": time.thread_time() - cpu}
        if n:
            for key, value in {**took, **parts}.items():
                samples.setdefault(key, []).append(value)
    for restore in restores:
        restore()
    return {key: round(statistics.median(v) * 1000, 1) for key, v in samples.items()}


def stopped_rows(core: Readkeeper, root: Path, runs: int, asks: int) -> list[dict[str, Any]]:
    """A glob after a build stopped at its `asks`th look, broad and narrow, against
    `rg --files` with the same glob, in turn."""
    rows = []
    for pattern, rg_glob in (("**/*.py", "*.py"), ("pkg00*/*.py", "pkg00*/*.py")):
        theirs = shell_rg(root, "--files", "-g", rg_glob)
        ours, base = [], []
        for n in range(runs + 1):
            core.file_times = FileTimes(lambda: core.watching.watcher)
            looks = 0

            def interrupted() -> bool:
                nonlocal looks
                looks += 1
                return looks > asks

            ListingAhead(core.file_times, lambda: core.workspace)(interrupted)
            start = time.perf_counter()
            calls.call(core, "glob", {"pattern": pattern})
            mine = time.perf_counter() - start
            core.file_times.builds.wait()  # the order made after the answer: untimed
            start = time.perf_counter()
            theirs()
            if n:
                ours.append(mine)
                base.append(time.perf_counter() - start)
        mine_ms, base_ms = statistics.median(ours) * 1000, statistics.median(base) * 1000
        rows.append(
            {
                "glob": pattern,
                "readkeeper_ms": round(mine_ms, 1),
                "rg_ms": round(base_ms, 1),
                "ratio": round(mine_ms / base_ms, 2),
            }
        )
    return rows


def first_globs(root: Path, at: list[float]) -> list[dict[str, Any]]:
    """A fresh core (started as `readkeeper mcp` starts its own), then a glob at each
    of `at` seconds after its start."""
    parts: dict[str, float] = {}
    restores = [_timed(parts, Builds, "join"), _timed(parts, rg, "run")]
    start = time.perf_counter()
    core = Readkeeper(roots=[str(root)])
    core.ahead.busy = lambda: False  # the shared machine's load must not stop the build
    core.tokens.load_ahead()
    core.start_watching(lambda _: None)
    rows = []
    try:
        for when in at:
            time.sleep(max(0.0, start + when - time.perf_counter()))
            parts.clear()
            began = time.perf_counter()
            calls.call(core, "glob", {"pattern": "**/*.py"})
            took = time.perf_counter() - began
            rows.append(
                {
                    "at_s": round(began - start, 2),
                    "ms": round(took * 1000, 1),
                    "waited_for_a_build_ms": round(parts.get("join", 0.0) * 1000, 1),
                    "ripgrep_ms": round(parts.get("run", 0.0) * 1000, 1),
                }
            )
    finally:
        core.close()
        for restore in restores:
            restore()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--stop-after", type=int, default=120, help="looks before the stop")
    parser.add_argument("--at", default="0.3,1,1.5,2.5,4", help="seconds, comma-separated")
    args = parser.parse_args()
    load_before = os.getloadavg()
    root = generated(args.files)
    core = watching(root, read_ahead=False)
    build = build_rows(core, args.runs)
    stopped = stopped_rows(core, root, args.runs, args.stop_after)
    core.close()
    first = first_globs(root, [float(s) for s in args.at.split(",")])
    print(f"{args.files:,} files: the build from nothing (medians of {args.runs})")
    for key, ms in build.items():
        print(f"  {key:<12} {ms:>8.1f} ms")  # list_files: ripgrep's listing, kept
    print(f"\na glob after a build stopped at its look {args.stop_after}")
    for row in stopped:
        print(
            f"  {row['glob']:<14} {row['readkeeper_ms']:>8.1f} ms   rg --files "
            f"{row['rg_ms']:>7.1f} ms  {row['ratio']:>5.2f}x"
        )
    print("\nthe first globs of a fresh core (**/*.py)")
    for row in first:
        print(
            f"  at {row['at_s']:>5.2f} s: {row['ms']:>7.1f} ms (waited for a build "
            f"{row['waited_for_a_build_ms']:.0f} ms, ripgrep {row['ripgrep_ms']:.0f} ms)"
        )
    load = {"before": load_before, "after": os.getloadavg()}
    print(f"\nload average (1, 5, 15 min): before {load_before}, after {load['after']}")
    write_json(
        HERE / "results" / "glob_build.json",
        {
            "machine": machine(),
            "load": load,
            "runs": args.runs,
            "build_ms": build,
            "after_a_stopped_build": stopped,
            "first_globs": first,
        },
    )


if __name__ == "__main__":
    main()
