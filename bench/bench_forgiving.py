"""Benchmark the no-match path of an edit on a hostile file (attack round 13, d27): a
file of 21,000 alike lines and an old_string of N of them ending in a line found
nowhere, so the search for a slipped copy (edit/forgiving.py) and the closest-text
suggestion (edit/matching.py) both run and find nothing.

Run it as `.venv/bin/python bench/bench_forgiving.py`. It prints a table and writes the
same figures to `bench/results/forgiving.json`: per N, the p50 wall time of the slipped
copy search and of the closest-text suggestion, in process. Before the budget
(edit/search_budget.py) the search compared every line at every start: 3.3 s at N=250
and 26.6 s at N=2,000 on this machine, 42-49 s of CPU at N=8,000 over MCP.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from common import machine, write_json
from readkeeper.edit.forgiving import forgive
from readkeeper.edit.matching import near_miss

LINE = "    x = 'a'\n"
TEXT = LINE * 21_000 + "    y = 'b'\n"
SIZES = (250, 2_000, 8_000, 20_000)
RUNS = 5


def _p50_ms(run: object) -> float:
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        run()  # type: ignore[operator]
        samples.append(time.perf_counter() - start)
    return round(statistics.median(samples) * 1000, 2)


def main() -> None:
    rows = []
    for size in SIZES:
        old = LINE * size + "    y = 'c'"
        rows.append(
            {
                "n_lines": size,
                "forgive_p50_ms": _p50_ms(lambda old=old: forgive(TEXT, old, "Z = 1", "big.py")),
                "near_miss_p50_ms": _p50_ms(lambda old=old: near_miss(TEXT, old)),
            }
        )
    print(f"{'N':>7} {'slipped copy p50 ms':>20} {'closest text p50 ms':>20}")
    for row in rows:
        print(f"{row['n_lines']:>7} {row['forgive_p50_ms']:>20} {row['near_miss_p50_ms']:>20}")
    write_json(
        Path(__file__).parent / "results" / "forgiving.json",
        {"machine": machine(), "file_lines": 21_001, "runs": RUNS, "rows": rows},
    )


if __name__ == "__main__":
    main()
