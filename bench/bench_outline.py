"""Benchmark outline and symbol reads (issue 14): time, first-load cost, tokens.

Run it as `.venv/bin/python bench/bench_outline.py`. It prints a table and writes the
same figures to `bench/results/outline.json`. Rows:

1. Outline time of typing.py (CPython's, about 3,500 lines) with the grammar loaded:
   the parse and symbol walk alone, and the whole in-process outline read (token count,
   first lines, note), each on a new content digest so nothing is cached; p50 of wall
   and CPU time (CPU time is shown because a loaded machine inflates wall time); and
   today's forced whole read of the same file, for what the read path itself costs.
2. First-load cost: importing tree-sitter and the Python grammar and the first parse,
   in a fresh interpreter; and a check that starting the server imports neither.
3. Tokens of reading typing.py whole twice: today's two first pages (what a forced read
   returns) against the outline plus the `file_unchanged` stub; tokens are the results'
   `tokens` fields, and the stub's JSON counted with the same tokenizer.
4. Tokens to reach one method of a ~3,000-line file (tarfile.py) from nothing: the
   outline plus a symbol read, against the first page plus the ranged reads an agent
   makes from `next_offset` until the method's lines have come.
5. The threshold's measurement: CPython's stdlib modules by size, the median cost of a
   whole read and of an outline (what `outline_over_tokens` was chosen from).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time
import typing
from pathlib import Path
from typing import Any

from common import machine, scored, scratch, summarize, verdict, write_json
from readkeeper.core import Readkeeper
from readkeeper.protocol import ReadParams, unstructure
from readkeeper.read.readers import outline, outline_read
from readkeeper.read.tokens import TokenCounter

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "outline.json"
STDLIB = Path(sysconfig.get_paths()["stdlib"])
TARGET_OUTLINE_MS = 30.0
TARGET_TWICE_TOKENS = 5_000
TODAY_TWICE_TOKENS = 47_222  # measured in issue 14 on the main of the time
METHOD_FILE, METHOD = STDLIB / "tarfile.py", "TarFile.extractall"


def _variants(text: str, count: int) -> list[str]:
    """`text` with a distinct last line each: a new digest, so no cache answers."""
    return [f"{text}# variant {i}\n" for i in range(count)]


def bench_time(samples: int) -> dict[str, Any]:
    text = Path(typing.__file__).read_text(encoding="utf-8")
    grammar = outline.grammar_for("typing.py")
    assert grammar is not None
    outline.symbols("x = 1\n", grammar)  # the grammar loaded
    walls, cpus = [], []
    for variant in _variants(text, samples):
        wall, cpu = time.perf_counter(), time.process_time()
        found = outline.symbols(variant, grammar)
        outline.render(found, outline_read.OUTLINE_MAX_CHARS)
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
    with scratch("readkeeper-outline-") as (workdir, _):
        core = Readkeeper(roots=[str(workdir)])
        core.tokens.warm_up()
        path = workdir / "typing.py"
        reads, read_cpus = [], []
        for variant in _variants(text, samples):
            path.write_text(variant)
            wall, cpu = time.perf_counter(), time.process_time()
            result = core.read(ReadParams(file_path=str(path)))
            reads.append((time.perf_counter() - wall) * 1000)
            read_cpus.append((time.process_time() - cpu) * 1000)
            assert result.type == "outline", result.type
        # Today's answer to the same read (the first page), for the read path's own cost.
        forced, forced_cpus = [], []
        for variant in _variants(text, samples):
            path.write_text(variant + "# forced\n")
            wall, cpu = time.perf_counter(), time.process_time()
            core.read(ReadParams(file_path=str(path), force=True))
            forced.append((time.perf_counter() - wall) * 1000)
            forced_cpus.append((time.process_time() - cpu) * 1000)
    return {
        "lines": len(text.splitlines()),
        "symbols_wall": summarize(walls),
        "symbols_cpu": summarize(cpus),
        "read_wall": summarize(reads),
        "read_cpu": summarize(read_cpus),
        "forced_wall": summarize(forced),
        "forced_cpu": summarize(forced_cpus),
    }


FIRST_LOAD = """
import time, sys
start = time.perf_counter()
from readkeeper.read.readers import outline
grammar = outline.grammar_for("typing.py")
import typing
text = open(typing.__file__, encoding="utf-8").read()
loaded = time.perf_counter()
outline.load(grammar)
ready = time.perf_counter()
outline.symbols(text, grammar)
first = time.perf_counter()
outline.symbols(text + "#\\n", grammar)
second = time.perf_counter()
print((loaded - start) * 1000, (ready - loaded) * 1000, (first - ready) * 1000,
      (second - first) * 1000)
