"""What exact counts cost on the results that used to send bytes/4 (issue 34): notebooks,
PDF page text and rendered pages' results.

Run it as `.venv/bin/python bench/bench_exact_kinds.py` (under a minute). Each row is a
forced read in this process (`Readkeeper.read`, the token table loaded and the PDF
worker started), and beside it the text whose count the result sends, timed both ways:

- **estimate**: `estimate_tokens` of that text (bytes/4, what these results sent before);
- **count**: tiktoken's exact count of it (what they send now);
- **read**: the whole read's median, which now includes the count (a notebook's cells
  are counted as JSON and as the text MCP and the CLI show: the cap holds for both);
- **as sent**: what MCP and the CLI add to the read: its text rendered and counted
  again (rendered_tokens.py), for `tokens` that count the text they send.

The `extra` column is count minus estimate: what a read pays for the exact figure. The
table shows medians; the figures go to `bench/results/exact_kinds.json`. Nothing is
asserted.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from common import machine, summarize, write_json
from readkeeper.core import Readkeeper
from readkeeper.protocol import ReadParams, unstructure
from readkeeper.read.tokens import estimate_tokens

try:
    from readkeeper.rendered_tokens import recounted
except ImportError:  # an older readkeeper, measured for comparison
    recounted = None

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from document_samples import (  # noqa: E402
    code_notebook,
    every_output_notebook,
    numbered_pdf,
    papermill_notebooks,
)


def _cells_text(file: dict[str, Any]) -> str:
    cells = json.loads(json.dumps(file["cells"]))
    for cell in cells:
        for output in cell.get("outputs") or []:
            for image in output.get("images") or []:
                image.pop("base64", None)
    return json.dumps(cells, ensure_ascii=False, separators=(",", ":"))


def _sent_text(result: dict[str, Any]) -> str:
    """The text whose count the result's `tokens` is."""
    file = result["file"]
    if result["type"] == "notebook":
        return _cells_text(file)
    if result["type"] == "parts":
        return json.dumps(file, ensure_ascii=False, separators=(",", ":"))
    return str(file["content"])


def _cases() -> list[tuple[str, str, Callable[[Path], None], dict[str, Any]]]:
    cells = [f"step_{i} = compute({i}, factor={i * 31 % 97})\nprint(step_{i})\n" for i in range(60)]
    return [
        ("notebook, every output kind", "all.ipynb",
         lambda ws: (ws / "all.ipynb").write_text(json.dumps(every_output_notebook())), {}),
        ("notebook, papermill test_logging", "log.ipynb",
         lambda ws: shutil.copy(papermill_notebooks() / "test_logging.ipynb", ws / "log.ipynb"),
         {}),
        ("notebook, 60 code cells", "code.ipynb",
         lambda ws: (ws / "code.ipynb").write_text(code_notebook(cells)), {"limit": 60}),
        ("PDF, 3 pages of text", "three.pdf",
         lambda ws: (ws / "three.pdf").write_bytes(numbered_pdf(3, lines=30)), {}),
        ("PDF, pages 1-20 of 40", "forty.pdf",
         lambda ws: (ws / "forty.pdf").write_bytes(numbered_pdf(40, lines=30)), {"pages": "1-20"}),
        ("PDF, 2 pages rendered (parts)", "two.pdf",
         lambda ws: (ws / "two.pdf").write_bytes(numbered_pdf(2, lines=10)),
         {"pages": "1-2", "render": True}),
    ]  # fmt: skip


def _time_us(work: Callable[[], object], rounds: int) -> list[float]:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        work()
        samples.append((time.perf_counter() - start) * 1e6)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--output", type=Path, default=HERE / "results" / "exact_kinds.json")
    args = parser.parse_args()
    report: dict[str, Any] = {"benchmark": "exact_kinds", "machine": machine(), "rows": {}}
    head = f"{'row':34} {'chars':>7} {'estimate us':>12} {'count us':>9} {'extra us':>9}"
    print(f"{head} {'read ms':>8} {'tokens':>7} {'bytes/4':>8} {'as sent us':>10}")
    workspace = Path(tempfile.mkdtemp(prefix="rk-exact-")).resolve()
    try:
        core = Readkeeper(roots=[str(workspace)])
        core.tokens.warm_up()
        for row, name, make, params in _cases():
            make(workspace)
            read = ReadParams(file_path=str(workspace / name), force=True, **params)
            result = unstructure(core.read(read))  # the PDF worker starts, imports done
            text = _sent_text(result)
            estimate = summarize(_time_us(partial(estimate_tokens, text), args.rounds * 4))
            count = summarize(_time_us(partial(core.tokens.count, text), args.rounds * 4))
            reads = summarize([us / 1000 for us in _time_us(partial(core.read, read), args.rounds)])
            tokens = int(result["file"]["tokens"])
            extra = count["p50_ms"] - estimate["p50_ms"]
            sent = None
            if recounted is not None:
                again = partial(recounted, result, core.tokens.count)
                sent = summarize(_time_us(again, args.rounds * 4))
            print(
                f"{row:34} {len(text):>7,} {estimate['p50_ms']:>12.1f} {count['p50_ms']:>9.1f} "
                f"{extra:>9.1f} {reads['p50_ms']:>8.2f} {tokens:>7,} {estimate_tokens(text):>8,} "
                f"{sent['p50_ms'] if sent else float('nan'):>10.1f}"
            )
            report["rows"][row] = {
                "chars": len(text),
                "estimate_us": estimate,
                "count_us": count,
                "read_ms": reads,
                "tokens": tokens,
                "bytes_over_4": estimate_tokens(text),
                "as_sent_us": sent,
            }
        core.close()
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
    write_json(args.output, report)
    print(f"figures: {args.output}")


if __name__ == "__main__":
    main()
