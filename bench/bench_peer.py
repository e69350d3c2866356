"""readkeeper beside the MCP filesystem server, over MCP for both (issue 16).

Run it as `.venv/bin/python bench/bench_peer.py`. It prints a table (readkeeper, peer,
ratio = readkeeper / peer, each the median of the rounds' p50s) and writes the figures
of every round to `bench/results/peer.json`. Both servers are driven by the `mcp` SDK's
own client over stdio, on the same files, in the same run, alternately within each
round; the peer is `common.filesystem_server()` (installed with npm into the
git-ignored `bench/.peer/` on first use; without node the script says so and stops).

Rows (readkeeper's call; the peer's):

- **first read, generated**: a read of each of `--first` never-read 2,000-line files
  of `bench_read.python_like_source` (a new server and new files every round), with
  `force` so that both send the lines (without it readkeeper answers a source file this
  big with its outline: `bench_outline.py`); `read_text_file`.
- **first read, stdlib**: the same with the first 2,000 lines of CPython's largest
  standard-library modules (real code shares fewer lines between files than generated
  code does, and readkeeper's token counts are memoized per line).
- **forced re-read**: `read` with `force` of one 2,000-line file; `read_text_file`.
- **10-line file**: `read` with `force`; `read_text_file`.
- **last 100 lines of 1 MB**: `read` with `offset`/`limit` and `force`;
  `read_text_file` with `tail: 100`.
- **... and its stub**: the same `read` without `force` (answered `file_unchanged`);
  the peer has no stub, so the same `tail` read again.
- **edit of 80 KB**: `edit` of one line, back and forth; `edit_file` likewise.
- **start to initialize**: from spawning the server to the answer of MCP's
  `initialize` (the SDK client's connect).

No target is asserted; issue 16's goal for every row is a ratio of at most 1.

Under the two first-read rows, `count alone` is the part of readkeeper's read that no
transport can save: the exact token count of each file's numbered lines (as the read
makes it, with a new counter each round, so its memos are as cold as the server's),
timed in this process, beside the peer's whole round trip.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import sysconfig
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from bench_read import python_like_source
from common import (
    clean_env,
    compile_like_an_install,
    filesystem_server,
    machine,
    scratch,
    summarize,
    write_json,
)
from readkeeper.read.readers.text import split_lines
from readkeeper.read.tokens import TokenCounter
from readkeeper.settings import Settings

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "peer.json"
READKEEPER_MCP = [sys.executable, "-m", "readkeeper", "mcp", "--standalone"]

ROWS = (
    "first read, generated 2,000-line file",
    "first read, stdlib 2,000-line file",
    "forced re-read, 2,000-line file",
    "10-line file",
    "last 100 lines of a 1 MB file",
    "  the same again (readkeeper: its stub)",
    "edit of an 80 KB file",
    "start to initialize answered",
)

# readkeeper's exact count alone, printed under the first-read row it is part of.
COUNT_ROWS = ("  count alone, generated", "  count alone, stdlib")


class Side:
    """One server's calls for each row: (tool, arguments) by what they do."""

    def __init__(self, name: str, argv: list[str]) -> None:
        self.name = name
        self.argv = argv

    def read(self, path: Path) -> tuple[str, dict[str, Any]]:
        if self.name == "readkeeper":
            return "read", {"file_path": str(path)}
        return "read_text_file", {"path": str(path)}

    def forced(self, path: Path) -> tuple[str, dict[str, Any]]:
        if self.name == "readkeeper":
            return "read", {"file_path": str(path), "force": True}
        return self.read(path)

    def tail(self, path: Path, lines: int, total: int, force: bool) -> tuple[str, dict[str, Any]]:
        if self.name == "readkeeper":
            arguments = {"file_path": str(path), "offset": total - lines + 1, "limit": lines}
            return "read", {**arguments, "force": force}
        return "read_text_file", {"path": str(path), "tail": lines}

    def edit(self, path: Path, old: str, new: str) -> tuple[str, dict[str, Any]]:
        if self.name == "readkeeper":
            return "edit", {"file_path": str(path), "old_string": old, "new_string": new}
        return "edit_file", {"path": str(path), "edits": [{"oldText": old, "newText": new}]}


