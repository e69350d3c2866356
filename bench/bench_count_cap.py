"""Reads over the token cap that count only as far as the cap decides (read/within.py):
a PDF of twenty long pages, one PDF page about 40 times the cap, and a notebook cell
about 20 times it.

Run it as `.venv/bin/python bench/bench_count_cap.py` (under a minute). It prints a
table and writes the figures to `bench/results/count_cap.json`. Each row is a forced
read in this process (`Readkeeper.read`, the PDF worker already started): the
characters the token counter was given (what the count costs), and the read's p50.
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import machine, summarize, write_json
from readkeeper.core import Readkeeper
from readkeeper.protocol import ReadParams

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from document_samples import code_notebook, page_text, text_pdf  # noqa: E402


class CountedChars:
    """The core's encoding, adding up the characters it is asked to count."""

    def __init__(self, core: Readkeeper) -> None:
        core.tokens.warm_up()
        self._original: Any = core.tokens._encoding
        core.tokens._encoding = self
        self.chars = 0

    def encode_ordinary(self, text: str) -> list[int]:
        self.chars += len(text)
        result: list[int] = self._original.encode_ordinary(text)
        return result


def _cases() -> list[tuple[str, str, Callable[[Path], None], int, str | None]]:
    pages = [page_text(n, lines=120) for n in range(1, 21)]
    dense = page_text(1, lines=2000)
    cell = "".join(f"value_{i} = {i * 7919 % 100_003}  # entry {i}\n" for i in range(8000))
    return [
        ("PDF, 20 pages, 3,000-token cap", "long.pdf",
         lambda ws: (ws / "long.pdf").write_bytes(text_pdf(pages)), 3000, "1-20"),
        ("PDF page ~40x a 1,000-token cap", "dense.pdf",
         lambda ws: (ws / "dense.pdf").write_bytes(text_pdf([dense])), 1000, None),
        ("notebook cell ~20x a 3,000-token cap", "big.ipynb",
         lambda ws: (ws / "big.ipynb").write_text(code_notebook([cell, "x = 1\n"])), 3000, None),
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--output", type=Path, default=HERE / "results" / "count_cap.json")
    args = parser.parse_args()
    report: dict[str, Any] = {"benchmark": "count_cap", "machine": machine(), "rows": {}}
    print(f"{'row':40} {'chars counted':>14} {'p50 ms':>8}")
    for row, name, make, cap, pages in _cases():
        workspace = Path(tempfile.mkdtemp(prefix="rk-cap-")).resolve()
        make(workspace)
        settings = {"max_tokens": cap, "max_size_bytes": 10**7}
        core = Readkeeper(roots=[str(workspace)], client_settings=settings)
        spy = CountedChars(core)
        params = ReadParams(file_path=str(workspace / name), pages=pages, force=True)
        core.read(params)  # the PDF worker starts, the imports are done
        ms, chars = [], 0
        for _ in range(args.rounds):
            spy.chars = 0
            start = time.perf_counter()
            core.read(params)
            ms.append((time.perf_counter() - start) * 1000)
            chars = spy.chars
        core.close()
        figures = {"chars_counted": chars, **summarize(ms, ("p50_ms", "min_ms"))}
        report["rows"][row] = figures
        print(f"{row:40} {chars:>14,} {figures['p50_ms']:>8.1f}")
    write_json(args.output, report)


if __name__ == "__main__":
    main()
