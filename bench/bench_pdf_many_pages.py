"""A page range of a PDF of many pages (attack round 21, finding 3).

Run it as `.venv/bin/python bench/bench_pdf_many_pages.py [--pages 20000] [--repeats 3]`.
It prints a table and writes the figures to `bench/results/pdf_many_pages.json`.

The PDF is like the attack's: N pages in one flat page tree, each with a short content
stream of its own (tests/read/test_pdf_many_pages.py's maker; 5.5 MB for 20,000).
Each row is the worker's own jobs run in this process on a
new document (as a read through a new lease does: `open`, then `text` of 20 pages),
A/B interleaved: `pypdf walk` as before (the bound `_PYPDF_MAX_PAGES` lifted above N,
so pypdf counts the pages and finds each one), `pdfium` as now (N over the bound).
Medians of wall time; the load average is printed beside them."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "read"))

from test_pdf_many_pages import many_pages_pdf

from readkeeper.read.readers import pdf_worker


def one_read(data: bytes, pages: list[int]) -> tuple[float, int]:
    start = time.perf_counter()
    doc = pdf_worker._Document(data)
    items: list[Any] = []
    count = pdf_worker._job_open(doc, {}, lambda h, b: None)["page_count"]
    pdf_worker._job_text(
        doc, {"pages": pages, "stop_after": 60.0}, lambda h, b: items.append(h["item"])
    )
    doc.close()
    assert len(items) == len(pages)
    return time.perf_counter() - start, count


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    data = many_pages_pdf(args.pages)
    bound = pdf_worker._PYPDF_MAX_PAGES
    times: dict[str, list[float]] = {"pypdf walk": [], "pdfium": []}
    ranges = {
        "first 20": list(range(1, 21)),
        "last 20": list(range(args.pages - 19, args.pages + 1)),
    }
    rows = []
    for label, wanted in ranges.items():
        times = {"pypdf walk": [], "pdfium": []}
        for _ in range(args.repeats):
            for way, limit in (("pypdf walk", args.pages + 1), ("pdfium", bound)):
                pdf_worker._PYPDF_MAX_PAGES = limit
                took, count = one_read(data, wanted)
                assert count == args.pages
                times[way].append(took)
        pdf_worker._PYPDF_MAX_PAGES = bound
        row = {way: round(statistics.median(t) * 1000) for way, t in times.items()}
        rows.append({"range": label, **row})
    load = os.getloadavg()[0]
    print(
        f"{args.pages:,} pages, {len(data) / 1e6:.1f} MB, load {load:.1f}, "
        f"{args.repeats} reads each"
    )
    print("| range | pypdf walk p50 ms | pdfium p50 ms |")
    print("|---|---|---|")
    for row in rows:
        print(f"| {row['range']} | {row['pypdf walk']:,} | {row['pdfium']:,} |")
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "pdf_many_pages.json").write_text(
        json.dumps({"pages": args.pages, "load": load, "rows": rows}, indent=1)
    )


if __name__ == "__main__":
    main()
