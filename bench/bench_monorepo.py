"""Benchmark the watcher on a monorepo (issue 16): Watchman against inotify.

Run it as `.venv/bin/python bench/bench_monorepo.py` (`--files`, `--folders` to run
smaller). It prints a table and writes the figures to `bench/results/monorepo.json`,
beside their targets with pass/MISS; nothing is asserted, since timings depend on the
machine and its load.

The workspace, 1,000,000 empty files in 50,000 folders by default, is generated once
into the git-ignored `bench/.monorepo/` and reused by later runs of the same size (a
`.watchmanconfig` at its top makes it a Watchman project of its own, not a part of the
repository around it). Watchman is a service of the benchmark's own (its socket, state
and log in a temporary folder), never the machine's, which gets no million-file watch:
the benchmark runs `watch-project` and waits for the crawl, then starts the servers.

For each backend, `--runs` fresh servers (median): Watchman from its existing watch
(`watcher` `auto`, which must choose it), and inotify (`watcher` `inotify`):

- initialized -> watching: from sending `initialized` to `readkeeper/stats` saying the
  watcher is watching (polled every 2 ms).
- write -> notice: a file the session read, deep in the tree, rewritten `--writes`
  times by this process (after 5 warm-up writes); from the write returning to its
  `readkeeper/didChangeReadFiles` notice read off the pipe (samples of every run).
- RSS: the server's VmRSS after those writes, and its peak (VmHWM).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

from bench_watch import Server
from common import machine, proc_status, scored, scratch, summarize, verdict, write_json

HERE = Path(__file__).resolve().parent
# The private Watchman service is the tests' own (tests/watchman_service.py, standard
# library only), as bench_readers.py takes its samples from tests/.
sys.path.insert(0, str(HERE.parent / "tests"))

from watchman_service import PrivateWatchman  # noqa: E402

CACHE = HERE / ".monorepo"  # git-ignored
RESULTS = HERE / "results" / "monorepo.json"

TARGET_SETUP_S = 3.0
TARGET_LATENCY_P95_MS = 100.0
TARGET_RSS_MB = 150.0
WARM_UP = 5  # writes before the latency samples
CRAWL_TIMEOUT_S = 3600  # a million files
BACKENDS = {"watchman": {"watcher": "auto"}, "inotify": {"watcher": "inotify"}}


# --- the workspace ------------------------------------------------------------------------


def workspace(files: int, folders: int) -> Path:
    """The generated workspace of this size, made on first use: `folders` folders two
    levels deep, `files` empty files spread over them, and the file the latency row
    rewrites."""
    root = CACHE / f"ws-{files}-{folders}"
    done = root / ".complete"
    if done.exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    print(f"generating {files:,} files in {folders:,} folders (once) ...", file=sys.stderr)
    tops = max(1, round(folders**0.5))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    for folder in range(folders):
        path = root / f"pkg{folder % tops:04d}" / f"mod{folder:06d}"
        path.mkdir(parents=True)
        for index in range(folder * files // folders, (folder + 1) * files // folders):
            os.close(os.open(path / f"f{index:07d}.txt", flags))
    (root / ".watchmanconfig").write_text("{}\n")
    done.write_text(json.dumps({"files": files, "folders": folders}) + "\n")
    return root


def probe(root: Path) -> Path:
    """The file the latency row reads and rewrites: the last folder's, made non-empty."""
    folder = max(max(root.glob("pkg*"), key=str).glob("mod*"), key=str)
    path = folder / "watched.py"
    path.write_text("value = 0\n")
    return path


def crawl(service: PrivateWatchman, root: Path) -> float:
    """`watch-project` the root and wait until Watchman has crawled it: seconds taken."""
    started = time.perf_counter()
    service.command("watch-project", str(root), timeout=CRAWL_TIMEOUT_S)
    # A query answers once the crawl is done (sync_timeout: and has seen everything).
    query = {"expression": ["false"], "sync_timeout": 3_600_000}
    service.command("query", str(root), query, timeout=CRAWL_TIMEOUT_S)
    return time.perf_counter() - started


# --- one server ---------------------------------------------------------------------------


def bench_server(
    root: Path, target: Path, settings: dict[str, Any], writes: int, log: IO[bytes]
) -> dict[str, Any]:
    """One fresh server on `root`: its setup time, write -> notice samples and RSS."""
    server = Server(root, log, settings)
    try:
        status = server.wait_watching(timeout=600)
        seconds = time.perf_counter() - server.initialized_at
        server.request("readkeeper/read", {"file_path": str(target)})
        samples = []
        for i in range(WARM_UP + writes):  # the first notices also load the token table
            before = len(server.notices)
            target.write_text(f"value = {i + 1}\n")
            written = time.perf_counter()
            samples.append((server.wait_notice(str(target), before) - written) * 1000)
            server.request("readkeeper/changes", {})
        del samples[:WARM_UP]
        rss = server.rss_mb()
        status = server.watcher()
    finally:
        server.close()
    return {
        "seconds_to_watching": seconds,
        "backend": status.get("backend"),
        "state": status["state"],
        "folders_walked": status["folders_walked"],
        "samples_ms": [round(x, 2) for x in samples],
        "rss_mb": rss["VmRSS"],
        "peak_mb": rss["VmHWM"],
        "threads": rss["Threads"],
    }


