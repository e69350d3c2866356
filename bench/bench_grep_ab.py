"""Issue 31's cuts of a grep call on this repository, A/B: each variant in turn,
interleaved, with `rg -n` by hand in the same rounds.

Run it as `.venv/bin/python bench/bench_grep_ab.py` (`--runs` for more samples). The
variants: "before" (ripgrep prints `--json`), "plain, unbatched" (server/search/grep.py
PLAIN_OUTPUT: ripgrep's lines under a heading per file, search/blocks.py, read as each
write comes: rg_output.py BATCH_S 0) and "plain output" (the same, the reader waiting
up to BATCH_S between reads). Each figure is the median of `--runs` rounds after one
warm-up round; a round runs every variant (each first in turn) and ripgrep by hand
once, for each pattern in turn, so load shifts hit them alike; the proof of the lines
shown (after the answer) is settled untimed after each call. The load average is
printed before and after, since the machine is shared. Beside each median of wall
time, the median of the calling thread's CPU time (what readkeeper itself spends,
ripgrep's run aside: on the shared 2-core machine a steadier figure than wall time).
It prints a table and writes `bench/results/grep-ab.json`; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from common import machine, write_json
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.search import grep, rg, rg_output

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CASES = {
    "rare symbol": "RARE_SYMBOL|def main\\(",
    "common word (100 shown)": "return",
}
# name -> (grep.PLAIN_OUTPUT, rg_output.BATCH_S)
VARIANTS = {
    "before": (False, rg_output.BATCH_S),
    "plain, unbatched": (True, 0.0),
    "plain output": (True, rg_output.BATCH_S),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    load_before = os.getloadavg()
    core = Readkeeper(roots=[str(ROOT)])
    core.tokens.warm_up()
    kept = grep.PLAIN_OUTPUT, rg_output.BATCH_S
    samples: dict[tuple[str, str], list[float]] = {}
    cpu: dict[tuple[str, str], list[float]] = {}
    try:
        for run in range(args.runs + 1):
            for case, pattern in CASES.items():
                names = list(VARIANTS)
                turn = run % len(names)  # each variant first in turn: no order favoured
                for variant in names[turn:] + names[:turn]:
                    grep.PLAIN_OUTPUT, rg_output.BATCH_S = VARIANTS[variant]
                    start, start_cpu = time.perf_counter(), time.thread_time()
                    calls.call(core, "grep", {"pattern": pattern})
                    took = time.perf_counter() - start
                    took_cpu = time.thread_time() - start_cpu
                    core.read_states.later.settle()  # the proof, after the answer: untimed
                    if run:  # the first round warms up
                        samples.setdefault((case, variant), []).append(took)
                        cpu.setdefault((case, variant), []).append(took_cpu)
                start = time.perf_counter()
                # stdin /dev/null: with a pipe there, rg would search it, not the tree.
                subprocess.run(
                    [rg.binary(), "--no-config", "-n", pattern],
                    cwd=ROOT,
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    check=False,
                )
                if run:
                    samples.setdefault((case, "rg -n"), []).append(time.perf_counter() - start)
    finally:
        grep.PLAIN_OUTPUT, rg_output.BATCH_S = kept
        core.close()
    rows: list[dict[str, Any]] = []
    for case in CASES:
        by_hand = _ms(samples[(case, "rg -n")])
        for variant in [*VARIANTS, "rg -n"]:
            ms = _ms(samples[(case, variant)])
            row = {"case": case, "variant": variant, "ms": ms, "ratio": ms / by_hand}
            if (case, variant) in cpu:
                row["cpu_ms"] = _ms(cpu[(case, variant)])
            rows.append(row)
    print(f"{'case':<26} {'variant':<18} {'median':>9} {'vs rg -n':>9} {'cpu':>9}")
    for row in rows:
        used = f"{row['cpu_ms']:>7.2f}ms" if "cpu_ms" in row else f"{'':>9}"
        print(
            f"{row['case']:<26} {row['variant']:<18} {row['ms']:>7.2f}ms "
            f"{row['ratio']:>8.2f}x {used}"
        )
    load = {"before": load_before, "after": os.getloadavg()}
    print(f"load average (1, 5, 15 min): before {load_before}, after {load['after']}")
    write_json(
        HERE / "results" / "grep-ab.json",
        {"machine": machine(), "load": load, "runs": args.runs, "rows": rows},
    )


def _ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 2)


if __name__ == "__main__":
    main()
