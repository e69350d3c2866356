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

The think row reads `--first` other never-read modules (from the end of the list, those
of at most `ahead.MAX_BYTES`: the larger are never made ahead, and a median of both
kinds falls on either), all in one folder, in the order they were copied, each after
`THINK_SECONDS` without a call (an agent's turn; the same pause for both servers, not
timed): what readkeeper's reads ahead (read/ahead.py) give when there is time for them.
They stay off on a machine whose load per core is over `ahead.BUSY_LOAD`: the run says
whether it was, and `--whatever-the-load` starts readkeeper with that check off (what
they give on an idle machine, measured on a loaded one; every row then runs so) and
adds the think row with the reads ahead off (`READKEEPER_READ_AHEAD=false`), on the
same files, after it in each round, with a user cache folder of its own.
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
from readkeeper.read import ahead

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "raw_peer.json"
WARM_UP = 50
THINK_SECONDS = 0.3
# `python -m readkeeper` with the reads ahead on whatever the machine's load.
ANY_LOAD = (
    "import sys; from readkeeper.read import ahead; ahead.BUSY_LOAD = float('inf'); "
    "from readkeeper.cli import main; sys.argv[0] = 'readkeeper'; raise SystemExit(main())"
)
THINK_ROW = "first read after a 300 ms think, 30-64 KB"
OFF_ROW = "  the same, reads ahead off"
FIRST_ROWS = ("first read, stdlib module", "first read, stdlib module, force", THINK_ROW)

Call = tuple[str, dict[str, Any]]


def timed_calls(
    argv: list[str], env: dict[str, str], warm_up: list[Call], timed: list[Call], think: float = 0
) -> float:
    """The median milliseconds of the `timed` calls, made one at a time after `warm_up`,
    each `think` seconds after the answer before it."""
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
            if think and number > len(warm_up):
                time.sleep(think)
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
    made = [m for m in real_modules("stdlib")[::-1] if m.stat().st_size <= ahead.MAX_BYTES]
    others = made[number * count : (number + 1) * count]
    default = copies(root / f"{side}-{number}" / "default", modules[:count])
    forced = copies(root / f"{side}-{number}" / "force", modules[count:])
    thought = copies(root / f"{side}-{number}" / "think", others)
    if side.startswith("readkeeper"):
        return {
            FIRST_ROWS[0]: [("read", {"file_path": str(p)}) for p in default],
            FIRST_ROWS[1]: [("read", {"file_path": str(p), "force": True}) for p in forced],
            THINK_ROW: [("read", {"file_path": str(p)}) for p in thought],
        }
    return {
        FIRST_ROWS[0]: [("read_text_file", {"path": str(p)}) for p in default],
        FIRST_ROWS[1]: [("read_text_file", {"path": str(p)}) for p in forced],
        THINK_ROW: [("read_text_file", {"path": str(p)}) for p in thought],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--first", type=int, default=15, help="never-read files per row")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument(
        "--whatever-the-load", action="store_true", help="reads ahead on at any load"
    )
    args = parser.parse_args()
    peer = filesystem_server()
    if peer is None:
        return 1
    compile_like_an_install()
    busy = [ahead.machine_busy()]
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
        if args.whatever_the_load:
            mine[1:3] = ["-c", ANY_LOAD]
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
                think = THINK_SECONDS if row == THINK_ROW else 0
                a = timed_calls(mine, env, [warm] * WARM_UP, firsts["readkeeper"][row], think)
                b = timed_calls(theirs, env, [peer_warm] * WARM_UP, firsts["peer"][row], think)
                figures[row] = {"readkeeper_ms": a, "peer_ms": b, "ratio": a / b}
            if args.whatever_the_load:
                calls = first_reads(root, "readkeeper-off", number, args.first)[THINK_ROW]
                # A cache folder of its own: the row before left these modules' outlines
                # and counts in the run's.
                fresh = tempfile.mkdtemp(prefix="off-", dir=cache)
                off = {**env, "READKEEPER_READ_AHEAD": "false", "XDG_CACHE_HOME": fresh}
                a = timed_calls(mine, off, [warm] * WARM_UP, calls, THINK_SECONDS)
                b = figures[THINK_ROW]["peer_ms"]
                figures[OFF_ROW] = {"readkeeper_ms": a, "peer_ms": b, "ratio": a / b}
            for row, (call, peer_call) in rows.items():
                a = timed_calls(mine, env, [call] * WARM_UP, [call] * args.calls)
                b = timed_calls(theirs, env, [peer_call] * WARM_UP, [peer_call] * args.calls)
                figures[row] = {"readkeeper_ms": a, "peer_ms": b, "ratio": a / b}
            rounds.append(figures)
            busy.append(ahead.machine_busy())
    print(f"readkeeper / MCP filesystem server, raw stdio client: p50 ms, median of {args.rounds}")
    print(f"{'row':<42}{'readkeeper':>11}{'peer':>9}{'ratio':>8}")
    table = {}
    for row in (*FIRST_ROWS, *([OFF_ROW] if args.whatever_the_load else []), *rows):
        medians = {k: statistics.median(r[row][k] for r in rounds) for k in rounds[0][row]}
        table[row] = medians
        print(
            f"{row:<42}{medians['readkeeper_ms']:>11.3f}{medians['peer_ms']:>9.3f}"
            f"{medians['ratio']:>7.2f}x"
        )
    if any(busy):
        print(
            f"The load per core was over {ahead.BUSY_LOAD} (reads ahead off) at {busy.count(True)}"
            f" of {len(busy)} checks (the start and each round's end)."
        )
    report = {"medians": table, "rounds": rounds, "busy": busy}
    report["whatever_the_load"] = args.whatever_the_load
    write_json(args.output, {"benchmark": "raw_peer", "machine": machine(), **report})
    print(f"written to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
