"""Benchmark calls on a path thousands of folders deep (outside rounds 44-47): a hostile
repository's chain of folders, each call naming its deepest folder or a file in it; the
watch of the chain set up; then calls naming a path in each of `--side` such chains.

Run it as `.venv/bin/python bench/bench_deep_paths.py [--depth N] [--rounds R]`. It
prints a table and writes the same figures to `bench/results/deep_paths.json`. Each row
is one call, in process on a new core each round (its caches cold), its median wall time
over the rounds; `rg` is ripgrep itself listing and searching the same folder (its own
walk up to the root is a floor no call beneath it can go under). The default depth,
2,030, is about the deepest a path can be named by (4,096 bytes: `x/` a level).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from common import machine, scratch, write_json

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from deep_chain import make_chain, remove_chain

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError

RESULTS = Path(__file__).resolve().parent / "results" / "deep_paths.json"


def rows(depth: int) -> list[tuple[str, str, dict[str, Any]]]:
    deep = "x/" * depth
    return [
        ("read a file", "read", {"file_path": deep + "0.txt"}),
        ("read a missing file beneath", "read", {"file_path": deep[:-20] + "y/" * 10 + "0.txt"}),
        ("grep a file", "grep", {"pattern": "alpha", "path": deep + "0.txt"}),
        ("grep the folder", "grep", {"pattern": "alpha", "path": deep}),
        ("glob the folder", "glob", {"pattern": "*.txt", "path": deep}),
        ("list the folder", "list", {"path": deep}),
        ("stat the folder", "stat", {"path": deep}),
        ("attachments, one mention", "attachments", {"mentions": [deep + "0.txt"]}),
        ("forget 100 paths beneath", "forget", {"paths": [f"{deep}m{n}" for n in range(100)]}),
    ]


def timed(root: Path, method: str, params: dict[str, Any], rounds: int) -> tuple[float, str]:
    samples, outcome = [], ""
    for _ in range(rounds):
        core = Readkeeper(roots=[str(root)])
        try:
            started = time.perf_counter()
            try:
                calls.call(core, method, params)
                outcome = "answered"
            except ReadkeeperError as exc:
                outcome = exc.kind
            samples.append(time.perf_counter() - started)
        finally:
            core.close()
    return statistics.median(samples) * 1000, outcome


def watch_setup(root: Path, rounds: int) -> float:
    """The inotify watch of the chain set up: a new core's watcher started, its median
    setup time (the watcher's own `setup_ms`)."""
    samples = []
    for _ in range(rounds):
        core = Readkeeper(roots=[str(root)], client_settings={"watcher": "inotify"})
        try:
            core.start_watching()
            while core.watcher_status()["setup_ms"] is None:
                time.sleep(0.01)
            samples.append(core.watcher_status()["setup_ms"])
        finally:
            core.close()
    return statistics.median(samples)


def memory_files(root: Path, depth: int, keep: bool) -> None:
    """An `AGENTS.md` in every folder of the chain (`keep`), or none (by descriptor:
    the path is too long for one call)."""
    fd = os.open(root, os.O_RDONLY)
    for level in range(depth + 1):
        if keep:
            with open(os.open("AGENTS.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as f:
                f.write("be brief\n")
        else:
            os.unlink("AGENTS.md", dir_fd=fd)
        if level < depth:
            deeper = os.open("x", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = deeper
    os.close(fd)


def ripgrep(root: Path, depth: int, rounds: int) -> dict[str, float]:
    rg = shutil.which("rg", path=str(Path(__file__).resolve().parents[1] / ".venv" / "bin"))
    if rg is None:
        return {}
    figures = {}
    for name, args in (("rg --files", ["--files"]), ("rg alpha", ["alpha"])):
        samples = []
        for _ in range(rounds):
            started = time.perf_counter()
            subprocess.run([rg, *args, "x/" * depth], cwd=root, capture_output=True, check=False)
            samples.append(time.perf_counter() - started)
        figures[name] = statistics.median(samples) * 1000
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=2030)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--side", type=int, default=20, help="chains side by side (last rows)")
    args = parser.parse_args()
    with scratch("rk-deep-") as (workdir, _log):
        root = workdir / "ws"
        root.mkdir()
        make_chain(root, args.depth, "x", "0.txt", "alpha\n")
        try:
            report = run(root, args.depth, args.rounds)
        finally:
            remove_chain(root, "x", "0.txt")
        side = workdir / "side"
        side.mkdir()
        try:
            for n in range(args.side):
                (side / f"c{n}").mkdir()
                make_chain(side / f"c{n}", args.depth, "x", "0.txt", "alpha\n")
            side_by_side(side, args.depth, args.side, args.rounds, report)
        finally:
            for n in range(args.side):
                if (side / f"c{n}").exists():
                    remove_chain(side / f"c{n}", "x", "0.txt")
    write_json(RESULTS, report)


def side_by_side(root: Path, depth: int, chains: int, rounds: int, report: dict[str, Any]) -> None:
    """Calls naming a path in each of `chains` chains side by side (they share no folder)."""
    paths = [f"c{n}/" + "x/" * depth + "0.txt" for n in range(chains)]
    for label, method, params in (
        (f"forget, a path in each of {chains}", "forget", {"paths": paths}),
        (f"attachments, a mention in {chains}", "attachments", {"mentions": paths}),
    ):
        shown(report, label, *timed(root, method, params, rounds))


def shown(report: dict[str, Any], label: str, ms: float, outcome: str) -> None:
    """A row printed and kept in the report."""
    report["rows"][label] = {"ms": round(ms, 1), "outcome": outcome}
    print(f"{label:32} {ms:9.1f}  {outcome}")


def run(root: Path, depth: int, rounds: int) -> dict[str, Any]:
    """Each row's call timed, and ripgrep's own, printed as they come."""
    report: dict[str, Any] = {
        "machine": machine(),
        "load": os.getloadavg()[0],
        "depth": depth,
        "rows": {},
    }
    print(f"depth {depth}, median of {rounds} rounds, load {report['load']:.1f}")
    print(f"{'call':32} {'ms':>9}  outcome")
    for label, method, params in rows(depth):
        shown(report, label, *timed(root, method, params, rounds))
    shown(report, "watch set up", watch_setup(root, rounds), "watching")
    memory_files(root, depth, keep=True)
    try:
        mention = {"mentions": ["x/" * depth + "0.txt"]}
        label = "attachments, AGENTS.md in each"
        shown(report, label, *timed(root, "attachments", mention, rounds))
    finally:
        memory_files(root, depth, keep=False)
    for label, ms in ripgrep(root, depth, rounds).items():
        shown(report, label, ms, "ripgrep itself")
    return report


if __name__ == "__main__":
    main()
