"""Benchmark images whose cost grows with their structure, not their pixels: time and CPU
of `readkeeper read` of each (a fresh CLI process per file).

Run it as `.venv/bin/python bench/bench_image_structure.py [--mb 10] [--label after]`
(seconds once fixed; a few minutes before, when Pillow walked every chunk, block and
marker). It prints a table and writes `bench/results/image_structure-LABEL.json`, so a
`--label before` run can be compared with an `after` one. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from image_structure import (  # noqa: E402
    bmp_rle_idle,
    gif_frames,
    gif_long_extension,
    jpeg_stray_bytes,
    png_ancillary_flood,
    png_idat_flood,
    png_profiles,
)

from common import clean_env, machine, write_json  # noqa: E402


def shapes(mb: int) -> dict[str, tuple[str, Callable[[], bytes]]]:
    """Each file about `mb` MB: (its name, how to make it)."""
    size = mb << 20
    return {
        "PNG, 1 IDAT then empty IDATs": ("idat.png", lambda: png_idat_flood(size // 12)),
        "PNG, empty private chunks": ("ancillary.png", lambda: png_ancillary_flood(size // 12)),
        "PNG, 1 KB iCCP chunks of 1 MB": ("iccp.png", lambda: png_profiles(size // 1_100)),
        "GIF, one-pixel frames": ("frames.gif", lambda: gif_frames(size // 24)),
        "GIF, 1-byte comment blocks": ("comment.gif", lambda: gif_long_extension(size // 2)),
        "JPEG, stray bytes": ("stray.jpg", lambda: jpeg_stray_bytes(size)),
        "BMP, idle RLE commands": ("idle.bmp", lambda: bmp_rle_idle(size // 2)),
    }


def read_once(folder: Path, name: str) -> dict[str, Any]:
    env = clean_env()
    env["XDG_RUNTIME_DIR"] = str(folder)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    argv = [sys.executable, "-m", "readkeeper", "read", name, "--json"]
    done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, check=False)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    try:
        answer = json.loads(done.stdout)
    except ValueError:  # not an answer: the process failed
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:]
        return {"seconds": seconds, "cpu_seconds": cpu, "outcome": f"failed: {tail}"}
    if "error" in answer:
        outcome = answer["error"]["data"]["kind"]
    else:
        outcome = (answer["file"].get("note") or "shown")[:60]
    return {"seconds": seconds, "cpu_seconds": cpu, "outcome": outcome}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=10)
    parser.add_argument("--label", default="after")
    args = parser.parse_args()
    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="rk-structure-") as tmp:
        folder = Path(tmp)
        os.chmod(folder, 0o700)
        print(f"{'file':32} {'MB':>4} {'s':>6} {'cpu s':>6}  outcome")
        for label, (name, make) in shapes(args.mb).items():
            data = make()
            (folder / name).write_bytes(data)
            row = {"file_mb": round(len(data) / (1 << 20), 1), **read_once(folder, name)}
            rows[label] = row
            (folder / name).unlink()
            print(
                f"{label:32} {row['file_mb']:>4} {row['seconds']:>6.1f} "
                f"{row['cpu_seconds']:>6.1f}  {row['outcome']}"
            )
    write_json(
        HERE / "results" / f"image_structure-{args.label}.json",
        {"machine": machine(), "label": args.label, "mb": args.mb, "files": rows},
    )


if __name__ == "__main__":
    main()
