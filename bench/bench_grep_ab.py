"""Issue 31's cuts of a grep call on this repository, A/B: each variant in turn,
interleaved, with `rg -n` by hand in the same rounds.

Run it as `.venv/bin/python bench/bench_grep_ab.py` (`--runs` for more samples). The
variants: "before" (ripgrep prints `--json`) and "plain output" (server/search/grep.py
PLAIN_OUTPUT: `path NUL number:text` lines, search/blocks.py). Each figure is the
median of `--runs` rounds after one warm-up round; a round runs every variant (each
first in turn) and ripgrep by hand once, for each pattern in turn, so load shifts hit
them alike. The load average is printed before and after, since the machine is shared.
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
from readkeeper.search import grep, rg

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CASES = {
    "rare symbol": "RARE_SYMBOL|def main\\(",
    "common word (100 shown)": "return",
}
# name -> grep.PLAIN_OUTPUT
VARIANTS = {"before": False, "plain output": True}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    load_before = os.getloadavg()
    core = Readkeeper(roots=[str(ROOT)])
    core.tokens.warm_up()
    kept = grep.PLAIN_OUTPUT
    samples: dict[tuple[str, str], list[float]] = {}
    try:
        for run in range(args.runs + 1):
            for case, pattern in CASES.items():
                names = list(VARIANTS)
                turn = run % len(names)  # each variant first in turn: no order favoured
                for variant in names[turn:] + names[:turn]:
                    grep.PLAIN_OUTPUT = VARIANTS[variant]
                    start = time.perf_counter()
                    calls.call(core, "grep", {"pattern": pattern})
                    took = time.perf_counter() - start
                    if run:  # the first round warms up
                        samples.setdefault((case, variant), []).append(took)
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
        grep.PLAIN_OUTPUT = kept
        core.close()
    rows: list[dict[str, Any]] = []
    for case in CASES:
        by_hand = _ms(samples[(case, "rg -n")])
        for variant in [*VARIANTS, "rg -n"]:
            ms = _ms(samples[(case, variant)])
            rows.append({"case": case, "variant": variant, "ms": ms, "ratio": ms / by_hand})
    print(f"{'case':<26} {'variant':<14} {'median':>9} {'vs rg -n':>9}")
    for row in rows:
        print(f"{row['case']:<26} {row['variant']:<14} {row['ms']:>7.2f}ms {row['ratio']:>8.2f}x")
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
