"""Benchmark what grep's file list costs read from ripgrep's per-file counts
(`--count --max-count=1 --with-filename --null`, search/grep.py: flushed file by file,
so a run killed at its deadline keeps the names it found) beside the block-buffered
`--files-with-matches --null` it replaced, on one generated tree, as the installed
`rg` runs them (unconfined: the flags' own cost).

Run it as `.venv/bin/python bench/bench_grep_files.py [--files N] [--runs N]`. Runs
interleave (A, B, A, B...); prints medians and `uptime`; writes
bench/results/grep_files.json. Nothing is asserted: timings depend on the load.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from common import machine, scratch, write_json
from readkeeper.search import rg

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "grep_files.json"
WAYS = {
    "files-with-matches (before)": ["--files-with-matches", "--null"],
    "count, max-count 1 (now)": ["--count", "--max-count=1", "--with-filename", "--null"],
}


def make_tree(root: Path, files: int) -> None:
    for index in range(files):
        folder = root / f"d{index // 100:04d}"
        folder.mkdir(exist_ok=True)
        lines = "".join(f"line {n} of some text\n" for n in range(50))
        needle = "needle\n" if index % 2 else ""
        (folder / f"m{index}.py").write_text(lines + needle + lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    times: dict[str, list[float]] = {way: [] for way in WAYS}
    found: dict[str, int] = {}
    with scratch("grep_files") as (root, _):
        make_tree(root, args.files)
        for _ in range(args.runs):
            for way, flags in WAYS.items():
                command = [rg.binary(), "--no-config", *flags, "--", "needle", "."]
                start = time.perf_counter()
                done = subprocess.run(
                    command, cwd=root, capture_output=True, stdin=subprocess.DEVNULL, check=True
                )
                times[way].append(time.perf_counter() - start)
                found[way] = done.stdout.count(b"\0")
    rows: dict[str, Any] = {}
    print(f"{'way':32} {'median s':>9} {'min s':>7} {'files':>7}")
    for way, samples in times.items():
        rows[way] = {"median_s": statistics.median(samples), "min_s": min(samples)}
        rows[way]["files"] = found[way]
        print(f"{way:32} {rows[way]['median_s']:9.3f} {rows[way]['min_s']:7.3f} {found[way]:7}")
    before, now = (rows[way]["median_s"] for way in WAYS)
    print(f"ratio now/before (medians): {now / before:.2f}")
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    write_json(
        RESULTS,
        {"machine": machine(), "files": args.files, "runs": args.runs, "ways": rows},
    )


if __name__ == "__main__":
    main()
