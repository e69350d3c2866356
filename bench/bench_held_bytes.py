"""Peak and after RSS of `readkeeper mcp` while N reads of a ~95 MB document run at once
(files/held_bytes.py). Attack round 12's attempt 7, as a bench: a notebook of 95 MB of
stream output and a 16 x 16 PNG followed by 95 MB, hard-linked N times, read with
`force` by N concurrent `read` calls over the SDK's stdio client.

    python bench/bench_held_bytes.py [--python A ...]   # each interpreter in turn, A/B

Prints one row per (python, kind, N): the server's VmHWM and VmRSS after, in MB, the
answers' kinds, and `stats.file_bytes` when the server has it; writes
bench/results/held_bytes.json.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

from common import machine, proc_status, scratch, write_json

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from peak_rss import mcp_server_pid

MB = 1 << 20


def make(kind: str, folder: Path, n: int) -> str:
    ext = "png" if kind == "png" else "ipynb"
    first = folder / f"big0.{ext}"
    if kind == "png":
        from PIL import Image

        picture = io.BytesIO()
        Image.new("RGB", (16, 16)).save(picture, "PNG")
        first.write_bytes(picture.getvalue() + os.urandom(MB) * 95)
    else:
        text = ["y" * 1000 + "\n"] * 95_000
        output = {"output_type": "stream", "name": "stdout", "text": text}
        cell = {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": ["x"]}
        notebook = {"cells": [{**cell, "outputs": [output]}], "metadata": {}}
        first.write_text(json.dumps({**notebook, "nbformat": 4, "nbformat_minor": 5}))
    for i in range(1, n):
        os.link(first, folder / f"big{i}.{ext}")
    return ext


async def one(python: str, kind: str, n: int) -> dict[str, Any]:
    with scratch("held-bytes-") as (folder, _log):
        ext = make(kind, folder, n)
        env = {k: v for k, v in os.environ.items() if not k.startswith("READKEEPER_")}
        args = ["-m", "readkeeper", "mcp", "--standalone", "--root", str(folder)]
        params = StdioServerParameters(command=python, args=args, env=env, cwd=folder)
        async with Client(params, read_timeout_seconds=300) as client:
            pid = mcp_server_pid(folder)
            await client.call_tool("stats", {})
            answers = await asyncio.gather(
                *(
                    client.call_tool("read", {"file_path": f"big{i}.{ext}", "force": True})
                    for i in range(n)
                )
            )
            stats = (await client.call_tool("stats", {})).structured_content or {}
            memory = proc_status(pid)
        kinds = ["error" if a.is_error else "ok" for a in answers]
        return {
            "python": python,
            "kind": kind,
            "n": n,
            "peak_mb": round(memory["VmHWM"]),
            "after_mb": round(memory["VmRSS"]),
            "answers": {k: kinds.count(k) for k in sorted(set(kinds))},
            "file_bytes": stats.get("file_bytes"),
        }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", action="append", default=None)
    parser.add_argument("--n", type=int, action="append", default=None)
    parser.add_argument("--kind", action="append", default=None)
    options = parser.parse_args()
    rows = []
    for kind in options.kind or ["ipynb", "png"]:
        for n in options.n or [1, 4, 8]:
            for python in options.python or [sys.executable]:  # interleaved A/B
                row = asyncio.run(one(python, kind, n))
                rows.append(row)
                held = row["file_bytes"] or {}
                print(
                    f"{kind:5} N={n} peak {row['peak_mb']:5} MB after {row['after_mb']:5} MB "
                    f"{row['answers']} peak_calls={held.get('peak_calls', '-')} "
                    f"waited={held.get('waited', '-')} refused={held.get('refused', '-')} "
                    f"[{python}]",
                    flush=True,
                )
    out = Path(__file__).parent / "results" / "held_bytes.json"
    write_json(out, {"machine": machine(), "rows": rows})


if __name__ == "__main__":
    main()
