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
warm-up run (the page cache is warm for both), readkeeper's and ripgrep's runs taken in
turn (the machine is shared: load shifts between rows, not within one). grep's rows
run in one session, so after the warm-up a search's lines are proved by the stamps of
files the session already holds (search/seen.py); the row "a new session each" proves
them by reading the files, as a session's first search of them does.

glob is measured five ways: with no watcher (the CLI; ripgrep sorts by time itself),
the first call of a core whose watcher hears the tree, cold (answered as with no
watcher; search/deferred.py then lists the tree, stats every file and keeps the order
after the answer: "cold, then listing kept" times both) and after the server was idle
(search/ahead.py built the root's listing between calls; the build's own time is a row
of its own), its later calls (search/kept.py keeps the
listing and its order: no ripgrep runs), and a later call after one file was written
(its time looked up, the file moved to its place in the order). A reference row times
`rg --files --sortr=modified` against `rg --files`, and two floor rows what newest
first over every file costs at least: one Python `os.lstat` per listed path (the paths
already held), and GNU `find -printf` of every file's time (in C, no ignore rules).

The launcher rows time one ripgrep run (`rg --version`) started unconfined, through a
fresh launcher interpreter per call (the old way), and through the warm launcher
(server/files/zygote.py): p50 and p95 of `--launches` calls, in turn, and the overhead
of each over the unconfined start.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import machine, percentile, write_json
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.search import rg
from readkeeper.search.ahead import ListingAhead
from readkeeper.search.mtimes import FileTimes

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


def medians_s(
    ours: Callable[[], Any],
    theirs: Callable[[], Any],
    runs: int,
    settle: Callable[[], Any] = lambda: None,
) -> tuple[float, float]:
    """The median seconds of `ours` and of `theirs`, run in turn after one warm-up each.
    `settle`, untimed after each run of `ours`: waits for what a call leaves for after
    its answer (a search's proof, state/later.py), so that it never runs beside ripgrep
    by hand on the shared cores."""
    ours()
    settle()
    theirs()
    mine, base = [], []
    for _ in range(runs):
        for run, samples in ((ours, mine), (theirs, base)):
            start = time.perf_counter()
            run()
            samples.append(time.perf_counter() - start)
            settle()
    return statistics.median(mine), statistics.median(base)


def watching(root: Path, **settings: Any) -> Readkeeper:
    """A core whose watcher hears `root` (set up, every folder watched)."""
    core = Readkeeper(roots=[str(root)], client_settings=settings or None)
    core.tokens.warm_up()
    core.start_watching()
    ends = time.monotonic() + 120
    while core.watcher_status()["state"] != "watching":
        if time.monotonic() > ends:
            raise SystemExit(f"the watcher of {root} did not set up: {core.watcher_status()}")
        time.sleep(0.05)
    return core


def shell_rg(root: Path, *args: str) -> Callable[[], Any]:
    """ripgrep as a shell runs it in `root`. Its stdin is /dev/null, as a terminal's
    would be for this purpose: given no path and a pipe or file as stdin (the bench run
    as `python - <<EOF`, or under a harness), rg searches stdin, not the tree."""
    command = [rg.binary(), "--no-config", *args]
    return lambda: subprocess.run(
        command, cwd=root, stdin=subprocess.DEVNULL, capture_output=True, check=False
    )


