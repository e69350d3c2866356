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

The first-read rows are bench_peer.py's, on its files (`real_modules("stdlib")`, its
slice per round): a read with the default parameters of each of `--first` never-read
modules (an outline for most), and a read with `force` of as many others, each file
read once (the median of the reads), by a server of its own that has made
`WARM_UP` forced reads of a small file first (the token table loaded). Each side
reads copies of its own, and readkeeper's user cache is a new folder of the run's, so
no read finds the outline or the count of an earlier one. Beside bench_peer.py's rows
of the same files, the difference is what the SDK client spends on each answer.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_peer import copies, real_modules
from bench_read import python_like_source
from common import (
    clean_env,
    compile_like_an_install,
    filesystem_server,
    machine,
    scratch,
    write_json,
)

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "raw_peer.json"
WARM_UP = 50
FIRST_ROWS = ("first read, stdlib module", "first read, stdlib module, force")

Call = tuple[str, dict[str, Any]]


def timed_calls(
    argv: list[str], env: dict[str, str], warm_up: list[Call], timed: list[Call]
) -> float:
    """The median milliseconds of the `timed` calls, made one at a time after `warm_up`."""
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env=env,
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
        for number, (tool, arguments) in enumerate([*warm_up, *timed], 1):
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
    return statistics.median(times[len(warm_up) :])


def first_reads(root: Path, side: str, number: int, count: int) -> dict[str, list[Call]]:
    """The first-read rows' calls of `side` in round `number`: bench_peer.py's modules,
    copied into a folder of this side's."""
    modules = real_modules("stdlib")[number * 2 * count : (number + 1) * 2 * count]
    if len(modules) < 2 * count:
        raise SystemExit("not enough stdlib modules for these --rounds of --first")
    default = copies(root / f"{side}-{number}" / "default", modules[:count])
    forced = copies(root / f"{side}-{number}" / "force", modules[count:])
    if side == "readkeeper":
        return {
            FIRST_ROWS[0]: [("read", {"file_path": str(p)}) for p in default],
            FIRST_ROWS[1]: [("read", {"file_path": str(p), "force": True}) for p in forced],
        }
    return {
        FIRST_ROWS[0]: [("read_text_file", {"path": str(p)}) for p in default],
        FIRST_ROWS[1]: [("read_text_file", {"path": str(p)}) for p in forced],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--first", type=int, default=15, help="never-read files per row")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    peer = filesystem_server()
    if peer is None:
        return 1
    compile_like_an_install()
    with (
        scratch("rk-bench-raw-peer-") as (root, _log),
        tempfile.TemporaryDirectory(prefix="rk-bench-raw-peer-cache-") as cache,
    ):
        # readkeeper's user cache: the run's own, never the user's (nor an earlier run's)
        env = {**clean_env(), "XDG_CACHE_HOME": cache}
        small = root / "small.py"
        small.write_text("".join(f"value_{i} = {i} * 2  # line {i}\n" for i in range(10)))
        log = root / "app.log"
        text = python_like_source(8, 26_000)
        log.write_text(text)
        last = text.count("\n") - 99
        mine = [sys.executable, "-m", "readkeeper", "mcp", "--standalone", "--root", str(root)]
        theirs = [*peer, str(root)]
        warm = ("read", {"file_path": str(small), "force": True})
        peer_warm = ("read_text_file", {"path": str(small)})
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
            firsts = {
                side: first_reads(root, side, number, args.first) for side in ("readkeeper", "peer")
            }
            for row in FIRST_ROWS:
                a = timed_calls(mine, env, [warm] * WARM_UP, firsts["readkeeper"][row])
                b = timed_calls(theirs, env, [peer_warm] * WARM_UP, firsts["peer"][row])
                figures[row] = {"readkeeper_ms": a, "peer_ms": b, "ratio": a / b}
            for row, (call, peer_call) in rows.items():
                a = timed_calls(mine, env, [call] * WARM_UP, [call] * args.calls)
                b = timed_calls(theirs, env, [peer_call] * WARM_UP, [peer_call] * args.calls)
                figures[row] = {"readkeeper_ms": a, "peer_ms": b, "ratio": a / b}
            rounds.append(figures)
    print(f"readkeeper / MCP filesystem server, raw stdio client: p50 ms, median of {args.rounds}")
    print(f"{'row':<42}{'readkeeper':>11}{'peer':>9}{'ratio':>8}")
    table = {}
    for row in (*FIRST_ROWS, *rows):
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
