"""Benchmark images of extreme shape: peak memory and time of `readkeeper read` of each.

Run it as `.venv/bin/python bench/bench_image_shapes.py` (about a minute once fixed;
several before, when the tall pictures were decoded). Each shape is read by a fresh CLI
process; its peak RSS is its own (tests/peak_rss.py). It prints a table and
writes `bench/results/image_shapes.json`; `--label before` names the run, so two runs
(before and after a change) can be compared. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from image_bombs import bmp_rle_padded, bmp_rle_rows, png_bomb, tiff_bomb  # noqa: E402
from peak_rss import run_with_peak  # noqa: E402

from common import clean_env, machine, write_json  # noqa: E402

SHAPES = {
    "square 13,341^2 grey PNG": lambda: png_bomb(13_341, 13_341, grey=True),
    "1 x 178M grey PNG": lambda: png_bomb(1, 178_000_000, grey=True),
    "178M x 1 grey PNG": lambda: png_bomb(178_000_000, 1, grey=True),
    "2 x 89M grey PNG": lambda: png_bomb(2, 89_000_000, grey=True),
    "1 x 20M grey PNG (fits)": lambda: png_bomb(1, 20_000_000, grey=True),
    "1 x 178M RLE BMP": lambda: bmp_rle_rows(1, 178_000_000),
    "700,000 x 1 RLE BMP, 255-row delta": lambda: bmp_rle_rows(700_000, 1, overrun=True),
    "20,000 x 2,800 RLE BMP, 1-pixel rows": lambda: bmp_rle_padded(20_000, 2_800),
    "1 x 59M RGB TIFF": lambda: tiff_bomb(1, 59_000_000),
    "16 x 16 TIFF, 10,000^2 tile": lambda: tiff_bomb(16, 16, tile=10_000),
}


def read_once(folder: Path, name: str) -> dict[str, Any]:
    env = clean_env()
    env["XDG_RUNTIME_DIR"] = str(folder)
    started = time.perf_counter()
    argv = [sys.executable, "-m", "readkeeper", "read", name, "--json"]
    out, peak = run_with_peak(argv, folder, env)
    seconds = time.perf_counter() - started
    answer = json.loads(out)
    if "error" in answer:
        outcome = answer["error"]["data"]["kind"]
    else:
        dims = answer["file"]["dimensions"]
        outcome = f"shown at {dims['display_width']}x{dims['display_height']}"
    return {"peak_rss_mb": round(peak), "seconds": seconds, "outcome": outcome}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", default="after")
    args = parser.parse_args()
    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="rk-shapes-") as tmp:
        folder = Path(tmp)
        os.chmod(folder, 0o700)
        print(f"{'shape':38} {'file KB':>8} {'peak MB':>8} {'s':>6}  outcome")
        for label, make in SHAPES.items():
            data = make()
            name = "picture." + label.split()[-1].lower().strip("()").replace("fits", "png")
            (folder / name).write_bytes(data)
            row = {"file_kb": len(data) // 1024, **read_once(folder, name)}
            rows[label] = row
            print(
                f"{label:38} {row['file_kb']:>8,} {row['peak_rss_mb']:>8,} "
                f"{row['seconds']:>6.1f}  {row['outcome']}"
            )
    write_json(
        HERE / "results" / f"image_shapes-{args.label}.json",
        {"machine": machine(), "label": args.label, "shapes": rows},
    )


if __name__ == "__main__":
    main()
