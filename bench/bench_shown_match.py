"""Benchmark matching an old_string against the views readkeeper showed
(edit/matching.as_shown, edit/shown.py) on an 80 KB file of 4,000 `[`.

Run it as `.venv/bin/python bench/bench_shown_match.py`. It prints a table and writes
the same figures to `bench/results/shown_match.json`. Nothing is asserted.

Rows: an old_string without a backslash (the common case: no view is made), one with
a regex's `\\d` (no escape readkeeper makes: no view), one with `\\r` in a file holding
a lone CR (the line-break view), one with `\\x5b` in a file holding a cut marker's look
(the marks view: a scan of every `[`, as a read of that file makes).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from common import machine, write_json
from readkeeper.edit.matching import as_shown

RESULTS = Path(__file__).resolve().parent / "results" / "shown_match.json"

CODE = "".join(f"    row_{i} = table[{i}][key] + items[-1]\n" for i in range(2000))
CASES = {
    "no backslash": (CODE, "    row_1000 = table[1000][key]"),
    "a regex's \\d": (CODE + "p = re.compile(r'\\d+')\n", "re.compile(r'\\d+')"),
    "\\r, file holding a CR": (
        CODE.replace("    row_1000 = ", "    row_1000 = 'a\rb' or ", 1),
        "row_1000 = 'a\\rb' or",
    ),
    "\\x5b, file holding a marker": (
        CODE.replace("    row_1000 = ", "    row_1000 = '[line cut: 3]' or ", 1),
        "row_1000 = '\\x5bline cut: 3]' or",
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    rows: dict[str, float] = {}
    load = os.getloadavg()[0]
    for name, (text, old) in CASES.items():
        times = []
        for _ in range(args.samples):
            start = time.perf_counter()
            as_shown(text, old, "X", "bench.py")
            times.append(time.perf_counter() - start)
        rows[name] = statistics.median(times) * 1e6
    print(f"as_shown on an 80 KB file (load {load:.2f})")
    print(f"{'old_string':32} {'p50 us':>10}")
    for name, p50 in rows.items():
        print(f"{name:32} {p50:10.1f}")
    write_json(args.output, {"machine": machine(), "load": load, "p50_us": rows})
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
