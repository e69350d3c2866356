"""Benchmark a notebook cell edit, now a splice of the file's own text (edit/notebook_splice.py).

Run it as `.venv/bin/python bench/bench_notebook_edit.py`. It prints a table and writes
the same figures to `bench/results/notebook_edit.json`; nothing is asserted, since
timings depend on the machine and its load.

Rows, on a notebook of CELLS code cells with a stream output each, as Jupyter writes it:

- `cell edit, in-process core`: `Readkeeper.edit_cell` replacing one cell's source (two
  sources alternating), the session's read-state carried by its own edits: the whole
  check, the splice, its proof (a re-parse), nbformat's validation and the atomic write.
- `splice alone`: finding the spans (`layout`) and splicing one source.
- `json round trip`: `json.loads` + `json.dumps` of the whole notebook, what the edit
  did before (and what the splice's proof still pays for once).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path

import nbformat

from common import machine, scratch, summarize, write_json
from readkeeper.core import Readkeeper
from readkeeper.edit import notebook_splice
from readkeeper.protocol import NotebookEditParams, ReadParams

RESULTS = Path(__file__).resolve().parent / "results" / "notebook_edit.json"


def make(path: Path, cells: int) -> None:
    nb = nbformat.v4.new_notebook()
    for i in range(cells):
        cell = nbformat.v4.new_code_cell(source=f"x_{i} = {i}\nprint(x_{i} * 1.10)\n")
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"{i}\n" * 20)]
        nb.cells.append(cell)
    nbformat.write(nb, str(path))


def timed(step: Callable[[int], object], runs: int) -> list[float]:
    samples = []
    for n in range(runs):
        start = time.perf_counter()
        step(n)
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cells", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with scratch("rk-bench-nb-") as (workdir, _):
        path = workdir / "big.ipynb"
        make(path, args.cells)
        size = path.stat().st_size
        core = Readkeeper(roots=[str(workdir)])
        core.read(ReadParams(file_path=str(path), offset=args.cells // 2 + 1, limit=1))
        target = json.loads(path.read_text())["cells"][args.cells // 2]["id"]

        def edit(n: int) -> object:
            source = f"changed = {n % 2}"
            return core.edit_cell(
                NotebookEditParams(file_path=str(path), cell_id=target, new_source=source)
            )

        rows = {"cell edit, in-process core": summarize(timed(edit, args.runs))}
        text = path.read_text()
        index = args.cells // 2

        def splice(n: int) -> object:
            where = notebook_splice.layout(text)
            old = json.loads(text[where.cells[index].start : where.cells[index].end])
            return notebook_splice.replaced(where, index, old, {**old, "source": [str(n)]})

        rows["splice alone"] = summarize(timed(splice, args.runs))
        rows["json round trip"] = summarize(
            timed(lambda n: json.dumps(json.loads(text), indent=1), args.runs)
        )
        core.close()
    print(f"notebook: {args.cells:,} cells, {size / 1e6:.1f} MB; {args.runs} runs")
    print(f"{'row':32} {'p50 ms':>8} {'p95 ms':>8} {'min ms':>8}")
    for name, row in rows.items():
        print(f"{name:32} {row['p50_ms']:8.1f} {row['p95_ms']:8.1f} {row['min_ms']:8.1f}")
    write_json(
        RESULTS,
        {"machine": machine(), "cells": args.cells, "bytes": size, "rows": rows},
    )


if __name__ == "__main__":
    main()
