"""Benchmark the proof that makes a search's lines count as seen (search/seen.py).

Run it as `.venv/bin/python bench/bench_seen.py` (`--runs` for more samples). It prints
a table and writes the figures to `bench/results/seen.json`; nothing is asserted.

The lines two searches of this repository show (a rare pattern: a line or two in each
of some forty files; a common word: a hundred lines of a few files) are recorded again
and again, in-process: in a new session each time (every file opened, read, decoded
and hashed) and in the same session (the files' stamps, taken by name in their
folders, still prove the text kept, so they are checked, never opened or read). Each
figure is the median of `--runs` runs, the two ways taken in turn (the machine is
shared: load shifts between rows, not within one). Callgrind counts instructions in
user space only: it shows the Python's cost, not the system calls a cut may remove.
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
from readkeeper.search import grep as grep_module

HERE = Path(__file__).resolve().parent
PATTERNS = {"rare": "RARE_SYMBOL|def main\\(", "common word": "return"}


def shown_by(core: Readkeeper, pattern: str) -> dict[str, dict[int, str]]:
    """The lines a search shows, as grep hands them to `record_shown`."""
    caught: dict[str, dict[int, str]] = {}
    real = grep_module.record_shown

    def catch(services: Any, session: str, shown: dict[str, dict[int, str]]) -> list[str]:
        caught.update(shown)
        return real(services, session, shown)

    grep_module.record_shown = catch  # type: ignore[assignment]
    try:
        calls.call(core, "grep", {"pattern": pattern})
    finally:
        grep_module.record_shown = real
    return caught


def rows(runs: int) -> list[dict[str, Any]]:
    core = Readkeeper(roots=[str(HERE.parent)])
    core.tokens.warm_up()
    found = []
    for case, pattern in PATTERNS.items():
        shown = shown_by(core, pattern)
        record = grep_module.record_shown
        record(core, "same", shown)  # the session now holds the files
        fresh: list[float] = []
        same: list[float] = []
        for n in range(runs):
            for samples, session in ((fresh, f"new-{case}-{n}"), (same, "same")):
                start = time.perf_counter()
                record(core, session, shown)
                samples.append(time.perf_counter() - start)
        found.append(
            {
                "case": case,
                "files": len(shown),
                "lines": sum(map(len, shown.values())),
                "new_session_ms": round(statistics.median(fresh) * 1000, 2),
                "same_session_ms": round(statistics.median(same) * 1000, 2),
            }
        )
    core.close()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    load_before = os.getloadavg()
    found = rows(args.runs)
    print(f"{'search':<12} {'files':>5} {'lines':>5} {'new session':>12} {'same session':>13}")
    for row in found:
        print(
            f"{row['case']:<12} {row['files']:>5} {row['lines']:>5} "
            f"{row['new_session_ms']:>10.2f}ms {row['same_session_ms']:>11.2f}ms"
        )
    load = {"before": load_before, "after": os.getloadavg()}
    print(f"\nload average (1, 5, 15 min): before {load_before}, after {load['after']}")
    write_json(
        HERE / "results" / "seen.json",
        {"machine": machine(), "load": load, "runs": args.runs, "rows": found},
    )


if __name__ == "__main__":
    main()
