"""readkeeper beside the MCP filesystem server, over MCP for both (issue 16).

Run it as `.venv/bin/python bench/bench_peer.py`. It prints a table (readkeeper, peer,
ratio = readkeeper / peer, each the median of the rounds' p50s) and writes the figures
of every round to `bench/results/peer.json`. Both servers are driven by the `mcp` SDK's
own client over stdio, on the same files, in the same run, alternately within each
round; the peer is `common.filesystem_server()` (installed with npm into the
git-ignored `bench/.peer/` on first use; without node the script says so and stops).

Rows (readkeeper's call; the peer's):

- **first read, stdlib / site-packages module**: a read with the default parameters of
  each of `--first` never-read real modules of 30-250 KB (CPython's standard library, and
  the packages installed beside readkeeper: a second real codebase), different modules
  in every row and round, so no memo of one read serves another (readkeeper answers a
  module over `outline_over_tokens` with its outline); `read_text_file`.
- **..., force**: the same with `force` (the lines, cut at `max_tokens`), on modules of
  their own.
- **cold restart**: a new server's first reads of the modules the first row's server
  read (readkeeper's cache in the user's cache folder may answer them); the peer, a new
  server too.
- **cold restart, force**: the same new server's reads with `force` of the modules the
  forced stdlib row read (readkeeper's counts kept in that cache may answer them).
- **forced re-read**: `read` with `force` of one 2,000-line file; `read_text_file`.
- **10-line file**: `read` with `force`; `read_text_file`.
- **last 100 lines of 1 MB**: `read` with `offset`/`limit` and `force`;
  `read_text_file` with `tail: 100`.
- **... and its stub**: the same `read` without `force` (answered `file_unchanged`);
  the peer has no stub, so the same `tail` read again.
- **edit of 80 KB**: `edit` of one line, back and forth; `edit_file` likewise.
- **start to initialize**: from spawning the server to the answer of MCP's
  `initialize` (the SDK client's connect).

Each readkeeper server has `XDG_CACHE_HOME` in the run's scratch folder (shared by its
rounds), never the user's; under the table, the size of that cache after each round,
and each cache's hits / look-ups over the round's two servers (the outline cache's and
the token table's entries on disk, the counts from memory or disk: `stats`' `caches`).
No target is asserted; issue 34's goal for every row is a ratio of at most 1.

Under the forced stdlib row, `count alone` is the exact token count of each module's
numbered lines as the read makes it (a new counter each round, so its memos are as
cold as the server's), timed in this process, beside the peer's whole round trip.
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
    "first read, stdlib module",
    "first read, stdlib module, force",
    "first read, site-packages module",
    "first read, site-packages module, force",
    "cold restart: first reads read before",
    "cold restart, force: reads read before",
    "forced re-read, 2,000-line file",
    "10-line file",
    "last 100 lines of a 1 MB file",
    "  the same again (readkeeper: its stub)",
    "edit of an 80 KB file",
    "start to initialize answered",
)

# readkeeper's exact count alone, printed under the first-read row it is part of.
COUNT_ROW = "  count alone, stdlib force"
CACHE_ROW = "cache on disk after the round, KB"
HITS_ROW = "cache hits / look-ups over the round"
# Real modules of this size, as agents read them (under 30 KB most are answered whole,
# and over 250 KB are mostly generated tables).
MODULE_BYTES = (30_000, 250_000)


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


def server_params(side: Side, root: Path) -> StdioServerParameters:
    argv = [*side.argv, str(root)] if side.name == "peer" else [*side.argv, "--root", str(root)]
    env = {**clean_env(), "XDG_CACHE_HOME": str(cache_home(root))}
    return StdioServerParameters(command=argv[0], args=argv[1:], env=env)


def cache_home(root: Path) -> Path:
    """The cache folder of the run's readkeeper servers (never the user's)."""
    return root.parent / "cache"


async def session(
    side: Side, root: Path, work: Callable[[Client], Awaitable[dict[str, list[float]]]]
) -> dict[str, list[float]]:
    async with Client(server_params(side, root), read_timeout_seconds=120) as client:
        return await work(client)


async def start_times(side: Side, root: Path, starts: int) -> list[float]:
    params = server_params(side, root)
    times = []
    for _ in range(starts):
        started = time.perf_counter()
        async with Client(params, read_timeout_seconds=120):
            times.append((time.perf_counter() - started) * 1000)
    return times


def real_modules(where: str) -> list[Path]:
    """The UTF-8 modules of `MODULE_BYTES` in the standard library ("stdlib") or in the
    packages installed beside it ("site-packages", readkeeper's own left out), in a
    stable order that mixes packages and sizes."""
    paths = sysconfig.get_paths()
    if where == "stdlib":
        found = [p for p in Path(paths["stdlib"]).rglob("*.py") if "site-packages" not in p.parts]
    else:
        found = [p for p in Path(paths["purelib"]).rglob("*.py") if "readkeeper" not in p.parts]
    modules = []
    for path in sorted(found):
        if MODULE_BYTES[0] <= path.stat().st_size <= MODULE_BYTES[1]:
            try:
                path.read_bytes().decode("utf-8")
            except UnicodeDecodeError:
                continue
            modules.append(path)
    # Every seventh, round and round: neighbours in one package are alike.
    return [modules[i] for start in range(7) for i in range(start, len(modules), 7)]


def copies(folder: Path, modules: list[Path]) -> list[Path]:
    """Copies of `modules` in `folder` (the content read, at a path of this run's)."""
    folder.mkdir(parents=True, exist_ok=True)
    made = []
    for i, module in enumerate(modules):
        path = folder / f"{i:03d}_{module.name}"
        path.write_bytes(module.read_bytes())
        made.append(path)
    return made


def cache_kb(root: Path) -> float:
    """Kilobytes in the run's readkeeper cache folder."""
    folder = cache_home(root) / "readkeeper"
    if not folder.is_dir():
        return 0.0
    return sum(p.stat().st_size for p in folder.iterdir() if p.is_file()) / 1024


def count_alone(paths: list[Path]) -> list[float]:
    """Milliseconds of the exact token count of each file's numbered lines, in order,
    by one new counter (its table loaded first), as a server's first reads count them:
    `fit_tokens`'s count, without the read around it."""
    # Nothing kept (count_cache.py): the count itself, never an earlier run's entry.
    counter, cap = TokenCounter(keep_counts=False), Settings().max_tokens
    counter.warm_up()
    samples = []
    for path in paths:
        lines = split_lines(path.read_text(encoding="utf-8"))
        start = time.perf_counter()
        counter.numbered(lines, 1).tokens_within(cap)
        samples.append((time.perf_counter() - start) * 1000)
    return samples


async def caches_of(client: Client, into: dict[str, list[int]]) -> None:
    """Add the server's caches' look-ups and hits (`stats`' `caches`) to `into`."""
    found = (await client.call_tool("stats", {})).structured_content or {}
    for kind, counts in (found.get("caches") or {}).items():
        kept = into.setdefault(kind, [0, 0])
        kept[0] += counts["hits"]
        kept[1] += counts["lookups"]


async def round_of(
    side: Side, root: Path, number: int, args: argparse.Namespace, caches: dict[str, list[int]]
) -> dict[str, list[float]]:
    """One round of every row for one server, on files of its own (so every first read
    is a first read) with the same content as the other server's."""
    folder = root / f"{side.name}-{number}"
    first = {}
    for where in ("stdlib", "site-packages"):
        modules = real_modules(where)
        span = 2 * args.first
        mine = modules[number * span : (number + 1) * span]
        if len(mine) < span:
            raise SystemExit(f"not enough {where} modules for {args.rounds} rounds of --first")
        first[where] = copies(folder / where / "default", mine[: args.first])
        first[where + " force"] = copies(folder / where / "force", mine[args.first :])
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
    warm = folder / "warm.py"
    warm.write_text(python_like_source(-1, 300))

    async def work(client: Client) -> dict[str, list[float]]:
        n = args.samples
        rows: dict[str, list[float]] = {}
        await timed(client, [side.forced(warm)] * 10)
        rows[ROWS[0]] = await timed(client, [side.read(p) for p in first["stdlib"]])
        rows[ROWS[1]] = await timed(client, [side.forced(p) for p in first["stdlib force"]])
        rows[ROWS[2]] = await timed(client, [side.read(p) for p in first["site-packages"]])
        forced = [side.forced(p) for p in first["site-packages force"]]
        rows[ROWS[3]] = await timed(client, forced)
        await timed(client, [side.forced(big)] * 5)
        rows[ROWS[6]] = await timed(client, [side.forced(big)] * n)
        await timed(client, [side.forced(small)] * 5)
        rows[ROWS[7]] = await timed(client, [side.forced(small)] * n)
        rows[ROWS[8]] = await timed(client, [side.tail(log, 100, log_lines, True)] * n)
        rows[ROWS[9]] = await timed(client, [side.tail(log, 100, log_lines, False)] * n)
        await timed(client, [side.read(edited)])  # readkeeper edits only what was read
        edits = [side.edit(edited, *((old, new) if i % 2 == 0 else (new, old))) for i in range(n)]
        rows[ROWS[10]] = await timed(client, edits)
        if side.name == "readkeeper":
            await caches_of(client, caches)
        return rows

    async def restarted(client: Client) -> dict[str, list[float]]:
        await timed(client, [side.forced(warm)] * 10)
        rows = {ROWS[4]: await timed(client, [side.read(p) for p in first["stdlib"]])}
        rows[ROWS[5]] = await timed(client, [side.forced(p) for p in first["stdlib force"]])
        if side.name == "readkeeper":
            await caches_of(client, caches)
        return rows

    rows = await session(side, root, work)
    rows.update(await session(side, root, restarted))
    rows[ROWS[11]] = await start_times(side, root, args.starts)
    if side.name == "readkeeper":
        rows[COUNT_ROW] = count_alone(first["stdlib force"])
        rows[CACHE_ROW] = [cache_kb(root)]
    return rows


def mine_over_theirs(row: dict[str, Any]) -> float:
    return float(row["readkeeper"]["p50_ms"] / row["peer"]["p50_ms"])


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
    caches: list[dict[str, list[int]]] = []  # per round: kind -> [hits, look-ups]
    with scratch("rk-bench-peer-") as (scratch_root, _log):
        root = scratch_root / "files"
        root.mkdir()
        for number in range(args.rounds):
            print(f"round {number + 1} of {args.rounds} ...", file=sys.stderr)
            figures: dict[str, dict[str, Any]] = {}
            caches.append({})
            for side in sides if number % 2 == 0 else sides[::-1]:
                samples = anyio.run(round_of, side, root, number, args, caches[-1])
                for row, ms in samples.items():
                    figures.setdefault(row, {})[side.name] = summarize(ms, ("p50_ms", "min_ms"))
            figures[COUNT_ROW]["peer"] = figures[ROWS[1]]["peer"]
            figures[CACHE_ROW]["peer"] = {"p50_ms": 0.0, "min_ms": 0.0}
            for name, row in figures.items():
                row["ratio"] = 0.0 if name == CACHE_ROW else mine_over_theirs(row)
            rounds.append(figures)

    def median(row: str, key: str) -> float:
        values = [r[row][key] if key == "ratio" else r[row][key]["p50_ms"] for r in rounds]
        return statistics.median(values)

    print(f"readkeeper / MCP filesystem server: p50 ms, median of {args.rounds} rounds")
    print(f"{'row':<42}{'readkeeper':>11}{'peer':>9}{'ratio':>8}   ratio per round")
    table = {}
    for row in (ROWS[0], ROWS[1], COUNT_ROW, *ROWS[2:], CACHE_ROW):
        mine, theirs, ratio = median(row, "readkeeper"), median(row, "peer"), median(row, "ratio")
        if row == CACHE_ROW:
            print(f"{row:<42}{mine:>11.0f}")
            table[row] = {"readkeeper_kb": mine}
            continue
        per_round = " ".join(f"{r[row]['ratio']:.2f}" for r in rounds)
        print(f"{row:<42}{mine:>11.2f}{theirs:>9.2f}{ratio:>7.2f}x   {per_round}")
        table[row] = {"readkeeper_p50_ms": mine, "peer_p50_ms": theirs, "ratio": ratio}
    hits: dict[str, list[int]] = {}
    for found in caches:
        for kind, (hit, lookups) in found.items():
            total = hits.setdefault(kind, [0, 0])
            total[0] += hit
            total[1] += lookups
    shown = ", ".join(f"{kind} {hit}/{lookups}" for kind, (hit, lookups) in sorted(hits.items()))
    print(f"{HITS_ROW:<42}{shown}")
    table[HITS_ROW] = {kind: {"hits": h, "lookups": n} for kind, (h, n) in hits.items()}
    write_json(
        args.output,
        {
            "benchmark": "peer",
            "machine": machine(),
            "peer": peer_argv,
            "medians": table,
            "rounds": rounds,
            "caches": caches,
        },
    )
    print(f"written to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