def rows_for(
    name: str,
    root: Path,
    runs: int,
    generated_root: Path | None = None,
    tools: frozenset[str] | None = None,
) -> list[dict[str, Any]]:
    """The rows of one tree; `tools`: only the rows of these tools (all when None)."""
    core = Readkeeper(roots=[str(root)])
    core.tokens.warm_up()
    wanted = tools or frozenset({"grep", "glob", "ref", "list", "floor", "miss"})
    cached = None
    first_rows: list[dict[str, Any]] = []
    if "glob" in wanted:  # the watcher's set-up takes seconds
        cached = watching(root, read_ahead=False)  # nothing built ahead: the first call is cold
        first_rows = first_glob_rows(name, root, cached, runs)
    sessions = (f"bench-{n}" for n in itertools.count())
    cases: list[tuple[str, str, Callable[[], Any], Callable[[], Any]]] = [
        (
            "grep",
            "rare symbol",
            lambda: calls.call(core, "grep", {"pattern": "RARE_SYMBOL|def main\\("}),
            shell_rg(root, "-n", "RARE_SYMBOL|def main\\("),
        ),
        (
            # Each call a session of its own: its lines are proved by reading the files,
            # never by the stamp of what the session already holds (search/seen.py).
            "grep",
            "rare, a new session each",
            lambda: calls.call(
                core, "grep", {"pattern": "RARE_SYMBOL|def main\\(", "session": next(sessions)}
            ),
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
            "**/*.py no watcher",
            lambda: calls.call(core, "glob", {"pattern": "**/*.py"}),
            shell_rg(root, "--files", "-g", "*.py"),
        ),
        (
            "glob",
            "**/*.py times kept",
            lambda: calls.call(cached, "glob", {"pattern": "**/*.py"}),
            shell_rg(root, "--files", "-g", "*.py"),
        ),
        (
            "glob",
            "**/*.py after a write",
            lambda: (_write_one(root), calls.call(cached, "glob", {"pattern": "**/*.py"})),
            shell_rg(root, "--files", "-g", "*.py"),
        ),
        (
            "glob",
            "*/mod00*.py times kept",
            lambda: calls.call(cached, "glob", {"pattern": "*/mod00*.py"}),
            shell_rg(root, "--files", "-g", "*/mod00*.py"),
        ),
        (
            "ref",
            "rg --sortr=modified",
            shell_rg(root, "--files", "--sortr=modified", "-g", "*.py"),
            shell_rg(root, "--files", "-g", "*.py"),
        ),
        (
            "list",
            "depth 2",
            lambda: calls.call(core, "list", {"path": ".", "depth": 2}),
            shell_rg(root, "--files", "--max-depth", "2"),
        ),
        (
            "list",
            "depth 10",
            lambda: calls.call(core, "list", {"path": ".", "depth": 10}),
            shell_rg(root, "--files"),
        ),
    ]
    if "miss" in wanted:  # a read of a name not there: its did-you-mean guesses
        cases.append(("miss", "read of a name not there", _miss(core), shell_rg(root, "--files")))
    rows = first_rows
    if "floor" in wanted:
        rows += floor_rows(name, root, runs, with_find=root == generated_root)
    if root != generated_root:  # a file of the generated tree only is written
        cases = [c for c in cases if "write" not in c[1]]
    for tool, case, ours, theirs in cases:
        if tool in wanted:
            mine, base = medians_s(ours, theirs, runs, core.read_states.later.settle)
            rows.append(_row(name, tool, case, mine, base))
    if cached is not None:
        cached.close()
    core.close()
    return rows


def _miss(core: Readkeeper) -> Callable[[], Any]:
    """A read of a file that is not there, refused with its guesses (files/guesses.py)."""

    def read() -> None:
        try:
            calls.call(core, "read", {"file_path": "pkg0500/nothere.py"})
        except ReadkeeperError as exc:
            if exc.kind != "not_found":
                raise
        else:
            raise AssertionError("read a file that is not there")

    return read


