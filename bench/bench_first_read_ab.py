"""Rows 3b and 3c of bench_read.py (issue 16), this checkout beside another, interleaved.

Run it as `.venv/bin/python bench/bench_first_read_ab.py --other /path/on/PYTHONPATH`,
where the path holds another readkeeper package (`readkeeper/` with its `attachments/`),
e.g. the commit before a change: `git archive <commit> server attachments | tar -x`,
then `server` copied to `readkeeper` and `attachments` into it. Each round starts one
server of each (the order alternating), sends a forced `readkeeper/read` of a 10-line file
right after `initialized` (row 3b), then, every third round, measures a settled server's
RSS without a read (row 3c). Both share one cache folder, warmed by a read of each
first (a machine where readkeeper already ran: the token table's ranks and, for a
checkout that keeps it, the token index are there). It prints a table and writes
`bench/results/first_read_ab.json`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from common import LspProcess, machine, scratch, server, summarize, write_json

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "first_read_ab.json"


def argv_for(pythonpath: str | None) -> list[str]:
    """A server of this checkout (None) or of the package on `pythonpath`; `env` execs the
    interpreter, so the process measured is the server's."""
    path = [f"PYTHONPATH={pythonpath}"] if pythonpath else []
    return ["env", *path, sys.executable, "-m", "readkeeper", "serve"]


def first_read(argv: list[str], root: Path, small: Path, log: IO[bytes]) -> tuple[float, int]:
    """Milliseconds of the read sent right after `initialized`, and its tokens."""
    with server(argv, root, log, cwd=root) as lsp:
        began = time.perf_counter()
        result = lsp.request("readkeeper/read", {"file_path": str(small), "force": True})
        elapsed = (time.perf_counter() - began) * 1000
    file = result["file"]
    if file.get("tokens_upper_bound"):
        return elapsed, -1
    return elapsed, int(file["tokens"])


def idle_rss(argv: list[str], root: Path, log: IO[bytes]) -> float:
    with server(argv, root, log, cwd=root) as lsp:
        deadline = time.monotonic() + 60
        while lsp.request("readkeeper/stats", {})["watcher"]["state"] in ("off", "starting"):
            if time.monotonic() > deadline:
                raise RuntimeError("the watcher did not finish its setup within 60 s")
            time.sleep(0.05)
        time.sleep(0.5)
        return float(rss(lsp))


def rss(lsp: LspProcess) -> float:
    return float(lsp.rss_mb()["VmRSS"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--other", required=True, help="PYTHONPATH of the other readkeeper")
    parser.add_argument("--starts", type=int, default=8, help="first reads of each")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    kinds = {"this": argv_for(None), "other": argv_for(args.other)}
    samples: dict[str, list[float]] = {k: [] for k in kinds}
    exact: dict[str, int] = {k: 0 for k in kinds}
    idle: dict[str, list[float]] = {k: [] for k in kinds}
    with (
        scratch("readkeeper-bench-") as (workdir, log),
        tempfile.TemporaryDirectory(prefix="readkeeper-bench-cache-") as cache,
    ):
        os.environ["XDG_CACHE_HOME"] = cache  # the servers inherit it (clean_env)
        small = workdir / "ten_lines.py"
        small.write_text("".join(f"value_{i} = {i}  # line {i}\n" for i in range(10)))
        for command in kinds.values():  # warm the cache folder and the OS file cache
            first_read(command, workdir, small, log)
            time.sleep(1.5)  # the writes queued at the table's load (ranks, index)
        for round_ in range(args.starts):
            order = list(kinds) if round_ % 2 == 0 else list(reversed(kinds))
            for kind in order:
                elapsed, tokens = first_read(kinds[kind], workdir, small, log)
                samples[kind].append(elapsed)
                exact[kind] += tokens >= 0
                if round_ % 3 == 0:
                    idle[kind].append(idle_rss(kinds[kind], workdir, log))
    report: dict[str, Any] = {"machine": machine(), "other": args.other}
    head = f"{'server':<8} {'3b p50':>9} {'p95':>9} {'n':>4} {'exact':>6} {'3c RSS':>8}"
    print(head)
    print("-" * len(head))
    for kind in kinds:
        figures = summarize(samples[kind])
        rss_mb = statistics.median(idle[kind])
        report[kind] = {"first_read": figures, "exact_reads": exact[kind], "idle_rss_mb": rss_mb}
        print(
            f"{kind:<8} {figures['p50_ms']:>7.1f}ms {figures['p95_ms']:>7.1f}ms "
            f"{figures['n']:>4} {exact[kind]:>6} {rss_mb:>6.1f}MB"
        )
    ratio = report["this"]["first_read"]["p50_ms"] / report["other"]["first_read"]["p50_ms"]
    report["ratio_p50"] = ratio
    print(f"3b p50 this/other: {ratio:.2f}  (targets: 3b p50 <= 50 ms, 3c <= 60 MB)")
    write_json(args.output, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