"""
SERVER_IMPORTS = (
    "import sys, readkeeper.lsp.app, readkeeper.core; "
    "print(sorted(m for m in sys.modules if m.startswith('tree_sitter')))"
)


def bench_first_load(runs: int) -> dict[str, Any]:
    rows = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", FIRST_LOAD], capture_output=True, text=True, check=True
        )
        rows.append([float(x) for x in out.stdout.split()])
    imported = subprocess.run(
        [sys.executable, "-c", SERVER_IMPORTS], capture_output=True, text=True, check=True
    ).stdout.strip()
    return {
        "load_grammar_ms": statistics.median(r[1] for r in rows),
        "first_outline_ms": statistics.median(r[2] for r in rows),
        "second_outline_ms": statistics.median(r[3] for r in rows),
        "first_load_extra_ms": statistics.median(r[1] + r[2] - r[3] for r in rows),
        "runs": runs,
        "tree_sitter_imported_by_server_start": imported,
    }


def _tokens(result: Any, counter: TokenCounter) -> int:
    """The `tokens` a content result reports; for a stub, its JSON counted."""
    data = unstructure(result)
    if data["type"] == "file_unchanged":
        return counter.count(json.dumps(data))
    return int(data["file"]["tokens"])


def bench_tokens() -> dict[str, Any]:
    counter = TokenCounter()
    with scratch("readkeeper-outline-") as (workdir, _):
        shutil.copy(typing.__file__, workdir / "typing.py")
        shutil.copy(METHOD_FILE, workdir / METHOD_FILE.name)
        core = Readkeeper(roots=[str(workdir)])

        def read(session: str, **params: Any) -> Any:
            return core.read(ReadParams(session=session, **params))

        today = [read("today", file_path="typing.py", force=True) for _ in range(2)]
        now = [read("now", file_path="typing.py") for _ in range(2)]
        twice = {
            "today_tokens": sum(_tokens(r, counter) for r in today),
            "outline_tokens": _tokens(now[0], counter),
            "stub_tokens": _tokens(now[1], counter),
            "types": [r.type for r in now],
        }
        twice["now_tokens"] = twice["outline_tokens"] + twice["stub_tokens"]

        name = METHOD_FILE.name
        outlined = read("reach", file_path=name)
        symbol = read("reach", file_path=name, symbol=METHOD)
        assert symbol.type == "text"
        first, last = symbol.file.start_line, symbol.file.start_line + symbol.file.num_lines - 1
        pages, offset, held = [], None, 0
        while held < last:  # an agent without an outline pages on until it has the method
            page = read("page", file_path=name, offset=offset, force=True)
            pages.append(page)
            held = page.file.start_line + page.file.num_lines - 1
            offset = page.file.next_offset
        reach = {
            "file": name,
            "lines": outlined.file.total_lines,
            "method": METHOD,
            "method_lines": [first, last],
            "outline_tokens": _tokens(outlined, counter),
            "symbol_tokens": _tokens(symbol, counter),
            "pages": len(pages),
            "pages_tokens": sum(_tokens(p, counter) for p in pages),
        }
        reach["outline_plus_symbol"] = reach["outline_tokens"] + reach["symbol_tokens"]
    return {"twice": twice, "reach": reach}


def bench_threshold() -> list[dict[str, Any]]:
    counter = TokenCounter()
    grammar = outline.grammar_for("x.py")
    assert grammar is not None
    sized = []
    for path in sorted(STDLIB.glob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if len(text.encode()) > 262_144:
            continue
        lines = text.split("\n")
        numbered = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, 1))
        drawn = outline.render(outline.symbols(text, grammar), outline_read.OUTLINE_MAX_CHARS)
        head = "\n".join(lines[: outline_read.HEAD_MAX_LINES])
        sized.append((counter.count(numbered), counter.count(drawn.text + head) + 120))
    bands = []
    for low, high in [(0, 4_000), (4_000, 8_000), (8_000, 16_000), (16_000, 25_000), (25_000, 0)]:
        band = [(w, o) for w, o in sized if w >= low and (not high or w < high)]
        if band:
            bands.append(
                {
                    "whole_tokens": f"{low:,}-{high:,}" if high else f"{low:,}+",
                    "files": len(band),
                    "median_whole": statistics.median(w for w, _ in band),
                    "median_outline": statistics.median(o for _, o in band),
                    "median_ratio": statistics.median(o / w for w, o in band),
                }
            )
    return bands


def table(timing: dict[str, Any], load: dict[str, Any], tokens: dict[str, Any]) -> list[str]:
    sym, read = timing["symbols_cpu"], timing["read_cpu"]
    twice, reach = tokens["twice"], tokens["reach"]
    ratio_reach = reach["outline_plus_symbol"] / reach["pages_tokens"]
    return [
        f"{'row':<58} {'value':>12}  {'target':<10} verdict",
        f"{'1  typing.py symbols (parse+walk+render), wall p50':<58} "
        f"{timing['symbols_wall']['p50_ms']:>10.1f}ms",
        f"{'   same, CPU p50':<58} {sym['p50_ms']:>10.1f}ms  {'<30 ms':<10} "
        f"{verdict(sym['p50_ms'], TARGET_OUTLINE_MS)}",
        f"{'   whole outline read in-process, wall p50':<58} "
        f"{timing['read_wall']['p50_ms']:>10.1f}ms",
        f"{'   same, CPU p50':<58} {read['p50_ms']:>10.1f}ms  {'<30 ms':<10} "
        f"{verdict(read['p50_ms'], TARGET_OUTLINE_MS)}",
        f"{'   today: forced whole read (first page), CPU p50':<58} "
        f"{timing['forced_cpu']['p50_ms']:>10.1f}ms",
        f"{'2  first load: import + grammar (wall)':<58} {load['load_grammar_ms']:>10.1f}ms",
        f"{'   first outline after load, vs the next (wall)':<58} "
        f"{load['first_outline_ms']:>7.1f}/{load['second_outline_ms']:.1f}ms",
        f"{'   tree-sitter modules imported by server start':<58} "
        f"{load['tree_sitter_imported_by_server_start']:>12}",
        f"{'3  typing.py whole twice, today (2 first pages)':<58} {twice['today_tokens']:>12,}",
        f"{'   now: outline + stub':<58} "
        f"{twice['outline_tokens']:>6,}+{twice['stub_tokens']:<5,}  {'<5,000':<10} "
        f"{verdict(twice['now_tokens'], TARGET_TWICE_TOKENS)}",
        f"{'4  ' + reach['method'] + ' of ' + reach['file'] + ': pages':<58} "
        f"{reach['pages_tokens']:>12,}  ({reach['pages']} reads)",
        f"{'   outline + symbol read':<58} "
        f"{reach['outline_tokens']:>6,}+{reach['symbol_tokens']:<5,}  "
        f"({ratio_reach:.2f}x)",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=40, help="outlines timed per row")
    parser.add_argument("--loads", type=int, default=5, help="fresh interpreters for row 2")
    parser.add_argument("--output", type=Path, default=RESULTS, help="JSON results file")
    args = parser.parse_args(argv)
    for name in [k for k in os.environ if k.startswith("READKEEPER_")]:
        del os.environ[name]
    began, load_before = time.perf_counter(), os.getloadavg()
    timing = bench_time(args.samples)
    load = bench_first_load(args.loads)
    tokens = bench_tokens()
    bands = bench_threshold()
    meta = {
        **machine(),
        "load_avg_before": load_before,
        "load_avg_after": os.getloadavg(),
        "seconds": time.perf_counter() - began,
    }
    print(
        f"readkeeper outline benchmark: Python {meta['python']}, {meta['cpus']} CPUs, "
        f"load {load_before[0]:.2f}, {meta['seconds']:.0f} s"
    )
    print("\n".join(table(timing, load, tokens)))
    print("\n5  stdlib modules: whole read vs outline (tokens, medians)")
    for band in bands:
        print(
            f"   {band['whole_tokens']:<14} {band['files']:>4} files  whole "
            f"{band['median_whole']:>7,.0f}  outline {band['median_outline']:>6,.0f}  "
            f"({band['median_ratio']:.2f}x)"
        )
    targets = {
        "symbols_cpu_p50_ms": (timing["symbols_cpu"]["p50_ms"], TARGET_OUTLINE_MS),
        "outline_read_cpu_p50_ms": (timing["read_cpu"]["p50_ms"], TARGET_OUTLINE_MS),
        "typing_twice_tokens": (tokens["twice"]["now_tokens"], TARGET_TWICE_TOKENS),
    }
    report = {
        "meta": meta,
        "targets": scored(targets),
        "time": timing,
        "first_load": load,
        "tokens": tokens,
        "threshold_bands": bands,
    }
    write_json(args.output, report)
    print(f"\nwritten to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
