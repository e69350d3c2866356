"""The small rows of bench_peer.py again, with a client that costs nothing: JSON-RPC lines
written to each server's stdin and its answers read back, no SDK in between.

Run it as `.venv/bin/python bench/bench_raw_peer.py`. bench_peer.py drives both servers
with the `mcp` SDK's own client, whose work on each answer (parsing it into its models,
checking `structuredContent` against the tool's output schema) is counted in every row;
readkeeper's answers carry structured content, the filesystem server's do not, so that
client spends more on readkeeper's. Here the time is the servers' own: from writing a
`tools/call` line to reading its answer, the median of `--calls` calls after a warm-up,
per round, alternating the servers. No target is asserted. Results:
`bench/results/raw_peer.json`.
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

from bench_read import python_like_source
from common import clean_env, filesystem_server, machine, scratch, write_json

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "raw_peer.json"
WARM_UP = 50


def timed_calls(argv: list[str], tool: str, arguments: dict[str, Any], calls: int) -> float:
    """The median milliseconds of `calls` calls of `tool` (after WARM_UP), one at a time."""
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env=clean_env(),
    )  # fmt: skip
    assert proc.stdin is not None
    assert proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    def send(message: dict[str, Any]) -> None:
        stdin.write(json.dumps(message).encode() + b"\n")
        stdin.flush()

    def answer() -> dict[str, Any]:
        while True:  # notifications (logging, progress) are passed over
            message: dict[str, Any] = json.loads(stdout.readline())
            if "id" in message:
                return message

    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw"}}
    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello})
    answer()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    times = []
    try:
        for number in range(1, WARM_UP + calls + 1):
            params = {"name": tool, "arguments": arguments}
            started = time.perf_counter()
            send({"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params})
            reply = answer()
            times.append((time.perf_counter() - started) * 1000)
            if "result" not in reply or reply["result"].get("isError"):
                raise RuntimeError(f"{tool} {arguments} failed: {reply}")
    finally:
        stdin.close()
        proc.wait(timeout=30)
    return statistics.median(times[WARM_UP:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    peer = filesystem_server()
    if peer is None:
        return 1
    with scratch("rk-bench-raw-peer-") as (root, _log):
        small = root / "small.py"
        small.write_text("".join(f"value_{i} = {i} * 2  # line {i}\n" for i in range(10)))
        log = root / "app.log"
        text = python_like_source(8, 26_000)
        log.write_text(text)
        last = text.count("\n") - 99
        mine = [sys.executable, "-m", "readkeeper", "mcp", "--standalone", "--root", str(root)]
        theirs = [*peer, str(root)]
        rows = {
            "10-line file": (
                ("read", {"file_path": str(small), "force": True}),
                ("read_text_file", {"path": str(small)}),
            ),
            "last 100 lines of a 1 MB file": (
                ("read", {"file_path": str(log), "offset": last, "limit": 100, "force": True}),
                ("read_text_file", {"path": str(log), "tail": 100}),
            ),
            "  the same again (readkeeper: its stub)": (
                ("read", {"file_path": str(log), "offset": last, "limit": 100}),
                ("read_text_file", {"path": str(log), "tail": 100}),
            ),
        }
        rounds: list[dict[str, dict[str, float]]] = []
        for number in range(args.rounds):
            print(f"round {number + 1} of {args.rounds} ...", file=sys.stderr)
            figures = {}
            for row, ((tool, arguments), (peer_tool, peer_arguments)) in rows.items():
                a = timed_calls(mine, tool, arguments, args.calls)
                b = timed_calls(theirs, peer_tool, peer_arguments, args.calls)
                figures[row] = {"readkeeper_ms": a, "peer_ms": b, "ratio": a / b}
            rounds.append(figures)
    print(f"readkeeper / MCP filesystem server, raw stdio client: p50 ms, median of {args.rounds}")
    print(f"{'row':<42}{'readkeeper':>11}{'peer':>9}{'ratio':>8}")
    table = {}
    for row in rows:
        medians = {k: statistics.median(r[row][k] for r in rounds) for k in rounds[0][row]}
        table[row] = medians
        print(
            f"{row:<42}{medians['readkeeper_ms']:>11.3f}{medians['peer_ms']:>9.3f}"
            f"{medians['ratio']:>7.2f}x"
        )
    write_json(
        args.output,
        {"benchmark": "raw_peer", "machine": machine(), "medians": table, "rounds": rounds},
    )
    print(f"written to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