def bench_backend(
    root: Path, target: Path, settings: dict[str, Any], runs: int, writes: int, log: IO[bytes]
) -> dict[str, Any]:
    """`runs` servers with `settings`: the medians of bench_server's figures."""
    results = [bench_server(root, target, settings, writes, log) for _ in range(runs)]
    samples = [x for r in results for x in r["samples_ms"]]
    return {
        "settings": settings,
        "backends": sorted({str(r["backend"]) for r in results}),
        "seconds_to_watching": statistics.median(r["seconds_to_watching"] for r in results),
        "setup_runs": [r["seconds_to_watching"] for r in results],
        **summarize(samples, ("p50_ms", "p95_ms", "max_ms")),
        "rss_mb": statistics.median(r["rss_mb"] for r in results),
        "peak_mb": max(r["peak_mb"] for r in results),
        "threads": results[-1]["threads"],
        "folders_walked": results[-1]["folders_walked"],
        "runs": results,
    }


# --- report -------------------------------------------------------------------------------


def table(rows: dict[str, dict[str, Any]], service: dict[str, Any]) -> list[str]:
    """The printed table: each backend beside the targets."""
    head = f"{'measure':<50} {'value':>12} {'target':>10}  result"
    lines = [head, "-" * len(head)]
    for name, row in rows.items():
        backend = "/".join(row["backends"])
        lines.append(f"{name} ({row['settings']['watcher']} -> {backend})")
        lines.append(
            f"{'  initialized -> watching, median':<50} {row['seconds_to_watching']:>11.2f}s "
            f"{'<3s':>10}  {verdict(row['seconds_to_watching'], TARGET_SETUP_S)}"
        )
        lines.append(
            f"{'  write -> notice, p95 (' + str(row['n']) + ' writes)':<50} "
            f"{row['p95_ms']:>10.1f}ms {'<100ms':>10}  "
            f"{verdict(row['p95_ms'], TARGET_LATENCY_P95_MS)}"
        )
        lines.append(
            f"{'  server RSS, median':<50} {row['rss_mb']:>10.1f}MB {'<150MB':>10}  "
            f"{verdict(row['rss_mb'], TARGET_RSS_MB)}"
        )
        lines.append(
            f"    (setup runs: {', '.join(f'{s:.2f} s' for s in row['setup_runs'])}; notice "
            f"p50 {row['p50_ms']:.1f} ms, max {row['max_ms']:.1f} ms; peak RSS "
            f"{row['peak_mb']:.1f} MB; {row['threads']} threads; "
            f"{row['folders_walked']:,} folders walked)"
        )
    lines.append(
        f"Watchman service: crawl {service['crawl_seconds']:.1f} s, RSS {service['rss_mb']:.0f} MB"
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the table and write the JSON."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--files", type=int, default=1_000_000, help="files in the workspace")
    parser.add_argument("--folders", type=int, default=50_000, help="folders they are in")
    parser.add_argument("--runs", type=int, default=3, help="servers per backend")
    parser.add_argument("--writes", type=int, default=50, help="latency samples per server")
    parser.add_argument("--output", type=Path, default=RESULTS, help="JSON results file")
    args = parser.parse_args(argv)
    if shutil.which("watchman") is None:
        print("needs the `watchman` service (apt-get install watchman)", file=sys.stderr)
        return 1

    began = time.perf_counter()
    load_before = os.getloadavg()
    root = workspace(args.files, args.folders).resolve()
    target = probe(root)
    rows: dict[str, dict[str, Any]] = {}
    with PrivateWatchman() as watchman, scratch("readkeeper-bench-monorepo-") as (_, log):
        os.environ.update(watchman.env)  # the servers' Watchman (common.clean_env)
        print("Watchman: watch-project and its crawl ...", file=sys.stderr)
        service = {"crawl_seconds": crawl(watchman, root)}
        for name, settings in BACKENDS.items():
            print(f"measuring {name} ...", file=sys.stderr)
            rows[name] = bench_backend(root, target, settings, args.runs, args.writes, log)
        service["rss_mb"] = proc_status(watchman.pid)["VmRSS"]

    meta = {
        **machine(),
        "files": args.files,
        "folders": args.folders,
        "watchman": subprocess.run(
            ["watchman", "--version"], capture_output=True, text=True
        ).stdout.strip(),
        "load_avg_before": load_before,
        "load_avg_after": os.getloadavg(),
        "seconds": time.perf_counter() - began,
    }
    print(
        f"readkeeper monorepo benchmark: {args.files:,} files in {args.folders:,} folders, "
        f"Watchman {meta['watchman']}, Python {meta['python']}, {meta['cpus']} CPUs, "
        f"load {load_before[0]:.2f}, {meta['seconds']:.0f} s"
    )
    print("\n".join(table(rows, service)))
    targets = {
        f"{name}_{figure}": (row[key], target)
        for name, row in rows.items()
        for figure, key, target in (
            ("setup_seconds", "seconds_to_watching", TARGET_SETUP_S),
            ("latency_p95_ms", "p95_ms", TARGET_LATENCY_P95_MS),
            ("rss_mb", "rss_mb", TARGET_RSS_MB),
        )
    }
    write_json(
        args.output,
        {"meta": meta, "targets": scored(targets), "watchman_service": service, **rows},
    )
    print(f"\nwritten to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
