"""Peak RSS of `readkeeper mcp` reading a damaged notebook as its text (read/damaged.py),
beside a valid notebook of the same size read as cells.

    python bench/bench_damaged_notebook.py [--sizes 10 70] [--runs 3]

`--sizes` are nominal: the notebooks come out about 1.45 times larger (14 and 104 MB,
the cells indented inside the list); the table shows the file's own size.

Each row is one fresh server per run: its VmHWM after `stats` (the baseline), then after
one `read` of lines 1-5 (a damaged notebook) or cells 1-5 (a valid one); the growth is
the difference. The notebook is cells of short source lines, saved indented as Jupyter
saves them; "trailing" is damaged by a merge marker after its end (the JSON breaks last,
so a parser has read all of it), "early" by one in its first lines. Prints a table of
medians and writes bench/results/damaged_notebook.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

from common import machine, proc_status, scratch, write_json

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from peak_rss import mcp_server_pid

MB = 1 << 20
MARKER = "<<<<<<< HEAD\n"


def notebook(size_mb: int) -> str:
    cell = {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": []}
    one = len(json.dumps({**cell, "id": "c0", "source": ["x = 1\n"] * 20}, indent=1))
    count = size_mb * MB // one
    cells = [{**cell, "id": f"c{i}", "source": [f"x = {i}\n"] * 20} for i in range(count)]
    body = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(body, indent=1) + "\n"


def damaged(text: str, how: str) -> str:
    if how == "trailing":
        return text + MARKER
    if how == "early":
        return text.replace("{\n", "{\n" + MARKER, 1)
    return text


async def one(python: str, path: Path, folder: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("READKEEPER_")}
    args = ["-m", "readkeeper", "mcp", "--standalone", "--root", str(folder)]
    params = StdioServerParameters(command=python, args=args, env=env, cwd=folder)
    async with Client(params, read_timeout_seconds=600) as client:
        pid = mcp_server_pid(folder)
        await client.call_tool("stats", {})
        before = proc_status(pid)
        answer = await client.call_tool("read", {"file_path": str(path), "limit": 5})
        after = proc_status(pid)
    kind = "error" if answer.is_error else (answer.structured_content or {}).get("type")
    return {"base_mb": before["VmHWM"], "peak_mb": after["VmHWM"], "answer": kind}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 70])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--python", default=sys.executable)
    options = parser.parse_args()
    rows = []
    print(f"{'MB':>5} {'notebook':9} {'answer':8} {'base MB':>8} {'peak MB':>8} {'growth':>7}")
    for size in options.sizes:
        good = notebook(size)
        for how in ("valid", "trailing", "early"):
            samples = []
            with scratch("damaged-nb-") as (folder, _log):
                path = folder / "nb.ipynb"
                path.write_text(damaged(good, how))
                size_bytes = path.stat().st_size
                for _ in range(options.runs):
                    samples.append(asyncio.run(one(options.python, path, folder)))
            row = {
                "size_mb": size,
                "bytes": size_bytes,
                "notebook": how,
                "answer": samples[0]["answer"],
                "base_mb": statistics.median(s["base_mb"] for s in samples),
                "peak_mb": statistics.median(s["peak_mb"] for s in samples),
                "growth_mb": statistics.median(s["peak_mb"] - s["base_mb"] for s in samples),
                "samples": samples,
            }
            rows.append(row)
            print(
                f"{size_bytes / MB:>5.0f} {how:9} {row['answer']!s:8} {row['base_mb']:>8.0f} "
                f"{row['peak_mb']:>8.0f} {row['growth_mb']:>7.0f}",
                flush=True,
            )
    out = Path(__file__).parent / "results" / "damaged_notebook.json"
    write_json(out, {"machine": machine(), "runs": options.runs, "rows": rows})


if __name__ == "__main__":
    main()
