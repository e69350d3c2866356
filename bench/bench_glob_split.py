"""A/B of glob's cold answer (nothing kept, no watcher: the CLI's, and a server's first
glob): ripgrep's sort in one run against the folder split over SPLIT runs sorted at once
and merged here (search/merge.py), each against `rg --files` run in the same round.

Run it as `.venv/bin/python bench/bench_glob_split.py [--runs N] [--splits 1,2,3]` on the
generated 100,000-file tree of bench_search.py (built there when missing). The variants
run in turn, round after round (the machine is shared: load moves between rounds, not
within one); each figure is the median of `--runs` rounds after one warm-up, with the
CPU time of this process and its children (ripgrep) beside the wall time. It prints a
table and writes bench/results/glob_split.json; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_search import generated, shell_rg
from common import machine, write_json
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.files.confined import LAUNCHER
from readkeeper.search import merge


def _cpu() -> float:
    """CPU seconds of this process, its children, and the programs the warm launchers
    ran (server/files/zygote.py: ripgrep is a launcher's child, not ours)."""
    mine = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    spent = mine.ru_utime + mine.ru_stime + children.ru_utime + children.ru_stime
    for pid in LAUNCHER.pids():
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rpartition(")")[2].split()
        except OSError:
            continue
        spent += (int(fields[13]) + int(fields[14])) / _TICKS  # cutime, cstime
    return spent


_TICKS = os.sysconf("SC_CLK_TCK")


def _timed(run: Callable[[], Any]) -> tuple[float, float]:
    cpu, start = _cpu(), time.perf_counter()
    run()
    return time.perf_counter() - start, _cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--splits", default="1,2,3")
    parser.add_argument("--pattern", default="**/*.py")
    args = parser.parse_args()
    root = generated(args.files)
    core = Readkeeper(roots=[str(root)])  # no watcher: every glob is cold
    core.tokens.warm_up()
    rg_glob = args.pattern.removeprefix("**/")

    def glob_with(split: int) -> Callable[[], Any]:
        def run() -> Any:
            merge.SPLIT = split
            return calls.call(core, "glob", {"pattern": args.pattern})

        return run

    variants: dict[str, Callable[[], Any]] = {
        "rg --files": shell_rg(root, "--files", "-g", rg_glob),
        "rg --sortr=modified": shell_rg(root, "--files", "--sortr=modified", "-g", rg_glob),
    }
    for split in map(int, args.splits.split(",")):
        variants[f"glob, {split} run{'s' if split > 1 else ''}"] = glob_with(split)
    answers = {name: run() for name, run in variants.items() if name.startswith("glob")}
    paths = [answer["paths"] for answer in answers.values()]
    if any(p != paths[0] for p in paths):
        raise SystemExit("the variants answered differently")
    load_before = os.getloadavg()
    wall: dict[str, list[float]] = {name: [] for name in variants}
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(args.runs):
        for name, run in variants.items():
            took, spent = _timed(run)
            wall[name].append(took)
            cpu[name].append(spent)
    load_after = os.getloadavg()
    core.close()
    base_wall = statistics.median(wall["rg --files"])
    base_cpu = statistics.median(cpu["rg --files"])
    rows = []
    print(f"{'variant':24} {'wall':>9} {'ratio':>6} {'cpu':>9} {'ratio':>6}")
    for name in variants:
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        rows.append(
            {
                "variant": name,
                "wall_ms": w * 1000,
                "cpu_ms": c * 1000,
                "wall_ratio": w / base_wall,
                "cpu_ratio": c / base_cpu,
            }
        )
        print(
            f"{name:24} {w * 1000:7.0f}ms {w / base_wall:5.2f}x {c * 1000:7.0f}ms "
            f"{c / base_cpu:5.2f}x"
        )
    print(f"load average: before {load_before}, after {load_after}")
    write_json(
        Path(__file__).resolve().parent / "results" / "glob_split.json",
        {
            "machine": machine(),
            "pattern": args.pattern,
            "runs": args.runs,
            "load": [load_before, load_after],
            "rows": rows,
        },
    )


if __name__ == "__main__":
    main()
