"""Benchmark the image, PDF and notebook readers (issue 5).

Run it as `.venv/bin/python bench/bench_readers.py` (about a minute on a 2-core machine).
It prints a table and writes every figure to `bench/results/readers.json`. Figures are
shown beside their targets with pass/MISS; nothing is asserted, since timings depend on
the machine and its load.

Rows (files are generated into a temporary workspace with the test suite's makers in
tests/document_samples.py; the page cache is warm throughout):
- screenshot: a 2880x1800 PNG of an editor; photo: a 4032x3024 noisy JPEG. Each is read
  with `force` (never a stub). "raw b64" is what a tool without a budget sends (the file
  as base64) and the ratio is raw base64 bytes / result bytes; "raw tokens" is what the
  picture costs at full size by the width*height/750 estimate.
- pdf 20 pages: `pages="91-110"` of a 200-page text PDF, as text.
- pdf render 5 pages: `pages="1-5", render=true` of the same PDF, drawn to PNG files
  (in-process, each run uses a new core and so a new output folder; through the server
  the files are drawn once and then found in the session's folder, so `LSP p50` is the
  reuse path).
- notebook 5 MB: a whole read of a notebook of code cells with PNG plot outputs.
- stub: a re-read of the unchanged screenshot (a `file_unchanged` stub).
- worker overhead: PDFs are read in a worker process (readers/worker.py). `pages="1-20",
  render=true` and `pages="1-20"` (text) of the 200-page PDF, each timed both ways in
  this process, alternating: through a warm worker (as the server reads), and with the
  worker's jobs run in this process instead (the same code minus the process boundary:
  pipes, frames, the PNGs' copy). The overhead is the difference of the medians over
  the in-process median; target for the render: under 20%. `cold` is the first read
  through a new pool, which starts its worker (Python, pypdf, pypdfium2, Pillow).

`in-process` times `Readkeeper.read` in this process (the reader's own cost; p50 and p95
over the repeats, after one warm-up); `cpu ms` is the median CPU time of those reads,
which other load on the machine does not inflate as it does wall-clock time (this
process's only: a PDF is read and drawn in the worker process, whose CPU time is not
counted). `first` is one read in a fresh Python process, so it includes importing
Pillow/pypdf/pypdfium2/nbformat, which the server does lazily on its first read of each
kind (for PDFs, starting the worker process that imports them). `via LSP` is the median
round trip
through a real `readkeeper serve` over stdio (pygls client), result JSON included.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from document_samples import (  # noqa: E402
    encode,
    notebook_with_plots,
    numbered_pdf,
    photo,
    screenshot,
)

from common import clean_env, machine, percentile, write_json  # noqa: E402
from readkeeper.client import ReadkeeperClient  # noqa: E402
from readkeeper.core import Readkeeper  # noqa: E402
from readkeeper.protocol import ReadParams, unstructure  # noqa: E402
from readkeeper.read.readers import worker  # noqa: E402

RESULTS = HERE / "results" / "readers.json"
TARGET_SCREENSHOT_MS = 250.0
TARGET_SCREENSHOT_TOKENS = 1600
TARGET_PDF_20_MS = 1000.0
TARGET_WORKER_OVERHEAD = 0.20


def make_workspace(root: Path) -> dict[str, tuple[str, dict[str, Any]]]:
    """The files, and the read params of each row."""
    (root / "screenshot.png").write_bytes(encode(screenshot(2880, 1800), "PNG"))
    (root / "photo.jpg").write_bytes(encode(photo(4032, 3024), "JPEG", quality=92))
    (root / "book.pdf").write_bytes(numbered_pdf(200, lines=45))
    (root / "plots.ipynb").write_text(json.dumps(notebook_with_plots(5_000_000), indent=1))
    return {
        "screenshot 2880x1800": ("screenshot.png", {}),
        "photo 4032x3024": ("photo.jpg", {}),
        "pdf 20 of 200 pages": ("book.pdf", {"pages": "91-110"}),
        "pdf render 5 pages": ("book.pdf", {"pages": "1-5", "render": True}),
        "notebook 5 MB": ("plots.ipynb", {}),
    }


def in_process(
    root: Path, name: str, params: dict[str, Any], repeats: int
) -> tuple[list[float], list[float], Any]:
    """Wall-clock and CPU milliseconds of each read, and the last result."""
    core = Readkeeper(roots=[str(root)])
    core.read(ReadParams(file_path=name, force=True, **params))  # warm-up
    times: list[float] = []
    cpu: list[float] = []
    result: Any = None
    for _ in range(repeats):
        if params.get("render"):
            # A new core has a new output folder, so every page is drawn again.
            core = Readkeeper(roots=[str(root)])
        start, start_cpu = time.perf_counter(), time.process_time()
        result = core.read(ReadParams(file_path=name, force=True, **params))
        times.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
    return times, cpu, unstructure(result)


def stub_times(root: Path, name: str, repeats: int) -> list[float]:
    core = Readkeeper(roots=[str(root)])
    core.read(ReadParams(file_path=name))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = core.read(ReadParams(file_path=name))
        times.append((time.perf_counter() - start) * 1000)
        assert result.type == "file_unchanged"
    return times


FIRST_READ = """
import json, sys, time
start = time.perf_counter()
from readkeeper.core import Readkeeper
from readkeeper.protocol import ReadParams
core = Readkeeper(roots=[sys.argv[1]])
ready = time.perf_counter()
core.read(ReadParams(file_path=sys.argv[2], **json.loads(sys.argv[3])))
print(json.dumps({"read_ms": (time.perf_counter() - ready) * 1000}))
"""


def first_read_ms(root: Path, name: str, params: dict[str, Any]) -> float:
    out = subprocess.run(
        [sys.executable, "-c", FIRST_READ, str(root), name, json.dumps(params)],
        capture_output=True,
        text=True,
        check=True,
        env=clean_env(),
    )
    return float(json.loads(out.stdout.strip().splitlines()[-1])["read_ms"])


class InProcessLease:
    """A stand-in for `worker.Lease` that runs the worker's jobs in this process: the
    reads it serves do the same work as through a worker, minus the process boundary."""

    def __init__(self) -> None:
        self.document: Any = None

    def call(
        self,
        job: str,
        args: dict[str, Any] | None = None,
        data: bytes | None = None,
        on_item: Any = None,
    ) -> dict[str, Any]:
        if data is not None:
            self.document = worker._Document(data)

        def send(header: dict[str, Any], blobs: list[bytes]) -> None:
            if on_item is not None:
                on_item(header["item"], blobs)

        # Through JSON, as the frames would carry it.
        return dict(json.loads(json.dumps(worker._JOBS[job](self.document, args or {}, send))))


@contextmanager
def in_process_lease() -> Iterator[InProcessLease]:
    lease = InProcessLease()
    try:
        yield lease
    finally:
        if lease.document is not None:
            lease.document.close()


WORKER_ROWS = {
    "pdf render 20 pages": {"pages": "1-20", "render": True},
    "pdf text 20 pages": {"pages": "1-20"},
}


def worker_overhead(root: Path, name: str, repeats: int) -> dict[str, dict[str, Any]]:
    """Each row's reads through a warm worker and in-process, alternating."""
    real_lease = worker.lease

    def timed(params: dict[str, Any]) -> float:
        core = Readkeeper(roots=[str(root)])  # a new output folder: every page drawn
        start = time.perf_counter()
        core.read(ReadParams(file_path=name, force=True, **params))
        return (time.perf_counter() - start) * 1000

    rows: dict[str, dict[str, Any]] = {}
    for label, params in WORKER_ROWS.items():
        pool = worker.Pool()
        try:
            worker.lease = pool.lease
            cold = timed(params)  # starts the pool's first worker
            timed(params)  # warm-up
            worker.lease = in_process_lease
            timed(params)  # warm-up (imports pypdf, pypdfium2 and Pillow here)
            through: list[float] = []
            inside: list[float] = []
            for _ in range(repeats):
                worker.lease = pool.lease
                through.append(timed(params))
                worker.lease = in_process_lease
                inside.append(timed(params))
        finally:
            worker.lease = real_lease
            pool.close()
        worker_ms, in_process_ms = statistics.median(through), statistics.median(inside)
        rows[label] = {
            "params": params,
            "repeats": repeats,
            "worker_p50_ms": worker_ms,
            "in_process_p50_ms": in_process_ms,
            "overhead_ms": worker_ms - in_process_ms,
            "overhead": (worker_ms - in_process_ms) / in_process_ms,
            "cold_worker_ms": cold,
            "worker_ms": through,
            "in_process_ms": inside,
        }
    return rows


