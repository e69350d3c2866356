"""The root's glob listing built ahead (search/ahead.py, issue 31): what a call arriving
mid-build waits for.

Run it as `.venv/bin/python bench/bench_glob_ahead.py` (`--files` for another tree of
bench_search.py's, `--runs` for more rounds). It prints a table and writes the figures
to `bench/results/glob_ahead.json`; nothing is asserted.

Each round builds the listing of the generated tree on a thread, as the worker does
(`Ahead.run_once`, the machine said idle), from nothing kept (a fresh `FileTimes`):

1. **The GIL** (no call): the main thread wakes every millisecond and notes how late
   it woke while the build runs: the longest is the longest step that holds the GIL
   (a call arriving then waits that long to run Python), beside the same with no build.
2. **A call arriving mid-build**, after a delay spread over the build's length: from
   the moment the call is in flight (`Ahead.call`) to the moment the build has
   stopped (its thread is done), and whether it stopped before building.
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time
from pathlib import Path
from typing import Any

from bench_search import generated, watching
from common import machine, percentile, write_json
from readkeeper.core import Readkeeper
from readkeeper.search.ahead import ListingAhead
from readkeeper.search.mtimes import FileTimes

HERE = Path(__file__).resolve().parent


def _fresh(core: Readkeeper) -> ListingAhead:
    """Nothing kept, and a build job of its own (the core's holds the former times)."""
    core.file_times = FileTimes(lambda: core.watching.watcher)
    job = ListingAhead(core.file_times, lambda: core.workspace)
    core.ahead.jobs[:] = [job]
    return job


def _late_ms(seconds: float, busy: threading.Thread | None) -> list[float]:
    """How late each 1 ms sleep woke, for `seconds` or until `busy` ends."""
    late = []
    ends = time.monotonic() + seconds
    while time.monotonic() < ends and (busy is None or busy.is_alive()):
        start = time.perf_counter()
        time.sleep(0.001)
        late.append((time.perf_counter() - start - 0.001) * 1000)
    return late


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    load_before = os.getloadavg()
    root = generated(args.files)
    core = watching(root)
    core.ahead.busy = lambda: False
    ahead = core.ahead
    quiet, during, builds = [], [], []
    for _ in range(args.runs):
        job = _fresh(core)
        start = time.perf_counter()
        worker = threading.Thread(target=ahead.run_once)
        worker.start()
        during += _late_ms(60, worker)
        worker.join()
        builds.append(time.perf_counter() - start)
        quiet += _late_ms(0.3, None)
        assert job.counts["built"] == 1, job.counts
    stops: list[dict[str, Any]] = []
    build_s = statistics.median(builds)
    for n in range(args.runs * 3):
        job = _fresh(core)
        worker = threading.Thread(target=ahead.run_once)
        worker.start()
        time.sleep(build_s * (n + 0.5) / (args.runs * 3))
        with ahead.call():
            arrived = time.perf_counter()
            worker.join()
            stopped_ms = (time.perf_counter() - arrived) * 1000
        stops.append(
            {
                "after_ms": round(build_s * 1000 * (n + 0.5) / (args.runs * 3), 1),
                "stopped_ms": round(stopped_ms, 2),
                "counts": dict(job.counts),
            }
        )
    core.close()
    waits = [s["stopped_ms"] for s in stops]
    rows = {
        "files": args.files,
        "build_ms_median": round(build_s * 1000, 1),
        "gil_late_ms": {
            "no build": {
                "p50": statistics.median(quiet),
                "p99": percentile(quiet, 99),
                "max": max(quiet),
            },
            "during the build": {
                "p50": statistics.median(during),
                "p99": percentile(during, 99),
                "max": max(during),
            },
        },
        "call_to_stop_ms": {
            "p50": statistics.median(waits),
            "p95": percentile(waits, 95),
            "max": max(waits),
        },
    }
    print(f"{args.files:,} files; the build's median: {rows['build_ms_median']} ms")
    print(f"\n{'a 1 ms sleep woke late by':<28} {'p50':>8} {'p99':>8} {'max':>8}")
    for name, late in rows["gil_late_ms"].items():
        print(f"{name:<28} {late['p50']:>6.2f}ms {late['p99']:>6.2f}ms {late['max']:>6.2f}ms")
    stop = rows["call_to_stop_ms"]
    print(
        f"\na call mid-build, to the build stopped: p50 {stop['p50']:.2f} ms, "
        f"p95 {stop['p95']:.2f} ms, max {stop['max']:.2f} ms ({len(waits)} calls)"
    )
    load = {"before": load_before, "after": os.getloadavg()}
    print(f"\nload average (1, 5, 15 min): before {load_before}, after {load['after']}")
    write_json(
        HERE / "results" / "glob_ahead.json",
        {"machine": machine(), "load": load, "runs": args.runs, **rows, "stops": stops},
    )


if __name__ == "__main__":
    main()
