"""Benchmark `readkeeper/read`: round-trip latency, memory and start-up (issue 2).

Run it as `.venv/bin/python bench/bench_read.py`. It prints a table and writes the same
figures to `bench/results/read.json`. Every figure is printed beside its target with
pass/miss; nothing is asserted, since timings depend on the machine and its load.

The servers are driven by a small synchronous JSON-RPC client over stdio (common.py)
rather than pygls' `LanguageClient`, so the round trips measure the server and the pipe,
not a Python client's own converters and event loop. See bench/README.md for what each
row is.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from subprocess import PIPE
from typing import IO, Any

from common import (
    READKEEPER_SERVE,
    LspProcess,
    compile_like_an_install,
    machine,
    pinned,
    scored,
    scratch,
    server,
    summarize,
    two_cpus,
    verdict,
    write_json,
)
from readkeeper.core import Readkeeper
from readkeeper.protocol import ReadParams

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "read.json"
BARE_SERVE = [sys.executable, str(HERE / "bare_server.py")]

TARGET_FULL_MS = 5.0
TARGET_STUB_MS = 0.25  # issue 16 (issue 2 asked for 1 ms)
TARGET_RSS_MB = 120.0
TARGET_START_RATIO = 1.3
TARGET_FIRST_READ_MS = 50.0  # issue 16
TARGET_IDLE_RSS_MB = 60.0  # issue 16
IDLE_SERVERS = 3

# --- workload -----------------------------------------------------------------------------

NOUNS = [
    "order", "invoice", "account", "customer", "session", "payment", "report", "ledger",
    "shipment", "warehouse", "schedule", "document", "permission", "profile", "message",
]  # fmt: skip
VERBS = [
    "fetch", "update", "remove", "resolve", "render", "merge", "validate", "refresh",
    "collect", "publish", "archive", "register", "calculate", "normalize", "synchronize",
]  # fmt: skip
TYPES = ["int", "str", "bytes", "float", "bool", "Path", "Decimal", "datetime"]


def python_like_source(seed: int, n_lines: int = 2000) -> str:
    """`n_lines` lines of plausible Python (about 40 bytes a line), different per seed.

    Its token density is that of ordinary code, so that with the `cat -n` numbering a
    2,000-line file stays under the default 25,000-token cap and is read in full.
    """
    rng = random.Random(seed)
    lines = [f'"""Generated module {seed} for the readkeeper benchmark."""', ""]
    lines += ["from __future__ import annotations", "", "from decimal import Decimal", "", ""]
    while len(lines) < n_lines:
        noun, other = rng.choice(NOUNS), rng.choice(NOUNS)
        cls = f"{noun.title()}{other.title()}Repository"
        lines += [
            f"class {cls}:",
            f'    """Keep every {noun} of a {other} in the configured storage."""',
            "",
            "    def __init__(self, storage: dict, maximum_entries: int) -> None:",
            "        self._storage = storage",
            "        self._maximum_entries = maximum_entries",
            "",
        ]
        for _ in range(rng.randint(3, 7)):
            verb, obj, kind = rng.choice(VERBS), rng.choice(NOUNS), rng.choice(TYPES)
            lines += [
                f"    def {verb}_{obj}(self, identifier: str, value: {kind}) -> {kind}:",
                f"        # {verb.title()} the {obj} before storing it.",
                f"        existing_{obj} = self._storage.get(identifier)",
                f"        if existing_{obj} is None:",
                "            raise KeyError(identifier)",
                "        self._storage[identifier] = value",
                f"        return existing_{obj}",
                "",
            ]
        lines.append("")
    return "\n".join(lines[:n_lines]) + "\n"


def small_source(index: int) -> str:
    """A small distinct file (about 1 KB) for the memory run."""
    body = "\n".join(f"value_{index}_{i} = {i * index} + {i}  # line {i}" for i in range(24))
    return f'"""Small file {index}."""\n\n{body}\n'


# --- measuring ----------------------------------------------------------------------------


def timed(calls: list[Callable[[], Any]], check: Callable[[Any], None]) -> list[float]:
    """Milliseconds of each call; `check` sees each result, untimed."""
    samples = []
    for call in calls:
        start = time.perf_counter()
        result = call()
        samples.append((time.perf_counter() - start) * 1000)
        check(result)
    return samples


# A process that writes back whatever it reads.
ECHO = "import os\nwhile data := os.read(0, 65536):\n    os.write(1, data)\n"
ECHO_BYTES = 150  # about the size of a stub's request and of its reply


def echo_round_trips(count: int, cpu: int | None = None) -> list[float]:
    """Milliseconds of `count` round trips of an `ECHO_BYTES` message through `ECHO`: two
    pipes and two wake-ups, and no work at all (the floor of any stdio server). `cpu`:
    the CPU the echo runs on (default: where this process may run)."""
    message = b"x" * ECHO_BYTES
    echo = subprocess.Popen([sys.executable, "-c", ECHO], stdin=PIPE, stdout=PIPE)
    if echo.stdin is None or echo.stdout is None:
        raise RuntimeError("no pipes to the echo process")
    if cpu is not None:
        os.sched_setaffinity(echo.pid, {cpu})
    sink, source = echo.stdin.fileno(), echo.stdout.fileno()
    samples = []
    try:
        for _ in range(count + 20):  # the first 20 warm up
            start = time.perf_counter()
            os.write(sink, message)
            received = 0
            while received < len(message):
                received += len(os.read(source, 65536))
            samples.append((time.perf_counter() - start) * 1000)
    finally:
        echo.stdin.close()
        echo.wait()
        echo.stdout.close()
    return samples[20:]


def expect(kind: str) -> Callable[[Any], None]:
    def check(result: Any) -> None:
        got = result["type"] if isinstance(result, dict) else result.type
        if got != kind:
            raise RuntimeError(f"expected a {kind!r} result, got {got!r}")
        if kind == "text":
            file = result["file"] if isinstance(result, dict) else result.file
            partial = file["partial"] if isinstance(file, dict) else file.partial
            if partial:
                raise RuntimeError("the benchmark file came back partial; shrink it")

    return check


def bench_reads(
    root: Path, big: Path, small: Path, distinct: list[Path], requests: int, log: IO[bytes]
) -> dict[str, Any]:
    """Rows 1a-1d: full (forced), stub and uncached full reads, over LSP and in-process;
    the stub of a 10-line file, which costs the core next to nothing to prove unchanged."""
    rows: dict[str, Any] = {}
    warm = root / "warmup.py"
    full, stub = {"file_path": str(big), "force": True}, {"file_path": str(big)}
    small_stub = {"file_path": str(small)}

    with server(READKEEPER_SERVE, root, log, cwd=root) as lsp:
        for _ in range(20):  # loads the token table and the lazy imports
            lsp.request("readkeeper/read", {"file_path": str(warm), "force": True})
        first = lsp.request("readkeeper/read", full)
        expect("text")(first)
        reply_bytes = len(json.dumps(first))

        def read(params: dict[str, Any]) -> Callable[[], Any]:
            return lambda: lsp.request("readkeeper/read", params)

        rows["full_lsp"] = timed([read(full)] * requests, expect("text"))
        lsp.request("readkeeper/read", stub)  # records the full view: re-reads now stub
        rows["stub_lsp"] = timed([read(stub)] * requests, expect("file_unchanged"))
        lsp.request("readkeeper/read", small_stub)
        rows["small_stub_lsp"] = timed([read(small_stub)] * requests, expect("file_unchanged"))
        rows["uncached_lsp"] = timed(
            [read({"file_path": str(p), "force": True}) for p in distinct], expect("text")
        )
        rss_after = lsp.rss_mb()

    with server([*BARE_SERVE, "--echo"], root, log, cwd=root) as bare:
        for _ in range(20):
            bare.request("bench/echo", {})
        rows["noop_pygls"] = timed(
            [lambda: bare.request("bench/echo", stub)] * requests, expect("file_unchanged")
        )
        bare_rss = bare.rss_mb()

    cpus = two_cpus()
    if cpus is not None:  # what the wake-ups of a second CPU add to a round trip
        with pinned(cpus[0]):
            with server(READKEEPER_SERVE, root, log, cwd=root) as one_cpu:
                for _ in range(20):
                    one_cpu.request("readkeeper/read", {"file_path": str(warm), "force": True})
                one_cpu.request("readkeeper/read", stub)
                rows["stub_lsp_one_cpu"] = timed(
                    [lambda: one_cpu.request("readkeeper/read", stub)] * requests,
                    expect("file_unchanged"),
                )
            rows["echo_one_cpu"] = echo_round_trips(requests)
            rows["echo_two_cpus"] = echo_round_trips(requests, cpus[1])

    core = Readkeeper(roots=[str(root)])
    core.tokens.warm_up()
    for _ in range(20):
        core.read(ReadParams(file_path=str(warm), force=True))
    core.read(ReadParams(file_path=str(big), force=True))

    def core_read(path: Path, force: bool) -> Callable[[], Any]:
        params = ReadParams(file_path=str(path), force=force)
        return lambda: core.read(params)

    rows["full_core"] = timed([core_read(big, True)] * requests, expect("text"))
    core.read(ReadParams(file_path=str(big)))
    rows["stub_core"] = timed([core_read(big, False)] * requests, expect("file_unchanged"))
    core.read(ReadParams(file_path=str(small)))
    rows["small_stub_core"] = timed([core_read(small, False)] * requests, expect("file_unchanged"))
    core = Readkeeper(roots=[str(root)])  # an empty token-count cache, like the server's
    core.tokens.warm_up()
    rows["uncached_core"] = timed([core_read(p, True) for p in distinct], expect("text"))

    out: dict[str, Any] = {key: summarize(samples) for key, samples in rows.items()}
    text = first["file"]
    out["file"] = {
        "bytes": big.stat().st_size,
        "lines": text["total_lines"],
        "tokens": text["tokens"],
        "reply_bytes": reply_bytes,
    }
    out["rss_after_latency_runs_mb"] = rss_after
    out["bare_pygls_rss_mb"] = bare_rss
    return out


def bench_memory(root: Path, files: list[Path], log: IO[bytes]) -> dict[str, Any]:
    """Row 2: server RSS after reading each of `files` once (fresh server)."""
    with server(READKEEPER_SERVE, root, log, cwd=root) as lsp:
        # A read near the token cap loads the token table: the baseline includes it.
        lsp.request("readkeeper/read", {"file_path": str(root / "module.py")})
        before = lsp.rss_mb()
        start = time.perf_counter()
        for path in files:
            lsp.request("readkeeper/read", {"file_path": str(path)})
        elapsed = time.perf_counter() - start
        after = lsp.rss_mb()
        stats = lsp.request("readkeeper/stats", {})
    return {
        "reads": len(files),
        "rss_before_mb": before["VmRSS"],
        "rss_after_mb": after["VmRSS"],
        "peak_mb": after["VmHWM"],
        "seconds": elapsed,
        "server_stats": stats,
    }


def time_to_initialize(argv: list[str], root: Path, log: IO[bytes]) -> float:
    """Milliseconds from spawning the server to its `initialize` answer being read."""
    process = LspProcess(argv, log, cwd=root)
    try:
        process.initialize(root)
        return (process.answered - process.started) * 1000
    finally:
        process.close()


def bench_start(root: Path, starts: int, log: IO[bytes]) -> dict[str, Any]:
    """Row 3: start-to-initialize, readkeeper beside a bare pygls server, interleaved."""
    samples: dict[str, list[float]] = {"readkeeper": [], "bare": []}
    time_to_initialize(BARE_SERVE, root, log)  # warm the OS file cache for both
    time_to_initialize(READKEEPER_SERVE, root, log)
    for _ in range(starts):
        samples["bare"].append(time_to_initialize(BARE_SERVE, root, log))
        samples["readkeeper"].append(time_to_initialize(READKEEPER_SERVE, root, log))
    out: dict[str, Any] = {name: summarize(values) for name, values in samples.items()}
    out["ratio"] = out["readkeeper"]["p50_ms"] / out["bare"]["p50_ms"]
    return out


def bench_first_read(root: Path, small: Path, starts: int, log: IO[bytes]) -> dict[str, Any]:
    """Rows 3b and 3c: a small read sent right after `initialized` (what an agent that
    reads at once waits for), and the RSS of a server that settled without a read."""
    first = []
    for _ in range(starts):
        with server(READKEEPER_SERVE, root, log, cwd=root) as lsp:
            began = time.perf_counter()
            result = lsp.request("readkeeper/read", {"file_path": str(small), "force": True})
            first.append((time.perf_counter() - began) * 1000)
            expect("text")(result)
    idle = []
    for _ in range(IDLE_SERVERS):
        with server(READKEEPER_SERVE, root, log, cwd=root) as lsp:
            deadline = time.monotonic() + 60
            while lsp.request("readkeeper/stats", {})["watcher"]["state"] in ("off", "starting"):
                if time.monotonic() > deadline:
                    raise RuntimeError("the watcher did not finish its setup within 60 s")
                time.sleep(0.05)  # the watcher's setup walk is part of the idle server
            time.sleep(0.5)
            idle.append(lsp.rss_mb()["VmRSS"])
    return {"first_read": summarize(first), "idle_rss_mb": statistics.median(idle)}


# --- reporting ----------------------------------------------------------------------------


def table(
    reads: dict[str, Any], memory: dict[str, Any], start: dict[str, Any], first: dict[str, Any]
) -> list[str]:
    head = f"{'measure':<50} {'p50':>9} {'p95':>9} {'n':>6}  {'target':<10} result"
    rows = [head, "-" * len(head)]

    def latency(label: str, figures: dict[str, float], target: float | None) -> None:
        goal = f"p50<={target:g}ms" if target is not None else "(floor)"
        result = verdict(figures["p50_ms"], target) if target is not None else ""
        rows.append(
            f"{label:<50} {figures['p50_ms']:>7.3f}ms {figures['p95_ms']:>7.3f}ms "
            f"{figures['n']:>6}  {goal:<10} {result}"
        )

    file = reads["file"]
    rows.append(
        f"read: {file['lines']} lines, {file['bytes'] / 1024:.0f} KB, {file['tokens']} tokens, "
        f"reply {file['reply_bytes'] / 1024:.0f} KB"
    )
    latency("1a full read (force), same file, LSP", reads["full_lsp"], TARGET_FULL_MS)
    latency("   in-process core", reads["full_core"], None)
    latency("1b stub re-read (file_unchanged), LSP", reads["stub_lsp"], TARGET_STUB_MS)
    latency("   in-process core", reads["stub_core"], None)
    if "stub_lsp_one_cpu" in reads:
        latency("   the same, client and server on one CPU", reads["stub_lsp_one_cpu"], None)
    latency("   pygls floor: no-op request, bare server", reads["noop_pygls"], None)
    if "echo_two_cpus" in reads:
        latency("   pipe floor: echo, client and echo on 2 CPUs", reads["echo_two_cpus"], None)
        latency("   pipe floor: echo, both on one CPU", reads["echo_one_cpu"], None)
    latency("   stub of a 10-line file, LSP", reads["small_stub_lsp"], None)
    latency("   in-process core", reads["small_stub_core"], None)
    distinct = f"1c full read, {reads['uncached_lsp']['n']} distinct files (uncached), LSP"
    latency(distinct, reads["uncached_lsp"], TARGET_FULL_MS)
    latency("   in-process core", reads["uncached_core"], None)
    rows.append("")
    rss = memory["rss_after_mb"]
    rows.append(
        f"{'2  server RSS after ' + format(memory['reads'], ',') + ' distinct reads':<50} "
        f"{rss:>7.1f}MB {'':>9} {memory['reads']:>6}  {'<=120MB':<10} "
        f"{verdict(rss, TARGET_RSS_MB)}"
    )
    rows.append(
        f"   (RSS {memory['rss_before_mb']:.1f} MB before the reads, peak "
        f"{memory['peak_mb']:.1f} MB, {memory['seconds']:.1f} s for the reads; "
        f"bare pygls server {reads['bare_pygls_rss_mb']['VmRSS']:.1f} MB)"
    )
    rows.append("")
    for name, label in (("readkeeper", "readkeeper serve"), ("bare", "bare pygls server")):
        figures = start[name]
        rows.append(
            f"{'3  start to initialize answered, ' + label:<50} {figures['p50_ms']:>7.1f}ms "
            f"{figures['p95_ms']:>7.1f}ms {figures['n']:>6}"
        )
    ratio = start["ratio"]
    rows.append(
        f"{'   ratio readkeeper / bare (p50)':<50} {ratio:>8.2f}x {'':>9} {'':>6}  "
        f"{'<=1.3x':<10} {verdict(ratio, TARGET_START_RATIO)}"
    )
    latency("3b first 10-line read after initialized", first["first_read"], TARGET_FIRST_READ_MS)
    idle = first["idle_rss_mb"]
    rows.append(
        f"{'3c idle server RSS (settled, no read)':<50} {idle:>7.1f}MB {'':>9} "
        f"{IDLE_SERVERS:>6}  {'<=60MB':<10} {verdict(idle, TARGET_IDLE_RSS_MB)}"
    )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300, help="reads per latency row")
    parser.add_argument("--distinct", type=int, default=200, help="files for the uncached row")
    parser.add_argument("--memory-reads", type=int, default=10_000, help="files for RSS")
    parser.add_argument("--starts", type=int, default=12, help="starts of each server")
    parser.add_argument("--output", type=Path, default=RESULTS, help="JSON results file")
    args = parser.parse_args(argv)
    if min(args.requests, args.distinct, args.starts) < 2:
        parser.error("--requests, --distinct and --starts need at least 2 samples each")
    for name in [k for k in os.environ if k.startswith("READKEEPER_")]:
        del os.environ[name]  # measure the defaults, in-process as in the servers
    compile_like_an_install()

    began = time.perf_counter()
    load_before = os.getloadavg()
    with scratch("readkeeper-bench-") as (workdir, log):
        big = workdir / "module.py"
        big.write_text(python_like_source(0))
        (workdir / "warmup.py").write_text(python_like_source(-1, 300))
        ten_lines = workdir / "ten_lines.py"
        ten_lines.write_text("".join(f"value_{i} = {i}  # line {i}\n" for i in range(10)))
        distinct = []
        for seed in range(1, args.distinct + 1):
            path = workdir / "distinct" / f"module_{seed}.py"
            path.parent.mkdir(exist_ok=True)
            path.write_text(python_like_source(seed))
            distinct.append(path)
        small = []
        for index in range(args.memory_reads):
            path = workdir / "small" / f"d{index // 100:03d}" / f"f{index:05d}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(small_source(index))
            small.append(path)

        print("measuring start-up ...", file=sys.stderr)
        start = bench_start(workdir, args.starts, log)
        first = bench_first_read(workdir, ten_lines, args.starts, log)
        print("measuring read latency ...", file=sys.stderr)
        reads = bench_reads(workdir, big, ten_lines, distinct, args.requests, log)
        print(f"measuring memory over {args.memory_reads:,} reads ...", file=sys.stderr)
        memory = bench_memory(workdir, small, log)

    meta = {
        **machine(),
        "load_avg_before": load_before,
        "load_avg_after": os.getloadavg(),
        "seconds": time.perf_counter() - began,
    }
    lines = table(reads, memory, start, first)
    print(
        f"readkeeper read benchmark: Python {meta['python']}, {meta['cpus']} CPUs, "
        f"load {load_before[0]:.2f}, {meta['seconds']:.0f} s"
    )
    print("\n".join(lines))
    targets = {
        "full_read_p50_ms": (reads["full_lsp"]["p50_ms"], TARGET_FULL_MS),
        "uncached_full_read_p50_ms": (reads["uncached_lsp"]["p50_ms"], TARGET_FULL_MS),
        "stub_p50_ms": (reads["stub_lsp"]["p50_ms"], TARGET_STUB_MS),
        "rss_after_10k_reads_mb": (memory["rss_after_mb"], TARGET_RSS_MB),
        "start_ratio": (start["ratio"], TARGET_START_RATIO),
        "first_read_p50_ms": (first["first_read"]["p50_ms"], TARGET_FIRST_READ_MS),
        "idle_rss_mb": (first["idle_rss_mb"], TARGET_IDLE_RSS_MB),
    }
    report = {
        "meta": meta,
        "targets": scored(targets),
        "reads": reads,
        "memory": memory,
        "start": start,
        "first_read": first,
    }
    write_json(args.output, report)
    print(f"\nwritten to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
