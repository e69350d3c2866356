"""Benchmark the outline's share of a first read (issue 34), in process, on distinct
real modules (CPython's standard library, 30-250 KB: bench_peer.py's first-read files).

Run it as `.venv/bin/python bench/bench_first_outline.py` (about a minute). It prints
a table and writes the same figures to `bench/results/first_outline.json`. Rows, each
the median over the modules (and `--rounds` passes) of one step's milliseconds:

1. The parse (tree-sitter's `Parser.parse`, the grammar loaded) and the walk that lists
   the symbols (`outline._walk`), apart, on each module's own tree; their sum; and the
   scanner that outlines a Python text without them (`outline_py.scan_counted`, which
   `outline.symbols` tries first), with how many modules it accepted.
2. A whole first read by a new core (`Readkeeper.read`, default parameters: an outline
   for these modules), every module once: as the server does it (the parse), and with
   the scanner first (`outline.SCAN_PYTHON` on).
3. The cold restart: a second new core reading the modules a first core read, its
   outlines and deciding counts in the user's cache (`XDG_CACHE_HOME` of this run's),
   the memory caches dropped; the read, and each part of it: the count that decides an
   outline (`outline_read.whole_tokens`), the outline from the cache
   (`outline_cache.symbols`: the text's digest, the entry, its parse), drawing it
   (`outline.render`), the first lines (`text.view`) and the rest (the view's own count,
   the pipeline). Medians of parts do not add up to the median read: the parts' means
   are in the JSON.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_peer import real_modules
from common import machine, write_json
from readkeeper.core import Readkeeper
from readkeeper.protocol import ReadParams
from readkeeper.read.readers import outline, outline_cache, outline_py, outline_read
from readkeeper.read.readers import text as text_reader
from readkeeper.read.readers.grammars import PYTHON

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "first_outline.json"
PARTS = {
    "decide (whole_tokens)": (outline_read, "whole_tokens"),
    "outline from the cache": (outline_cache, "symbols"),
    "render": (outline, "render"),
    "first lines (text.view)": (text_reader, "view"),
}


def _ms(samples: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(statistics.median(samples), 3),
        "p90_ms": round(statistics.quantiles(samples, n=10)[-1], 3),
        "mean_ms": round(statistics.fmean(samples), 3),
    }


def bench_steps(modules: list[Path], rounds: int) -> dict[str, Any]:
    datas = [module.read_bytes() for module in modules]
    texts = [data.decode("utf-8") for data in datas]
    outline.load(PYTHON)
    parse: list[float] = []
    walk: list[float] = []
    scan: list[float] = []
    accepted = 0
    for _ in range(rounds):
        accepted = 0
        for data, text in zip(datas, texts, strict=True):
            began = time.perf_counter()
            tree = outline._parse(data, PYTHON)
            between = time.perf_counter()
            outline._walk(tree.root_node, PYTHON, data)
            walk.append((time.perf_counter() - between) * 1000)
            parse.append((between - began) * 1000)
            began = time.perf_counter()
            scanned = outline_py.scan_counted(text)
            scan.append((time.perf_counter() - began) * 1000)
            accepted += scanned is not None
    both = [a + b for a, b in zip(parse, walk, strict=True)]
    # Each module's best round of each (the least disturbed by other load on the machine),
    # and the median of their ratios.
    count = len(datas)
    best_both = [min(both[i::count]) for i in range(count)]
    best_scan = [min(scan[i::count]) for i in range(count)]
    ratios = [b / s for b, s in zip(best_both, best_scan, strict=True)]
    return {
        "best of rounds: parse + walk": _ms(best_both),
        "best of rounds: scan": _ms(best_scan),
        "best of rounds: median ratio": round(statistics.median(ratios), 2),
        "parse": _ms(parse),
        "walk": _ms(walk),
        "parse + walk": _ms(both),
        "scan": _ms(scan),
        "scan accepted": f"{accepted}/{len(datas)}",
        "parse + walk / scan, at the median": round(
            statistics.median(both) / statistics.median(scan), 2
        ),
    }


def _core(root: Path) -> Readkeeper:
    core = Readkeeper(roots=[str(root)])
    core.tokens.warm_up()
    warm = root / "warm.txt"
    warm.write_text("x = 1\n" * 300)
    for _ in range(3):
        core.read(ReadParams(file_path=str(warm), force=True))
    return core


def _timing(spent: dict[str, float]) -> Callable[[], None]:
    """Wrap each of PARTS to add its time to `spent`; returns the undo."""
    originals = []
    for label, (owner, name) in PARTS.items():
        original = getattr(owner, name)
        originals.append((owner, name, original))

        def timed(*args: Any, _f: Any = original, _label: str = label, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                return _f(*args, **kwargs)
            finally:
                spent[_label] = spent.get(_label, 0.0) + time.perf_counter() - began

        setattr(owner, name, timed)

    def undo() -> None:
        for owner, name, original in originals:
            setattr(owner, name, original)

    return undo


def bench_reads(modules: list[Path], rounds: int, folder: Path) -> dict[str, Any]:
    first: list[float] = []
    parts: dict[str, list[float]] = {"read": []}
    for number in range(rounds):
        root = folder / f"round{number}"
        root.mkdir()
        os.environ["XDG_CACHE_HOME"] = str(folder / f"cache{number}")
        paths = []
        for index, module in enumerate(modules):
            path = root / f"{index:03d}_{module.name}"
            path.write_bytes(module.read_bytes())
            paths.append(path)
        outline._cache.clear()
        earlier = _core(root)
        for path in paths:
            began = time.perf_counter()
            earlier.read(ReadParams(file_path=str(path)))
            first.append((time.perf_counter() - began) * 1000)
        earlier.close()
        outline._cache.clear()
        later = _core(root)
        spent: dict[str, float] = {}
        undo = _timing(spent)
        try:
            for path in paths:
                spent.clear()
                began = time.perf_counter()
                later.read(ReadParams(file_path=str(path)))
                total = time.perf_counter() - began
                parts["read"].append(total * 1000)
                for label in PARTS:
                    parts.setdefault(label, []).append(spent.get(label, 0.0) * 1000)
                parts.setdefault("the rest", []).append((total - sum(spent.values())) * 1000)
        finally:
            undo()
            later.close()
    return {"first read": _ms(first), "cold restart": {k: _ms(v) for k, v in parts.items()}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", type=int, default=60, help="distinct stdlib modules")
    parser.add_argument("--rounds", type=int, default=3, help="passes over them")
    parser.add_argument("--output", type=Path, default=RESULTS, help="JSON results file")
    args = parser.parse_args(argv)
    for name in [k for k in os.environ if k.startswith("READKEEPER_")]:
        del os.environ[name]
    modules = real_modules("stdlib")[: args.modules]
    began, load_before = time.perf_counter(), os.getloadavg()
    steps = bench_steps(modules, args.rounds)
    with tempfile.TemporaryDirectory(prefix="rk-bench-outline-") as folder:
        reads = bench_reads(modules, args.rounds, Path(folder))
    outline.SCAN_PYTHON = True
    try:
        with tempfile.TemporaryDirectory(prefix="rk-bench-outline-") as folder:
            scan_first = bench_reads(modules, args.rounds, Path(folder))
    finally:
        outline.SCAN_PYTHON = False
    meta = {
        **machine(),
        "modules": len(modules),
        "rounds": args.rounds,
        "load_avg_before": load_before,
        "load_avg_after": os.getloadavg(),
        "seconds": round(time.perf_counter() - began, 1),
    }
    print(
        f"first outline benchmark: Python {meta['python']}, {meta['cpus']} CPUs, load "
        f"{load_before[0]:.2f}, {len(modules)} modules x {args.rounds}, {meta['seconds']} s"
    )
    print(f"{'step (ms)':<40} {'p50':>8} {'p90':>8} {'mean':>8}")
    rows = [(k, steps[k]) for k in ("parse", "walk", "parse + walk", "scan")]
    rows += [(k, steps[k]) for k in ("best of rounds: parse + walk", "best of rounds: scan")]
    rows.append(("first read (new core)", reads["first read"]))
    rows.append(("first read, scanner first", scan_first["first read"]))
    rows += [(f"cold restart: {k}", v) for k, v in reads["cold restart"].items()]
    for label, figures in rows:
        print(
            f"{label:<40} {figures['p50_ms']:>8.3f} {figures['p90_ms']:>8.3f} "
            f"{figures['mean_ms']:>8.3f}"
        )
    print(
        f"scan accepted {steps['scan accepted']} modules; parse + walk / scan at the "
        f"median: {steps['parse + walk / scan, at the median']}x; each module's best round: "
        f"{steps['best of rounds: median ratio']}x (median of the ratios)"
    )
    write_json(
        args.output, {"meta": meta, "steps": steps, "reads": reads, "scanner first": scan_first}
    )
    print(f"\nwritten to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