async def timed(client: Client, calls: list[tuple[str, dict[str, Any]]]) -> list[float]:
    """Milliseconds of each call, in order; a tool error stops the run."""
    times = []
    for tool, arguments in calls:
        started = time.perf_counter()
        result = await client.call_tool(tool, arguments)
        times.append((time.perf_counter() - started) * 1000)
        if result.is_error:
            raise RuntimeError(f"{tool} {arguments} failed: {result.content}")
    return times


async def session(
    side: Side, root: Path, work: Callable[[Client], Awaitable[dict[str, list[float]]]]
) -> dict[str, list[float]]:
    argv = [*side.argv, str(root)] if side.name == "peer" else [*side.argv, "--root", str(root)]
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=clean_env())
    async with Client(params, read_timeout_seconds=120) as client:
        return await work(client)


async def start_times(side: Side, root: Path, starts: int) -> list[float]:
    argv = [*side.argv, str(root)] if side.name == "peer" else [*side.argv, "--root", str(root)]
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=clean_env())
    times = []
    for _ in range(starts):
        started = time.perf_counter()
        async with Client(params, read_timeout_seconds=120):
            times.append((time.perf_counter() - started) * 1000)
    return times


def stdlib_heads(count: int) -> list[str]:
    """The first 2,000 lines of the `count` largest standard-library modules."""
    lib = Path(sysconfig.get_paths()["stdlib"])
    texts = []
    for path in sorted(lib.glob("*.py"), key=lambda p: (-p.stat().st_size, p.name)):
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        if len(lines) >= 2000:
            texts.append("\n".join(lines[:2000]) + "\n")
    return texts[:count]


def count_alone(paths: list[Path]) -> list[float]:
    """Milliseconds of the exact token count of each file's numbered lines, in order,
    by one new counter (its table loaded first), as a server's first reads count them:
    `fit_tokens`'s count, without the read around it."""
    counter, cap = TokenCounter(), Settings().max_tokens
    counter.warm_up()
    samples = []
    for path in paths:
        lines = split_lines(path.read_text(encoding="utf-8"))
        start = time.perf_counter()
        counter.numbered(lines, 1).tokens_within(cap)
        samples.append((time.perf_counter() - start) * 1000)
    return samples


