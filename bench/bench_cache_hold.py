"""What holding the user cache's writes during a call gives a first read (issue 34,
files/cache_writes.py), in wall-clock time, paired so that a loaded machine's noise
falls on both sides alike.

Run it as `.venv/bin/python bench/bench_cache_hold.py` (about a minute). In process, the
MCP server's way for a read taken from its stdin line (mcp/quick.py: tried on the event
loop, served on a worker thread when found costly, the reply line made), each standard-
library module of bench_peer.py's selection is read twice as two distinct first reads
(two copies, each with a last line of its own): once with the writes held while the
call is served (as the server does) and once without (`cache_writes.holding` made a
no-op: the writer thread woken by each entry, as before), the order alternating, with
`--gap` seconds after each read (a model's turn, in which the held writes are made).
Prints the medians and means of each side and of the paired differences (without -
with). `--pin` runs the process on one CPU. No target. Results:
`bench/results/cache_hold.json`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from bench_peer import real_modules
from common import machine, write_json

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "cache_hold.json"
VERSION = "2025-06-18"


class _Server:
    """What QuickCalls asks of the SDK's server."""

    def __init__(self) -> None:
        self.cache_hints: dict[str, Any] = {}
        self.server_info_stamp = {"name": "readkeeper", "version": "0"}


def _line(number: int, path: Path, force: bool = False) -> bytes:
    arguments: dict[str, Any] = {"file_path": str(path)}
    if force:
        arguments["force"] = True
    params = {"name": "read", "arguments": arguments}
    message = {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params}
    return orjson.dumps(message)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gap", type=float, default=0.03, help="seconds after each read")
    parser.add_argument("--pin", action="store_true", help="run on one CPU")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.pin and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="rk-bench-hold-cache-")
    os.environ["READKEEPER_READ_AHEAD"] = "false"
    from readkeeper.files import cache_writes
    from readkeeper.mcp.backends import LocalBackend
    from readkeeper.mcp.quick import QuickCalls
    from readkeeper.mcp.server import McpFrontEnd

    root = Path(tempfile.mkdtemp(prefix="rk-bench-hold-"))
    (root / "m").mkdir()
    pairs = []
    for index, module in enumerate(real_modules("stdlib")):
        data = module.read_bytes()
        copies = []
        for copy in "ab":
            path = root / "m" / f"{index:03d}{copy}_{module.name}"
            path.write_bytes(data + f"\n# copy {copy}\n".encode())
            copies.append(path)
        pairs.append(copies)
    warm = root / "warm.py"
    warm.write_text("x = 1\n" * 300)
    front = McpFrontEnd(roots=[str(root)], attach=False)
    backend = LocalBackend([str(root)])
    backend.core.tokens.warm_up()
    front.backend, front.protocol_version = backend, VERSION
    quick = QuickCalls(front, _Server())  # type: ignore[arg-type]
    for number in range(30):
        quick.answer(_line(number, warm, force=True))
    cache_writes.flush()
    holding = cache_writes.holding

    def first_read(path: Path, held: bool, number: int) -> float:
        cache_writes.holding = holding if held else contextlib.nullcontext  # type: ignore[assignment]
        began = time.perf_counter()
        if quick.answer(_line(number, path)) is None:  # costly: on a thread, from its line
            costly, quick._costly = quick._costly, None
            assert costly is not None
            request_id, arguments, served_by, version = costly[1]
            serve = front.on_thread(served_by, "read", arguments)
            with cache_writes.holding():  # until the reply is made, as quick.py holds
                quick._reply(version, request_id, serve())
        took = (time.perf_counter() - began) * 1000
        time.sleep(args.gap)
        return took

    held: list[float] = []
    woken: list[float] = []
    try:
        for index, (first, second) in enumerate(pairs):
            if index % 2:
                held.append(first_read(first, True, 2 * index))
                woken.append(first_read(second, False, 2 * index + 1))
            else:
                woken.append(first_read(first, False, 2 * index))
                held.append(first_read(second, True, 2 * index + 1))
    finally:
        cache_writes.holding = holding  # type: ignore[assignment]
        backend.close()
    differences = [w - h for w, h in zip(woken, held, strict=True)]
    rows = {
        "held (as served)": held,
        "woken by each entry": woken,
        "paired difference": differences,
    }
    table = {
        row: {"p50_ms": statistics.median(v), "mean_ms": statistics.fmean(v)}
        for row, v in rows.items()
    }
    print(f"first reads of {len(pairs)} modules a side, load {os.getloadavg()[0]:.1f}")
    for row, figures in table.items():
        print(f"{row:<24}{figures['p50_ms']:>9.3f} ms p50{figures['mean_ms']:>9.3f} ms mean")
    write_json(
        args.output,
        {"benchmark": "cache_hold", "machine": machine(), "gap_s": args.gap, "rows": table},
    )
    print(f"written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
