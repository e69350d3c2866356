"""bench_search.py's grep rows on this repository, this tree against an earlier commit,
interleaved: issue 31's figures before and after a change, in one run.

Run it as `.venv/bin/python bench/bench_grep_base.py --base main` (`--rounds` for more
samples). The base commit's `server/` and `attachments/` are exported (`git archive`)
into a scratch folder and imported from there as `readkeeper` by a worker process of
their own; a second worker imports this tree's (the installed package). Each worker
keeps one warmed core, as bench_search.py does. A round asks each worker for one call
of a case (the first in turn: no order favoured), then runs ripgrep by hand with the
same pattern (`rg -n`, `rg -l`), for each case in turn, so load shifts hit all three
alike. After each call the worker settles the proof of the lines shown, untimed (it
runs after the answer). Each figure is the median of `--rounds` rounds after one
warm-up round, with its 25th percentile (the machine is shared: the low quartile moves
less with the load) and the median of the calling thread's CPU time. It prints a table
and writes `bench/results/grep-base.json`; nothing is asserted.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from common import machine, percentile, write_json

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RARE = "RARE_SYMBOL|def main\\("
# case -> (grep's params, ripgrep's flags by hand); a new session each takes its own
CASES: dict[str, tuple[dict[str, Any], list[str]]] = {
    "rare symbol": ({"pattern": RARE}, ["-n", RARE]),
    "rare, a new session each": ({"pattern": RARE}, ["-n", RARE]),
    "common word (100 shown)": ({"pattern": "return"}, ["-n", "return"]),
    "files output": ({"pattern": "event|self", "output": "files"}, ["-l", "event|self"]),
}


def worker() -> None:
    """Serve calls named on stdin, one a line; answer each with its wall and CPU time."""
    from readkeeper import calls
    from readkeeper.core import Readkeeper

    core = Readkeeper(roots=[str(ROOT)])
    core.tokens.warm_up()
    sessions = (f"bench-{n}" for n in itertools.count())
    print("ready", flush=True)
    for line in sys.stdin:
        case = line.strip()
        params = dict(CASES[case][0])
        if "new session" in case:
            params["session"] = next(sessions)
        start, start_cpu = time.perf_counter(), time.thread_time()
        calls.call(core, "grep", params)
        took, cpu = time.perf_counter() - start, time.thread_time() - start_cpu
        core.read_states.later.settle()
        print(json.dumps([took, cpu]), flush=True)
    core.close()


def _exported(base: str, folder: Path) -> Path:
    """The base commit's package, importable from the folder returned."""
    archive = subprocess.run(
        ["git", "archive", base, "server", "attachments"], cwd=ROOT, capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    (folder / "server" / "attachments").symlink_to(folder / "attachments")
    importable = folder / "importable"
    importable.mkdir()
    (importable / "readkeeper").symlink_to(folder / "server")
    return importable


def _start(python_path: str | None) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if python_path:
        env["PYTHONPATH"] = python_path
    proc = subprocess.Popen(
        [sys.executable, __file__, "--worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=HERE,
    )
    assert proc.stdout is not None
    if proc.stdout.readline().strip() != "ready":
        raise SystemExit("a worker did not start")
    return proc


def _ask(proc: subprocess.Popen[str], case: str) -> tuple[float, float]:
    stdin, stdout = proc.stdin, proc.stdout
    assert stdin is not None
    assert stdout is not None
    stdin.write(case + "\n")
    stdin.flush()
    took, cpu = json.loads(stdout.readline())
    return float(took), float(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="main", help="the commit to compare with")
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker()
        return
    from readkeeper.search import rg

    load_before = os.getloadavg()
    samples: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="readkeeper-bench-base-") as scratch:
        workers = {"base": _start(str(_exported(args.base, Path(scratch)))), "this": _start(None)}
        try:
            for run in range(args.rounds + 1):
                for case, (_, flags) in CASES.items():
                    names = list(workers) if run % 2 else list(workers)[::-1]
                    for name in names:
                        took, cpu = _ask(workers[name], case)
                        if run:  # the first round warms up
                            samples.setdefault((case, name), []).append(took)
                            samples.setdefault((case, f"{name} cpu"), []).append(cpu)
                    start = time.perf_counter()
                    # stdin /dev/null: with a pipe there, rg would search it, not the tree.
                    subprocess.run(
                        [rg.binary(), "--no-config", *flags],
                        cwd=ROOT,
                        stdin=subprocess.DEVNULL,
                        capture_output=True,
                        check=False,
                    )
                    if run:
                        samples.setdefault((case, "rg"), []).append(time.perf_counter() - start)
        finally:
            for proc in workers.values():
                _close(proc.stdin)
                proc.wait()
    rows = []
    print(f"{'case':<26} {'':<5} {'median':>8} {'p25':>8} {'vs rg':>6} {'cpu':>7}")
    for case in CASES:
        by_hand = statistics.median(samples[(case, "rg")])
        for name in ["base", "this", "rg"]:
            values = samples[(case, name)]
            row = {
                "case": case,
                "variant": "rg by hand" if name == "rg" else name,
                "ms": _ms(statistics.median(values)),
                "p25_ms": _ms(percentile(values, 25)),
                "ratio": round(statistics.median(values) / by_hand, 2),
            }
            if name != "rg":
                row["cpu_ms"] = _ms(statistics.median(samples[(case, f"{name} cpu")]))
            rows.append(row)
            cpu = f"{row['cpu_ms']:>5.2f}ms" if "cpu_ms" in row else ""
            print(
                f"{case:<26} {name:<5} {row['ms']:>6.2f}ms {row['p25_ms']:>6.2f}ms "
                f"{row['ratio']:>5.2f}x {cpu:>7}"
            )
    load = {"before": load_before, "after": os.getloadavg()}
    print(f"base {args.base}; load average (1, 5, 15 min): {load_before} -> {load['after']}")
    write_json(
        HERE / "results" / "grep-base.json",
        {
            "machine": machine(),
            "load": load,
            "base": args.base,
            "rounds": args.rounds,
            "rows": rows,
        },
    )


def _close(stream: IO[str] | None) -> None:
    if stream is not None:
        stream.close()


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


if __name__ == "__main__":
    main()
