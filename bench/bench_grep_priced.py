"""grep's page priced as sent (search/grep_pages.py: each match line with its file's
name as shown, files and counts name by name), A/B on this repository: "before" (a
line's text and 8 tokens, names not counted, files and counts not priced) and "priced",
interleaved, each first in turn.

Run it as `.venv/bin/python bench/bench_grep_priced.py` (`--runs` for more samples).
Each figure is the median of `--runs` rounds after a warm-up: wall time and the calling
thread's CPU time (readkeeper's own work, ripgrep's run aside: the steadier figure on
the shared machine). The load average is printed before and after. It prints a table
and writes `bench/results/grep-priced.json`; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path
from typing import Any

from common import machine, write_json
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.search import grep, grep_pages

ROOT = Path(__file__).resolve().parent.parent
CASES: dict[str, dict[str, Any]] = {
    "matches, default page": {"pattern": "return"},
    "matches, 2,000": {"pattern": "return", "max_matches": 2000},
    "files, 2,000": {"pattern": "e", "output": "files", "max_matches": 2000},
    "counts, 2,000": {"pattern": "e", "output": "counts", "max_matches": 2000},
}


class _Unpriced:
    def __init__(self, counter: object) -> None:
        pass

    def __call__(self, name: str) -> int:
        return 0


def _variant(name: str) -> None:
    before = name == "before"
    grep.NameCost = _Unpriced if before else grep_pages.NameCost  # type: ignore[misc]
    grep.LINE_TOKENS = 8 if before else grep_pages.LINE_TOKENS  # type: ignore[misc]
    grep_pages.fitting = _all if before else FITTING  # type: ignore[assignment]


FITTING = grep_pages.fitting


def _all(names: list[str], *_: object) -> int:
    return len(names)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    load_before = os.getloadavg()
    core = Readkeeper(roots=[str(ROOT)])
    core.tokens.warm_up()
    wall: dict[tuple[str, str], list[float]] = {}
    cpu: dict[tuple[str, str], list[float]] = {}
    shown: dict[tuple[str, str], int] = {}
    variants = ["before", "priced"]
    try:
        for run in range(args.runs + 1):
            for case, params in CASES.items():
                for name in variants if run % 2 else variants[::-1]:
                    _variant(name)
                    started, thread = time.perf_counter(), time.thread_time()
                    result = calls.call(core, "grep", params)
                    took, own = time.perf_counter() - started, time.thread_time() - thread
                    core.read_states.later.settle()
                    shown[(case, name)] = len(
                        result.get("files") or result.get("counts") or result["matches"]
                    )
                    if run:
                        wall.setdefault((case, name), []).append(took)
                        cpu.setdefault((case, name), []).append(own)
    finally:
        _variant("priced")
        core.close()
    load_after = os.getloadavg()
    rows = []
    print(f"load before {load_before[0]:.2f}, after {load_after[0]:.2f}; runs {args.runs}")
    print(f"{'case':24} {'variant':8} {'wall ms':>8} {'cpu ms':>8} {'shown':>6}")
    for case in CASES:
        for name in variants:
            key = (case, name)
            row = {
                "case": case,
                "variant": name,
                "wall_ms": round(statistics.median(wall[key]) * 1000, 2),
                "cpu_ms": round(statistics.median(cpu[key]) * 1000, 2),
                "shown": shown[key],
            }
            rows.append(row)
            print(f"{case:24} {name:8} {row['wall_ms']:8.2f} {row['cpu_ms']:8.2f} {row['shown']:6}")
    write_json(
        ROOT / "bench" / "results" / "grep-priced.json",
        {"machine": machine(), "load": [load_before, load_after], "rows": rows},
    )


if __name__ == "__main__":
    main()