async def round_of(
    side: Side, root: Path, number: int, args: argparse.Namespace
) -> dict[str, list[float]]:
    """One round of every row for one server, on files of its own (so every first read
    is a first read) with the same content as the other server's."""
    folder = root / f"{side.name}-{number}"
    generated = []
    for i in range(args.first):
        path = folder / "generated" / f"module_{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(python_like_source(1000 * number + i))
        generated.append(path)
    stdlib = []
    for i, text in enumerate(stdlib_heads(args.first)):
        path = folder / "stdlib" / f"module_{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        stdlib.append(path)
    big = folder / "module.py"
    big.write_text(python_like_source(7))
    small = folder / "small.py"
    small.write_text("".join(f"value_{i} = {i} * 2  # line {i}\n" for i in range(10)))
    log = folder / "app.log"
    log_text = python_like_source(8, 26_000)
    log.write_text(log_text)
    log_lines = log_text.count("\n")
    edited = folder / "edited.py"
    edited.write_text(python_like_source(9, 2000))
    old = "from decimal import Decimal"
    new = "from decimal import Decimal as Dec"

    async def work(client: Client) -> dict[str, list[float]]:
        n = args.samples
        rows: dict[str, list[float]] = {}
        warm = folder / "warm.py"
        warm.write_text(python_like_source(-1, 300))
        await timed(client, [side.forced(warm)] * 10)
        rows[ROWS[0]] = await timed(client, [side.forced(p) for p in generated])
        rows[ROWS[1]] = await timed(client, [side.forced(p) for p in stdlib])
        await timed(client, [side.forced(big)] * 5)
        rows[ROWS[2]] = await timed(client, [side.forced(big)] * n)
        await timed(client, [side.forced(small)] * 5)
        rows[ROWS[3]] = await timed(client, [side.forced(small)] * n)
        rows[ROWS[4]] = await timed(client, [side.tail(log, 100, log_lines, True)] * n)
        rows[ROWS[5]] = await timed(client, [side.tail(log, 100, log_lines, False)] * n)
        await timed(client, [side.read(edited)])  # readkeeper edits only what was read
        edits = [side.edit(edited, *((old, new) if i % 2 == 0 else (new, old))) for i in range(n)]
        rows[ROWS[6]] = await timed(client, edits)
        return rows

    rows = await session(side, root, work)
    rows[ROWS[7]] = await start_times(side, root, args.starts)
    if side.name == "readkeeper":
        rows[COUNT_ROWS[0]] = count_alone(generated)
        rows[COUNT_ROWS[1]] = count_alone(stdlib)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds (the table: medians)")
    parser.add_argument("--samples", type=int, default=60, help="calls per row and round")
    parser.add_argument("--first", type=int, default=15, help="never-read files per round")
    parser.add_argument("--starts", type=int, default=5, help="server starts per round")
    parser.add_argument("--output", type=Path, default=RESULTS, help="JSON results file")
    args = parser.parse_args()
    peer_argv = filesystem_server()
    if peer_argv is None:
        return 1
    compile_like_an_install()
    sides = [Side("readkeeper", READKEEPER_MCP), Side("peer", peer_argv)]
    rounds: list[dict[str, dict[str, Any]]] = []
    with scratch("rk-bench-peer-") as (root, _log):
        for number in range(args.rounds):
            print(f"round {number + 1} of {args.rounds} ...", file=sys.stderr)
            figures: dict[str, dict[str, Any]] = {}
            for side in sides if number % 2 == 0 else sides[::-1]:
                samples = anyio.run(round_of, side, root, number, args)
                for row, ms in samples.items():
                    figures.setdefault(row, {})[side.name] = summarize(ms, ("p50_ms", "min_ms"))
            for name, first_read in zip(COUNT_ROWS, ROWS[:2], strict=True):
                figures[name]["peer"] = figures[first_read]["peer"]
            for row in figures.values():
                row["ratio"] = row["readkeeper"]["p50_ms"] / row["peer"]["p50_ms"]
            rounds.append(figures)

    def median(row: str, key: str) -> float:
        values = [r[row][key] if key == "ratio" else r[row][key]["p50_ms"] for r in rounds]
        return statistics.median(values)

    print(f"readkeeper / MCP filesystem server: p50 ms, median of {args.rounds} rounds")
    print(f"{'row':<42}{'readkeeper':>11}{'peer':>9}{'ratio':>8}   ratio per round")
    table = {}
    for row in (ROWS[0], COUNT_ROWS[0], ROWS[1], COUNT_ROWS[1], *ROWS[2:]):
        mine, theirs, ratio = median(row, "readkeeper"), median(row, "peer"), median(row, "ratio")
        per_round = " ".join(f"{r[row]['ratio']:.2f}" for r in rounds)
        print(f"{row:<42}{mine:>11.2f}{theirs:>9.2f}{ratio:>7.2f}x   {per_round}")
        table[row] = {"readkeeper_p50_ms": mine, "peer_p50_ms": theirs, "ratio": ratio}
    write_json(
        args.output,
        {
            "benchmark": "peer",
            "machine": machine(),
            "peer": peer_argv,
            "medians": table,
            "rounds": rounds,
        },
    )
    print(f"written to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