def first_glob_rows(name: str, root: Path, core: Readkeeper, runs: int) -> list[dict[str, Any]]:
    """The first glob of a server whose watcher hears the tree, cold (nothing kept: one
    ripgrep run, every file stat-ed, the order made) and after the server was idle
    (search/ahead.py built the root's listing between calls: no ripgrep run, no stat),
    each against `rg --files` run then. A fresh `FileTimes` per run stands for a fresh
    server (the same watcher: its setup takes seconds); the idle build is run here,
    as the worker runs it, and timed apart (its cost is paid while the agent thinks)."""
    pattern = {"pattern": "**/*.py"}
    theirs = shell_rg(root, "--files", "-g", "*.py")
    cold, kept, idle, base, build = [], [], [], [], []
    for _ in range(runs + 1):  # the first round warms up
        core.file_times = FileTimes(lambda: core.watching.watcher)
        start = time.perf_counter()
        calls.call(core, "glob", pattern)
        cold.append(time.perf_counter() - start)
        core.file_times.builds.wait()  # the listing built after the answer (deferred.py)
        kept.append(time.perf_counter() - start)
        core.file_times = FileTimes(lambda: core.watching.watcher)
        start = time.perf_counter()
        ListingAhead(core.file_times, lambda: core.workspace)(lambda: False)
        build.append(time.perf_counter() - start)
        if rg.landlock_abi() > 0 and not core.file_times.ready(str(root)):
            raise SystemExit(f"the listing of {root} was not built ahead")
        start = time.perf_counter()
        calls.call(core, "glob", pattern)
        idle.append(time.perf_counter() - start)
        start = time.perf_counter()
        theirs()
        base.append(time.perf_counter() - start)
    base_s = statistics.median(base[1:])
    built = _row(name, "glob", "idle build (in the back)", statistics.median(build[1:]), base_s)
    built["target"], built["meets"] = None, True  # paid between calls, not by one
    after = _row(name, "glob", "cold, then listing kept", statistics.median(kept[1:]), base_s)
    after["target"], after["meets"] = None, True  # the build runs after the answer
    return [
        _row(name, "glob", "**/*.py first call, cold", statistics.median(cold[1:]), base_s),
        after,
        _row(name, "glob", "**/*.py first after idle", statistics.median(idle[1:]), base_s),
        built,
    ]


def floor_rows(name: str, root: Path, runs: int, with_find: bool) -> list[dict[str, Any]]:
    """What newest first over every file costs at least, against `rg --files`: one
    Python stat per listed file (the paths already held: no listing counted), and GNU
    find printing every file's time (in C, but no ignore rules: only `with_find`, for
    the generated tree, where it walks no ignored folder)."""
    listed = shell_rg(root, "--files", "--hidden", "--null")().stdout.split(b"\0")
    paths = [os.path.join(os.fsencode(root), p) for p in listed if p]
    theirs = shell_rg(root, "--files")

    def stat_all() -> None:
        for path in paths:
            os.lstat(path)

    def find() -> None:
        subprocess.run(
            ["find", ".", "-type", "f", "-printf", "%T@ %p\\0"],
            cwd=root,
            capture_output=True,
            check=False,
        )

    rows = []
    cases = [("stat every listed file, Python", stat_all), ("find -printf", find)]
    for case, ours in cases[: 2 if with_find else 1]:
        row = _row(name, "floor", case, *medians_s(ours, theirs, runs))
        row["target"], row["meets"] = None, True  # a floor, not readkeeper
        rows.append(row)
    return rows


def _write_one(root: Path) -> None:
    """Write a file of the tree again, as it was (its time changes, its text not)."""
    path = next(p for p in sorted(root.iterdir()) if p.is_dir() and p.name != ".git")
    target = next(p for p in sorted(path.iterdir()) if p.is_file())
    target.write_bytes(target.read_bytes())


def _row(tree: str, tool: str, case: str, mine: float, base: float) -> dict[str, Any]:
    ratio = mine / base if base else float("inf")
    target = TARGETS.get(tool)
    return {
        "tree": tree,
        "tool": tool,
        "case": case,
        "readkeeper_ms": round(mine * 1000, 1),
        "rg_ms": round(base * 1000, 1),
        "ratio": round(ratio, 2),
        "target": target,
        "meets": target is None or ratio <= target,
    }


