"""Does the interpreter's switch interval decide how small reads fare beside a costly
pure-Python step (difflib, the outline walk) on a pool thread? Both share the GIL: a
thread that wants it waits for the holder to drop it, at most `sys.setswitchinterval`
(5 ms by default) at a time.

Run it as `.venv/bin/python bench/bench_gil.py [rounds]`. Each round runs every
configuration once, in turn, against every hostile input of bench_hostile.py's rows 2
(so a load that comes and goes on the shared machine falls on all of them alike); the
table gives each configuration's medians over the rounds of the 3-line reads' p50 and
p95 and of the hostile request's time. Figures go to `bench/results/gil.json` too.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any

from bench_hostile import under_attack
from common import machine, scratch, write_json

CASES = ("none", "nested JS outline", "stale edit, 1 s of difflib")
# Switch intervals in seconds; None is the interpreter's default (0.005). readkeeper
# sets 0.0002 (cli.SWITCH_INTERVAL_S).
INTERVALS: dict[str, float | None] = {
    "default 5 ms": None,
    "1 ms": 0.001,
    "0.5 ms": 0.0005,
    "0.2 ms": 0.0002,
}


def command(interval: float | None) -> list[str]:
    """`readkeeper serve`, with its switch interval (cli.SWITCH_INTERVAL_S) replaced."""
    value = 0.005 if interval is None else interval
    code = (
        "import sys; from readkeeper import cli; "
        f"cli.SWITCH_INTERVAL_S = {value}; sys.exit(cli.main(['serve']))"
    )
    return [sys.executable, "-c", code]


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for _ in range(rounds):
        for case in CASES:
            for label, interval in INTERVALS.items():
                with scratch("rk-bench-gil-") as (workdir, log):
                    row = under_attack(case, workdir, log, command(interval))
                runs.setdefault((case, label), []).append(row)
    table = []
    print(f"{'hostile input':28} {'interval':>13} {'p50 ms':>8} {'p95 ms':>8} {'hostile ms':>11}")
    for (case, label), rows in runs.items():
        figures = {
            key: round(statistics.median(r[key] or 0 for r in rows), 2)
            for key in ("small_p50_ms", "small_p95_ms", "hostile_ms")
        }
        table.append({"hostile": case, "interval": label, "rounds": len(rows), **figures})
        print(
            f"{case:28} {label:>13} {figures['small_p50_ms']:8.2f} "
            f"{figures['small_p95_ms']:8.2f} {figures['hostile_ms']:11.1f}"
        )
    report = {"machine": machine(), "rounds": rounds, "medians": table, "runs": list(runs.items())}
    write_json(Path(__file__).parent / "results" / "gil.json", report)


if __name__ == "__main__":
    main()
