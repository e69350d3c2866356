"""Benchmark grep, glob and list (issue 31) against ripgrep run by hand on the same tree.

Run it as `.venv/bin/python bench/bench_search.py` (`--files` for a smaller tree,
`--runs` for more samples). It prints a table and writes the figures to
`bench/results/search.json`; nothing is asserted, since timings depend on the machine.

Two trees: a generated one (100,000 files of 12 lines in 1,000 folders, built once into
`/tmp/readkeeper-bench-search-<files>`, a git repository with a .gitignore), and this
repository. Each row is readkeeper's call in-process (`calls.call` on a core, what a
front end does after parsing) against the same ripgrep binary with the same pattern,
run as a shell would (`rg -n PATTERN`, `rg --files`): the goal is within 1.3x for
search and 1.5x for glob and list. Each figure is the median of `--runs` runs after one
warm-up run (the page cache is warm for both).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import machine, write_json
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.search import rg

HERE = Path(__file__).resolve().parent
TARGETS = {"grep": 1.3, "glob": 1.5, "list": 1.5}


def generated(files: int) -> Path:
    """A git repository of `files` small files, built once."""
    root = Path(f"/tmp/readkeeper-bench-search-{files}")
    if (root / ".done").exists():
        return root
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    per_folder = 100
    for n in range(files):
        folder = root / f"pkg{n // per_folder:04d}"
        folder.mkdir(exist_ok=True)
        body = "".join(f"def handler_{n}_{i}(event):\n    return event\n" for i in range(6))
        if n % 1000 == 7:
            body += "RARE_SYMBOL = 1\n"
        (folder / f"mod{n % per_folder:03d}.py").write_text(body)
    (root / ".done").write_text("")
    return root


def median_s(run: Callable[[], Any], runs: int) -> float:
    run()  # warm-up
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def shell_rg(root: Path, *args: str) -> Callable[[], Any]:
    command = [rg.binary(), "--no-config", *args]
    return lambda: subprocess.run(command, cwd=root, capture_output=True, check=False)


def rows_for(name: str, root: Path, runs: int) -> list[dict[str, Any]]:
    core = Readkeeper(roots=[str(root)])
    core.tokens.warm_up()
    cases: list[tuple[str, str, Callable[[], Any], Callable[[], Any]]] = [
        (
            "grep",
            "rare symbol",
            lambda: calls.call(core, "grep", {"pattern": "RARE_SYMBOL|def main\\("}),
            shell_rg(root, "-n", "RARE_SYMBOL|def main\\("),
        ),
        (
            "grep",
            "common word (100 shown)",
            lambda: calls.call(core, "grep", {"pattern": "return"}),
            shell_rg(root, "-n", "return"),
        ),
        (
            "grep",
            "files output",
            lambda: calls.call(core, "grep", {"pattern": "event|self", "output": "files"}),
            shell_rg(root, "-l", "event|self"),
        ),
        (
            "glob",
            "**/*.py",
            lambda: calls.call(core, "glob", {"pattern": "**/*.py"}),
            shell_rg(root, "--files", "-g", "*.py"),
        ),
        (
            "list",
            "depth 2",
            lambda: calls.call(core, "list", {"path": ".", "depth": 2}),
            shell_rg(root, "--files", "--max-depth", "2"),
        ),
    ]
    rows = []
    for tool, case, ours, theirs in cases:
        mine = median_s(ours, runs)
        base = median_s(theirs, runs)
        ratio = mine / base if base else float("inf")
        rows.append(
            {
                "tree": name,
                "tool": tool,
                "case": case,
                "readkeeper_ms": round(mine * 1000, 1),
                "rg_ms": round(base * 1000, 1),
                "ratio": round(ratio, 2),
                "target": TARGETS[tool],
                "meets": ratio <= TARGETS[tool],
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    # The cost of confining ripgrep with Landlock (a launcher per run): compare a run
    # with this flag against one without.
    parser.add_argument("--no-landlock", action="store_true", help="run rg unconfined")
    args = parser.parse_args()
    if args.no_landlock:
        rg.landlock_abi = lambda: 0  # type: ignore[method-assign]
    rows = rows_for(f"generated {args.files:,} files", generated(args.files), args.runs)
    rows += rows_for("this repository", HERE.parent, args.runs)
    header = f"{'tree':<26} {'tool':<5} {'case':<24} {'readkeeper':>11} {'rg':>9} {'ratio':>6}"
    print(header)
    for row in rows:
        print(
            f"{row['tree']:<26} {row['tool']:<5} {row['case']:<24} "
            f"{row['readkeeper_ms']:>9.1f}ms {row['rg_ms']:>7.1f}ms {row['ratio']:>5.2f}x"
            f"{'' if row['meets'] else '  (over ' + str(row['target']) + 'x)'}"
        )
    write_json(
        HERE / "results" / ("search-no-landlock.json" if args.no_landlock else "search.json"),
        {"machine": machine(), "runs": args.runs, "landlock": not args.no_landlock, "rows": rows},
    )


if __name__ == "__main__":
    main()