def launcher_rows(root: Path, launches: int) -> list[dict[str, Any]]:
    """p50/p95 of one `rg --version` run: unconfined, per-call launcher, warm launcher."""
    modes = {
        "unconfined": (False, True),
        "per-call launcher": (True, False),
        "warm launcher": (True, True),
    }
    samples: dict[str, list[float]] = {mode: [] for mode in modes}

    def once(mode: str) -> float:
        confined, warm = modes[mode]
        rg.WARM_LAUNCHER = warm
        start = time.perf_counter()
        ran = rg.run(str(root), ["--version"], max_lines=10, confined=confined)
        elapsed = (time.perf_counter() - start) * 1000
        assert ran.returncode == 0, ran.error
        return elapsed

    for mode in modes:
        once(mode)  # the warm launcher starts here
    for _ in range(launches):
        for mode in modes:
            samples[mode].append(once(mode))
    rg.WARM_LAUNCHER = True
    base = statistics.median(samples["unconfined"])
    return [
        {
            "mode": mode,
            "p50_ms": round(statistics.median(ms), 2),
            "p95_ms": round(percentile(ms, 95), 2),
            "overhead_p50_ms": round(statistics.median(ms) - base, 2),
            "n": len(ms),
        }
        for mode, ms in samples.items()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--launches", type=int, default=40)
    parser.add_argument(
        "--trees", choices=["both", "generated", "repository"], default="both", help="which trees"
    )
    parser.add_argument(
        "--tools",
        default="",
        help="only these rows, comma-separated: grep,glob,ref,list,floor,miss",
    )
    # The cost of confining ripgrep with Landlock: compare a run with this flag against
    # one without (the launcher rows measure the start alone).
    parser.add_argument("--no-landlock", action="store_true", help="run rg unconfined")
    args = parser.parse_args()
    load_before = os.getloadavg()
    tools = frozenset(args.tools.split(",")) if args.tools else None
    some = tools is not None or args.trees != "both"
    launchers = [] if rg.landlock_abi() < 1 or some else launcher_rows(HERE.parent, args.launches)
    if args.no_landlock:
        rg.landlock_abi = lambda: 0  # type: ignore[method-assign]
    rows = []
    if args.trees != "repository":
        tree = generated(args.files)
        rows += rows_for(f"generated {args.files:,} files", tree, args.runs, tree, tools)
    if args.trees != "generated":
        rows += rows_for("this repository", HERE.parent, args.runs, tools=tools)
    header = f"{'tree':<26} {'tool':<5} {'case':<32} {'readkeeper':>11} {'rg':>9} {'ratio':>6}"
    print(header)
    for row in rows:
        print(
            f"{row['tree']:<26} {row['tool']:<5} {row['case']:<32} "
            f"{row['readkeeper_ms']:>9.1f}ms {row['rg_ms']:>7.1f}ms {row['ratio']:>5.2f}x"
            f"{'' if row['meets'] else '  (over ' + str(row['target']) + 'x)'}"
        )
    print(f"\n{'rg --version started':<22} {'p50':>8} {'p95':>8} {'overhead p50':>13}")
    for row in launchers:
        print(
            f"{row['mode']:<22} {row['p50_ms']:>6.1f}ms {row['p95_ms']:>6.1f}ms "
            f"{row['overhead_p50_ms']:>11.1f}ms"
        )
    load = {"before": load_before, "after": os.getloadavg()}
    print(f"\nload average (1, 5, 15 min): before {load_before}, after {load['after']}")
    # A run of some rows only never replaces the whole table's figures.
    name = "search-no-landlock" if args.no_landlock else "search"
    write_json(
        HERE / "results" / f"{name}{'-some' if some else ''}.json",
        {
            "machine": machine(),
            "load": load,
            "runs": args.runs,
            "trees": args.trees,
            "tools": sorted(tools) if tools else "all",
            "landlock": not args.no_landlock,
            "rows": rows,
            "launcher": launchers,
        },
    )


if __name__ == "__main__":
    main()
