"""Where a grep call's time goes (issue 31's goal: within 1.3x of `rg -n` by hand), on this
repository, in-process as bench_search.py calls it.

Run it as `.venv/bin/python bench/bench_grep_phases.py` (`--runs` for more samples). Each
case is one grep call, timed whole and split into its phases: ripgrep's run as readkeeper
makes it (the warm launcher's start of it included), the cutting of its output
(plain or JSON) into per-file blocks (search/blocks.py) and the rest (parameters, pages,
tokens, the answer); beside them, the proof of the lines shown (search/seen.py
`record_shown`), which runs after the answer (state/later.py), so not in the call's time.
Beside it: ripgrep
with the same pattern run as a shell would, and `rg --version` started through the warm
launcher and unconfined (what starting a confined run costs). Each figure is the median
of `--runs` calls after one warm-up, the cases taken in turn; the 1-minute load average is
printed, since the machine is shared. It prints a table and writes
`bench/results/grep-phases.json`; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import machine, write_json
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.search import blocks, rg
from readkeeper.search import grep as grep_module

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CASES = {
    "rare symbol": "RARE_SYMBOL|def main\\(",
    "common word (100 shown)": "return",
}


def _timed(samples: dict[str, list[float]], key: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            samples.setdefault(key, []).append(time.perf_counter() - start)

    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    load_before = os.getloadavg()
    core = Readkeeper(roots=[str(ROOT)])
    core.tokens.warm_up()
    samples: dict[str, list[float]] = {}
    # The phases, timed where grep.py calls them (module attributes, put back after).
    phases = [(rg, "run", "rg run"), (blocks, "blocks", "blocks")]
    phases.append((blocks, "plain_blocks", "blocks"))  # ripgrep's plain output, cut
    phases.append((grep_module, "record_shown", "proof"))
    originals = [getattr(module, name) for module, name, _ in phases]
    for (module, name, key), fn in zip(phases, originals, strict=True):
        setattr(module, name, _timed(samples, key, fn))
    rows = []
    try:
        for case, pattern in CASES.items():
            command = [rg.binary(), "--no-config", "-n", pattern]
            shell: list[float] = []
            totals: list[float] = []
            for run in range(args.runs + 1):
                for key in ("rg run", "blocks", "proof"):
                    samples[key] = []
                start = time.perf_counter()
                calls.call(core, "grep", {"pattern": pattern})
                took = time.perf_counter() - start
                core.read_states.later.settle()  # the proof, after the answer: not in `took`
                parts = {key: sum(samples[key]) for key in ("rg run", "blocks", "proof")}
                start = time.perf_counter()
                # stdin /dev/null: with a pipe there, rg would search it, not the tree.
                subprocess.run(
                    command, cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, check=False
                )
                if run:  # the first round warms up
                    totals.append(took)
                    shell.append(time.perf_counter() - start)
                    for key, value in parts.items():
                        samples.setdefault(f"{case}/{key}", []).append(value)
                    rest = took - parts["rg run"] - parts["blocks"]
                    samples.setdefault(f"{case}/rest", []).append(rest)
            row: dict[str, Any] = {
                "case": case,
                "grep_ms": _ms(totals),
                "rg_by_hand_ms": _ms(shell),
            }
            for key in ("rg run", "blocks", "proof", "rest"):
                row[f"{key.replace(' ', '_')}_ms"] = _ms(samples[f"{case}/{key}"])
            row["ratio"] = round(row["grep_ms"] / row["rg_by_hand_ms"], 2)
            rows.append(row)
    finally:
        for (module, name, _), fn in zip(phases, originals, strict=True):
            setattr(module, name, fn)
    launch = _launch_ms(args.runs)
    core.close()
    print(
        f"{'case':<26} {'grep':>8} {'rg -n':>8} {'ratio':>6} {'rg run':>8} {'blocks':>8} "
        f"{'rest':>8} {'proof*':>8}"
    )
    for row in rows:
        print(
            f"{row['case']:<26} {row['grep_ms']:>6.1f}ms {row['rg_by_hand_ms']:>6.1f}ms "
            f"{row['ratio']:>5.2f}x {row['rg_run_ms']:>6.1f}ms {row['blocks_ms']:>6.1f}ms "
            f"{row['rest_ms']:>6.1f}ms {row['proof_ms']:>6.1f}ms"
        )
    print("* after the answer, not in grep's time")
    print(
        f"\nrg --version: warm launcher {launch['warm_launcher_ms']:.1f} ms, unconfined "
        f"{launch['unconfined_ms']:.1f} ms (medians)"
    )
    load = {"before": load_before, "after": os.getloadavg()}
    print(f"load average (1, 5, 15 min): before {load_before}, after {load['after']}")
    write_json(
        HERE / "results" / "grep-phases.json",
        {"machine": machine(), "load": load, "runs": args.runs, "rows": rows, "launch": launch},
    )


def _launch_ms(runs: int) -> dict[str, float]:
    """`rg --version` through rg.run, confined (the warm launcher) and not, in turn."""
    times: dict[str, list[float]] = {"warm_launcher_ms": [], "unconfined_ms": []}
    for _ in range(runs + 1):
        for key, confined in (("warm_launcher_ms", True), ("unconfined_ms", False)):
            start = time.perf_counter()
            rg.run(str(ROOT), ["--version"], max_lines=10, confined=confined)
            times[key].append(time.perf_counter() - start)
    return {key: _ms(values[1:]) for key, values in times.items()}


def _ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 2)


if __name__ == "__main__":
    main()
