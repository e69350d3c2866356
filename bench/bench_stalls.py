"""Benchmark what keeping ripgrep away from FIFO and huge ignore files costs
(search/stalls.py, watch/suspects.py): the watcher's listing of every folder with and
without noting the suspects (one set lookup per entry, one lstat per regular ignore
file: its size), and the look a grep or glob takes before ripgrep runs
(`stalls.avoid`: the folders above, each suspect stat-ed again), beside a grep of the
same tree for scale.

Run it as `.venv/bin/python bench/bench_stalls.py`. A generated tree of `--folders`
folders of 10 files, a regular `.gitignore` in each (`--no-gitignores`: none), with
`--repos` nested repositories and `--fifos` FIFO `.gitignore` files, is listed `--runs`
times each way, interleaved (A, B, A, B...); then a core watches it and `avoid` and a
grep run `--calls` times. Prints medians and `uptime`; writes
bench/results/stalls.json. Nothing is asserted: timings depend on the load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from common import machine, scratch, write_json
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.search import stalls
from readkeeper.watch.beneath_watch import folder_entries
from readkeeper.watch.suspects import Suspects

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "stalls.json"


def make_tree(root: Path, folders: int, repos: int, fifos: int, ignores: bool) -> list[bytes]:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    made = []
    for index in range(folders):
        folder = root / f"d{index // 100:03d}" / f"f{index:05d}"
        folder.mkdir(parents=True)
        for name in range(10):
            (folder / f"m{name}.py").write_text("x = 1\n")
        if ignores:
            (folder / ".gitignore").write_text("*.pyc\n")
        made.append(os.fsencode(folder))
    for index in range(repos):
        subprocess.run(["git", "init", "-q", str(root / f"d000/f{index:05d}")], check=True)
    for index in range(fifos):
        fifo = root / f"d001/f{100 + index:05d}/.gitignore"
        fifo.unlink(missing_ok=True)
        os.mkfifo(fifo)
    return [os.fsencode(root), *{os.path.dirname(f) for f in made}, *made]


def list_all(folders: list[bytes], suspects: Suspects | None) -> float:
    started = time.perf_counter()
    for folder in folders:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            folder_entries(fd, folder, None, suspects)
        finally:
            os.close(fd)
    return time.perf_counter() - started


def median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--folders", type=int, default=5000)
    parser.add_argument("--repos", type=int, default=20)
    parser.add_argument("--fifos", type=int, default=5)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--no-gitignores", dest="gitignores", action="store_false")
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    with scratch("stalls") as (tmp, _log):
        root = (tmp / "tree").resolve()
        root.mkdir()
        folders = make_tree(root, args.folders, args.repos, args.fifos, args.gitignores)
        plain: list[float] = []
        noted: list[float] = []
        for _ in range(args.runs):
            plain.append(list_all(folders, None))
            noted.append(list_all(folders, Suspects()))
        core = Readkeeper(roots=[str(root)])
        core.start_watching(lambda _message: None)
        ends = time.monotonic() + 120
        while core.watcher_status()["state"] != "watching" and time.monotonic() < ends:
            time.sleep(0.05)
        times = core.file_times
        avoided = stalls.avoid(str(root), str(root), times.suspects(str(root)))
        avoid_s: list[float] = []
        grep_s: list[float] = []
        for _ in range(args.calls):
            started = time.perf_counter()
            stalls.avoid(str(root), str(root), times.suspects(str(root)))
            avoid_s.append(time.perf_counter() - started)
        for _ in range(max(5, args.calls // 20)):
            started = time.perf_counter()
            calls.call(core, "grep", {"pattern": "absent_zz", "output": "files"})
            grep_s.append(time.perf_counter() - started)
        core.close()
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    report: dict[str, Any] = {
        "machine": machine(),
        "uptime": uptime,
        "args": vars(args),
        "folders_listed": len(folders),
        "walk_ms_plain": median_ms(plain),
        "walk_ms_noting_suspects": median_ms(noted),
        "walk_ratio": round(statistics.median(noted) / statistics.median(plain), 3),
        "avoid_ms": median_ms(avoid_s),
        "grep_ms": median_ms(grep_s),
        "left_out": avoided.folders,
    }
    rows = [
        ("listing every folder (watcher's walk)", "walk_ms_plain", "walk_ms_noting_suspects"),
    ]
    print(f"{uptime}\n{len(folders)} folders, {args.repos} repositories, {args.fifos} FIFOs")
    for label, a, b in rows:
        print(f"{label:<40} {report[a]:>9.3f} ms -> {report[b]:>9.3f} ms ({report['walk_ratio']}x)")
    print(f"{'look before a run (stalls.avoid)':<40} {report['avoid_ms']:>9.3f} ms")
    print(f"{'grep of the tree, for scale':<40} {report['grep_ms']:>9.3f} ms")
    write_json(RESULTS, report)


if __name__ == "__main__":
    sys.exit(main())
