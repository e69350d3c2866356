"""Benchmark the git status attachment (issue 28): libgit2 in a warm worker (now)
against the hardened `git status` it replaced (before).

Run it as `.venv/bin/python bench/bench_gitstatus.py` (`--files` to run smaller,
`--runs` for more samples). It prints a table and writes the figures to
`bench/results/gitstatus.json`; nothing is asserted, since timings depend on the machine
and its load.

The repository, 100,000 files in 1,000 folders by default, is generated and committed
once into `/tmp/readkeeper-bench-gitstatus-<files>/big` and reused by later runs; each
run then modifies 3 files, deletes 1 and adds 2 untracked ones. A second repository of
10 files shows the fixed cost of one call. "before" is `attachments/gitstatus.py` as of
`--before` (a commit of this repository: the last one that ran git), loaded from git's
object store beside the current module, so both run in this process on the same
`Workspace`. Each figure is the median of `--runs` calls, after one warm-up call (the
worker's start, importing pygit2, is reported on its own as "now, first call").
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from common import machine, write_json
from readkeeper.attachments import gitstatus, gitstatus_workers
from readkeeper.files.paths import Workspace

HERE = Path(__file__).resolve().parent
BEFORE = "bfbc7b0"  # the git-running gitstatus.py, before issue 28


def git(root: Path, *args: str) -> None:
    identity = ("-c", "user.name=bench", "-c", "user.email=bench@example.invalid")
    subprocess.run(["git", *identity, "-C", str(root), *args], check=True, capture_output=True)


def repository(root: Path, files: int) -> Path:
    """A committed repository of `files` small files, built once."""
    if (root / ".git" / "index").exists():
        git(root, "checkout", "-q", "--", ".")  # undo the last run's changes
        git(root, "clean", "-qfd")
        return root
    root.mkdir(parents=True, exist_ok=True)
    per_folder = 100 if files >= 100 else files
    for n in range(files):
        folder = root / f"d{n // per_folder:04d}"
        folder.mkdir(exist_ok=True)
        (folder / f"f{n % per_folder:03d}.txt").write_text(f"file {n}\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "generated")
    return root


def touch_up(root: Path) -> None:
    """3 modified, 1 deleted, 2 untracked (one of them in a new folder)."""
    for name in ("d0000/f000.txt", "d0000/f001.txt", "d0000/f002.txt"):
        with (root / name).open("a") as f:
            f.write("changed\n")
    (root / "d0000" / "f003.txt").unlink()
    (root / "new.txt").write_text("new\n")
    (root / "new folder").mkdir(exist_ok=True)
    (root / "new folder" / "x.txt").write_text("x\n")


def module_before(revision: str) -> ModuleType:
    source = subprocess.run(
        ["git", "-C", str(HERE), "show", f"{revision}:attachments/gitstatus.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    spec = importlib.util.spec_from_loader("gitstatus_before", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    exec(compile(source, f"{revision}:attachments/gitstatus.py", "exec"), module.__dict__)
    return module


def timed(
    status: Callable[[Workspace, str, float], str], workspace: Workspace, root: Path, runs: int
) -> tuple[list[float], str]:
    samples, out = [], ""
    for _ in range(runs):
        start = time.perf_counter()
        out = status(workspace, str(root), 120.0)
        samples.append((time.perf_counter() - start) * 1000)
    return samples, out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--before", default=BEFORE)
    args = parser.parse_args()
    before = module_before(args.before)
    base = Path(f"/tmp/readkeeper-bench-gitstatus-{args.files}")
    rows: dict[str, dict[str, float | int | bool]] = {}
    for label, size in (("small (10 files)", 10), (f"big ({args.files:,} files)", args.files)):
        root = repository(base / ("small" if size == 10 else "big"), size)
        touch_up(root)
        workspace = Workspace()
        workspace.set_roots([str(root)])
        gitstatus_workers.WORKERS.stop()  # a cold start for each repository
        start = time.perf_counter()
        now_out = gitstatus.status(workspace, str(root), 120.0)
        first_ms = (time.perf_counter() - start) * 1000
        now_ms, now_out = timed(gitstatus.status, workspace, root, args.runs)
        before.status(workspace, str(root), 120.0)  # warm the page cache alike
        then_ms, then_out = timed(before.status, workspace, root, args.runs)
        rows[label] = {
            "before_p50_ms": round(statistics.median(then_ms), 1),
            "now_p50_ms": round(statistics.median(now_ms), 1),
            "now_first_call_ms": round(first_ms, 1),
            "ratio_now_to_before": round(statistics.median(now_ms) / statistics.median(then_ms), 2),
            "same_output": now_out == then_out,
            "runs": args.runs,
        }
    gitstatus_workers.WORKERS.stop()
    print(f"{'repository':<24} {'before p50':>11} {'now p50':>9} {'ratio':>6} {'now 1st':>9} same")
    for label, row in rows.items():
        print(
            f"{label:<24} {row['before_p50_ms']:>8.1f} ms {row['now_p50_ms']:>6.1f} ms "
            f"{row['ratio_now_to_before']:>6.2f} {row['now_first_call_ms']:>6.1f} ms "
            f"{row['same_output']}"
        )
    write_json(
        HERE / "results" / "gitstatus.json",
        {"machine": machine(), "before": args.before, "rows": rows},
    )


if __name__ == "__main__":
    sys.exit(main())
