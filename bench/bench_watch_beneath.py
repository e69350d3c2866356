"""Benchmark the inotify reader's setup walk, now that every folder is opened beneath its
root and watched through /proc/self/fd (watch/beneath_watch.py).

Run it as `.venv/bin/python bench/bench_watch_beneath.py`. A generated tree of
`--folders` folders (in folders of 100) is watched from scratch `--runs` times by a
fresh reader each; printed are the median time of a whole setup and per folder, with
openat2 and with the portable walk (one O_NOFOLLOW openat per component, where openat2
is missing). Writes bench/results/watch_beneath.json. Nothing is asserted: timings
depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from common import machine, scratch, write_json
from readkeeper.files.beneath import force_portable_walk
from readkeeper.watch.beneath_watch import folder_entries
from readkeeper.watch.inotify import Inotify

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "watch_beneath.json"


class Hooks:
    """The watcher's side, keeping every folder (no ignore rules: the walk alone)."""

    def subfolders(self, folder: bytes, fd: int, files: list[bytes] | None = None) -> list[bytes]:
        return folder_entries(fd, folder, files)

    def skips(self, folder: bytes) -> bool:
        return False

    def limit_reached(self, error: OSError) -> None:
        raise SystemExit(f"the kernel refused a watch: {error}; lower --folders")

    def overflowed(self) -> None:
        pass

    def root_gone(self, root: str) -> None:
        pass

    def note(self, *args: Any, **kwargs: Any) -> None:
        pass


def generate(root: Path, folders: int) -> None:
    for i in range(folders):
        (root / f"g{i // 100}" / f"f{i % 100}").mkdir(parents=True, exist_ok=True)


def setups(root: Path, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        reader = Inotify(Hooks())
        started = time.perf_counter()
        reader.watch(str(root))
        times.append((time.perf_counter() - started) * 1000)
        reader.stop()
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--folders", type=int, default=4_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    if not sys.platform.startswith("linux"):
        print("inotify is Linux's: nothing to measure here")
        return 0
    rows = []
    with scratch("rk-bench-beneath-") as (workdir, _log):
        root = workdir / "ws"
        generate(root, args.folders)
        watched = args.folders + args.folders // 100 + 1
        for label, portable in (("openat2", False), ("portable walk", True)):
            force_portable_walk(portable)
            try:
                times = setups(root, args.runs)
            finally:
                force_portable_walk(False)
            median = statistics.median(times)
            rows.append(
                {
                    "opens": label,
                    "folders": watched,
                    "setup_ms_median": round(median, 1),
                    "us_per_folder": round(median * 1000 / watched, 1),
                }
            )
    print(f"{'opens':<14} {'folders':>8} {'setup ms':>9} {'us/folder':>10}")
    for row in rows:
        print(
            f"{row['opens']:<14} {row['folders']:>8} {row['setup_ms_median']:>9} "
            f"{row['us_per_folder']:>10}"
        )
    write_json(args.output, {"machine": machine(), "runs": args.runs, "rows": rows})
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