async def via_lsp(
    root: Path, rows: dict[str, tuple[str, dict[str, Any]]], repeats: int
) -> dict[str, float]:
    client = ReadkeeperClient()
    await client.start_server(env=clean_env())
    medians: dict[str, float] = {}
    try:
        await client.open_workspace(root)
        for label, (name, params) in rows.items():
            request = {"file_path": name, "force": True, **params}
            await client.request("readkeeper/read", request)  # warm-up
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                await client.request("readkeeper/read", request)
                times.append((time.perf_counter() - start) * 1000)
            medians[label] = statistics.median(times)
    finally:
        await client.close()
    return medians


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=15, help="timed reads per row")
    parser.add_argument(
        "--worker-repeats", type=int, default=7, help="timed reads per way, worker rows"
    )
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="rk-bench-readers-") as tmp:
        root = Path(tmp).resolve()
        print("generating files ...", file=sys.stderr)
        rows = make_workspace(root)
        figures: dict[str, dict[str, Any]] = {}
        for label, (name, params) in rows.items():
            print(f"timing {label} ...", file=sys.stderr)
            path = root / name
            first = first_read_ms(root, name, params)
            times, cpu, result = in_process(root, name, params, args.repeats)
            body = json.dumps(result, separators=(",", ":"))
            file = result["file"]
            row: dict[str, Any] = {
                "file": name,
                "file_bytes": path.stat().st_size,
                "params": params,
                "type": result["type"],
                "p50_ms": statistics.median(times),
                "p95_ms": percentile(times, 95),
                "min_ms": min(times),
                "cpu_p50_ms": statistics.median(cpu),
                "first_read_new_process_ms": first,
                "result_bytes": len(body),
                "tokens": file["tokens"],
            }
            if result["type"] == "image":
                dims = file["dimensions"]
                raw_b64 = 4 * -(-path.stat().st_size // 3)
                row.update(
                    raw_base64_bytes=raw_b64,
                    bytes_ratio=raw_b64 / len(body),
                    raw_tokens=-(-dims["original_width"] * dims["original_height"] // 750),
                    display=f"{dims['display_width']}x{dims['display_height']}",
                    media_type=file["media_type"],
                )
            if result["type"] == "notebook":
                row.update(
                    raw_bytes=path.stat().st_size,
                    bytes_ratio=path.stat().st_size / len(body),
                    cells=file["total_cells"],
                )
            if result["type"] == "parts":
                row.update(image_tokens=file["image_tokens"], pages=file["count"])
            figures[label] = row
        stub = stub_times(root, "screenshot.png", args.repeats * 4)
        figures["stub re-read (screenshot)"] = {
            "p50_ms": statistics.median(stub),
            "p95_ms": percentile(stub, 95),
            "result_bytes": len(
                json.dumps({"type": "file_unchanged", "file": {"file_path": str(root)}})
            ),
            "tokens": 12,
        }
        print("timing through the server ...", file=sys.stderr)
        lsp = asyncio.run(via_lsp(root, rows, max(5, args.repeats // 2)))
        for label, median in lsp.items():
            figures[label]["lsp_p50_ms"] = median
        print("timing the PDF worker against in-process reads ...", file=sys.stderr)
        overhead = worker_overhead(root, "book.pdf", args.worker_repeats)

    shot = figures["screenshot 2880x1800"]
    pdf = figures["pdf 20 of 200 pages"]
    checks = {
        "screenshot p50 <= 250 ms": shot["p50_ms"] <= TARGET_SCREENSHOT_MS,
        "screenshot <= 1,600 tokens": shot["tokens"] <= TARGET_SCREENSHOT_TOKENS,
        "pdf 20 pages p50 <= 1 s": pdf["p50_ms"] <= TARGET_PDF_20_MS,
        "worker overhead on a 20-page render < 20%": overhead["pdf render 20 pages"]["overhead"]
        < TARGET_WORKER_OVERHEAD,
    }
    print_table(figures, overhead, checks)
    write_json(
        args.output,
        {
            "machine": {**machine(), "loadavg": os.getloadavg()},
            "repeats": args.repeats,
            "rows": figures,
            "worker_overhead": overhead,
            "targets": checks,
        },
    )
    print(f"\nwritten to {args.output}")
    return 0


def print_table(
    figures: dict[str, dict[str, Any]],
    overhead: dict[str, dict[str, Any]],
    checks: dict[str, bool],
) -> None:
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    header = (
        f"{'row':<27}{'p50 ms':>8}{'p95 ms':>8}{'cpu ms':>8}{'first':>8}{'LSP p50':>9}"
        f"{'tokens':>8}{'result B':>11}{'raw b64 B':>11}{'ratio':>7}{'raw tok':>8}"
    )
    print(header)
    print("-" * len(header))
    for label, row in figures.items():
        raw = row.get("raw_base64_bytes") or row.get("raw_bytes")
        print(
            f"{label:<27}{row['p50_ms']:>8.1f}{row['p95_ms']:>8.1f}"
            f"{_num(row.get('cpu_p50_ms')):>8}"
            f"{_num(row.get('first_read_new_process_ms')):>8}{_num(row.get('lsp_p50_ms')):>9}"
            f"{row['tokens']:>8,}{row['result_bytes']:>11,}{_int(raw):>11}"
            f"{_ratio(row.get('bytes_ratio')):>7}{_int(row.get('raw_tokens')):>8}"
        )
    print()
    header = f"{'PDF worker':<27}{'worker':>8}{'in-proc':>9}{'overhead':>10}{'cold':>8}"
    print(header)
    print("-" * len(header))
    for label, row in overhead.items():
        print(
            f"{label:<27}{row['worker_p50_ms']:>8.0f}{row['in_process_p50_ms']:>9.0f}"
            f"{row['overhead']:>+10.1%}{row['cold_worker_ms']:>8.0f}"
        )
    print(f"(medians of {next(iter(overhead.values()))['repeats']} reads each way, ms)")
    print()
    for name, ok in checks.items():
        print(f"{'pass' if ok else 'MISS'}  {name}")


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def _int(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}x"


if __name__ == "__main__":
    raise SystemExit(main())
