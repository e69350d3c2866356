"""`readkeeper mcp` from spawn to its first answer, beside the MCP filesystem server
(issue 34).

Run it as `.venv/bin/python bench/bench_start.py`. Each round starts, in turn:

- **readkeeper, handshake**: `readkeeper mcp --standalone` sent `initialize` (2025-06-18,
  what clients send today) and, on a server of its own, `server/discover` (2026-07-28,
  what the SDK's own client sends): answered while the SDK loads (mcp/early.py);
- **readkeeper, the SDK's first answer**: the same server sent a `ping` first, which
  only the SDK answers (and after which it answers everything): what a client waited
  for before issue 34;
- **peer**: the filesystem server sent `initialize`.

Each figure is milliseconds from spawning the process to the first reply line, the
median of `--starts` starts per round; the table shows the median of the rounds and
the ratio to the peer. Figures go to `bench/results/start.json`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from common import clean_env, compile_like_an_install, filesystem_server, machine, scratch
from common import write_json as write_results

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "start.json"
INFO = {"name": "bench", "version": "1"}
HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": INFO}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": INFO,
    "io.modelcontextprotocol/clientCapabilities": {},
}


def request(method: str, params: dict[str, Any], msg_id: int = 1) -> bytes:
    message = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
    return json.dumps(message).encode() + b"\n"


def first_reply_ms(argv: list[str], first: bytes) -> float:
    """Milliseconds from spawning `argv` to its first reply line to `first`."""
    started = time.perf_counter()
    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=clean_env(),
    )
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(first)
    process.stdin.flush()
    line = process.stdout.readline()
    elapsed = (time.perf_counter() - started) * 1000
    if b'"id"' not in line:
        raise RuntimeError(f"{argv[:4]} answered {line[:200]!r}")
    process.stdin.close()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds (the table: medians)")
    parser.add_argument("--starts", type=int, default=5, help="starts of each per round")
    parser.add_argument("--output", type=Path, default=RESULTS, help="JSON results file")
    args = parser.parse_args()
    peer = filesystem_server()
    if peer is None:
        return 1
    compile_like_an_install()
    rounds: list[dict[str, float]] = []
    with scratch("rk-bench-start-") as (root, _log):
        mine = [sys.executable, "-m", "readkeeper", "mcp", "--standalone", "--root", str(root)]
        rows = {
            "readkeeper, initialize": (mine, request("initialize", HELLO)),
            "readkeeper, server/discover": (
                mine,
                request("server/discover", {"_meta": MODERN_META}),
            ),
            "readkeeper, the SDK's first answer": (mine, request("ping", {}, 0)),
            "peer, initialize": ([*peer, str(root)], request("initialize", HELLO)),
        }
        for number in range(args.rounds):
            print(f"round {number + 1} of {args.rounds} ...", file=sys.stderr)
            samples: dict[str, list[float]] = {name: [] for name in rows}
            for _ in range(args.starts):
                for name, (argv, first) in rows.items():  # interleaved
                    samples[name].append(first_reply_ms(argv, first))
            rounds.append({name: statistics.median(ms) for name, ms in samples.items()})
    peer_row = "peer, initialize"
    print(f"spawn to first answer: ms, median of {args.rounds} rounds of {args.starts} starts")
    print(f"{'row':<38}{'ms':>9}{'/ peer':>9}   per round")
    table = {}
    for name in rows:
        ms = statistics.median(r[name] for r in rounds)
        ratio = statistics.median(r[name] / r[peer_row] for r in rounds)
        per_round = " ".join(f"{r[name]:.0f}" for r in rounds)
        print(f"{name:<38}{ms:>9.0f}{ratio:>8.2f}x   {per_round}")
        table[name] = {"ms": ms, "ratio": ratio}
    report = {"benchmark": "start", "machine": machine(), "medians": table, "rounds": rounds}
    write_results(args.output, report)
    print(f"written to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
