"""Benchmark the watcher (issue 4): notice latency, large-workspace setup, event bursts.

Run it as `.venv/bin/python bench/bench_watch.py`. It prints a table and writes the same
figures to `bench/results/watch.json`. Figures are printed beside their targets with
pass/MISS; nothing is asserted, since timings depend on the machine and its load.

(a) latency: a file the session has read is rewritten by this process (an external
    write) 200 times; each sample is the time from the write returning to the
    `readkeeper/didChangeReadFiles` notification for it being read off the pipe. With
    the default `watch_debounce_ms` (50 ms) the coalescing quiet time is most of it.
(b) setup: a generated workspace of 50,000 files in 2,000 folders; the time from the
    `initialized` notification to `readkeeper/stats` saying the watcher is watching,
    the server's RSS then, and the first read, sent while the setup runs (beside the
    same server with the watcher off, whose first read also loads the token table);
    the median of 3 fresh servers. Row (b2) adds a node_modules of 20,000 folders,
    which the watcher skips without a watch.
(c) bursts of 10,000 events: 5,000 rewrites (open-truncate, write, close: two inotify
    events each) over 1,000 files in 10 folders, two of them read by the session.
    Live: this process writes as fast as it can while the server watches; reported
    are the events the watcher handled per second until it caught up (the last
    write's notice arrived) and how long after the last write that was. Queued (c2):
    the server is stopped (SIGSTOP) while the writes are made, so the events wait in
    the kernel's queue (`max_queued_events`, 16,384 by default), then resumed: how
    fast it drains a burst that arrives all at once.
(d) a long burst with reads (issue 16): 50,000 rewrites over 1,000 files in 10 folders
    while 100 other files the session has read are each rewritten once, spread
    through the burst (by a writer thread, so the notices are read as they come); the
    time from each read file's write to its notice (p50, max), and the server's CPU
    time (every thread, from /proc) per watcher event over the burst.

The server is driven by a minimal synchronous JSON-RPC client over stdio (common.py).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

from common import (
    READKEEPER_SERVE,
    LspProcess,
    cpu_seconds,
    machine,
    proc_status,
    scored,
    scratch,
    summarize,
    verdict,
    write_json,
)

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "watch.json"
NOTICE = "readkeeper/didChangeReadFiles"

TARGET_LATENCY_P95_MS = 100.0
TARGET_SETUP_S = 3.0
TARGET_RSS_MB = 200.0
TARGET_BURST_NOTICE_P50_MS = 100.0  # issue 16, (d)
TARGET_BURST_NOTICE_MAX_MS = 300.0


# --- a server that keeps its notices ------------------------------------------------------


class Server(LspProcess):
    """A `readkeeper serve` subprocess; requests one at a time, notices kept in order."""

    close_timeout = 10.0

    def __init__(self, root: Path, log: IO[bytes], settings: dict[str, Any] | None = None):
        super().__init__(READKEEPER_SERVE, log)
        self.notices: list[tuple[float, dict[str, Any]]] = []  # (arrival, params)
        self.initialize(root, settings or {})

    def notified(self, message: dict[str, Any]) -> None:
        """Keep the change notices the server pushes."""
        if message["method"] == NOTICE:
            self.notices.append((time.perf_counter(), message["params"]))

    def wait_notice(self, path: str, after: int, timeout: float = 30.0) -> float:
        """Arrival time of the first notice for `path` among notices[after:]."""
        signal.alarm(int(timeout) + 1)  # a notice that never comes ends the run
        try:
            index = after
            while True:
                while index < len(self.notices):
                    arrived, params = self.notices[index]
                    index += 1
                    if any(c["file_path"] == path for c in params["changes"]):
                        return arrived
                self._receive()
        finally:
            signal.alarm(0)

    def watcher(self) -> dict[str, Any]:
        """The watcher's block of readkeeper/stats."""
        status: dict[str, Any] = self.request("readkeeper/stats", {})["watcher"]
        return status

    def wait_watching(self, timeout: float = 120.0) -> dict[str, Any]:
        """Wait until the watcher watches (or polls): its status."""
        deadline = time.perf_counter() + timeout
        while True:
            status = self.watcher()
            if status["state"] not in ("off", "starting"):
                return status
            if time.perf_counter() > deadline:
                raise RuntimeError(f"the watcher did not start: {status}")
            time.sleep(0.002)

    def rss_mb(self) -> dict[str, float]:
        """The server's memory (VmRSS, VmHWM) and threads, from /proc."""
        return proc_status(self.pid, ("VmRSS", "VmHWM", "Threads"))


# --- (a) latency --------------------------------------------------------------------------


def bench_latency(root: Path, writes: int, log: IO[bytes]) -> dict[str, Any]:
    """(a): write -> notice latency of one read file, `writes` samples."""
    target = root / "latency" / "watched.py"
    target.parent.mkdir(parents=True)
    target.write_text("value = 0\n")
    server = Server(root, log)
    try:
        server.wait_watching()
        server.request("readkeeper/read", {"file_path": str(target)})
        for i in range(10):  # warm-up (the token table loads after `initialized`)
            before = len(server.notices)
            target.write_text(f"warm = {i}\n")
            server.wait_notice(str(target), before)
            server.request("readkeeper/changes", {})
        samples = []
        for i in range(1, writes + 1):
            before = len(server.notices)
            target.write_text(f"value = {i}\n")
            written = time.perf_counter()
            samples.append(server.wait_notice(str(target), before) - written)
            # Each change is one notice; drain the agent's channel as an agent would.
            server.request("readkeeper/changes", {})
        status = server.watcher()
    finally:
        server.close()
    ms = [x * 1000 for x in samples]
    return {
        **summarize(ms, ("p50_ms", "p95_ms", "min_ms", "max_ms")),
        "debounce_ms": 50,
        "samples_ms": [round(x, 2) for x in ms],
        "watcher": status,
    }


# --- (b) setup of a large workspace -------------------------------------------------------


def generate(root: Path, files: int, folders: int) -> None:
    """Make `files` files spread over `folders` folders under `root`."""
    per = files // folders
    tops = max(1, int(folders**0.5))
    body = "def f(x):\n    return x + 1\n" * 4
    for folder in range(folders):
        path = root / f"pkg{folder % tops:03d}" / f"mod{folder:05d}"
        path.mkdir(parents=True, exist_ok=True)
        for index in range(per):
            (path / f"file{index:03d}.py").write_text(body)


def bench_setups(root: Path, log: IO[bytes], label: str, runs: int) -> dict[str, Any]:
    """`runs` fresh servers; the median run (by time to watching), with every run's time."""
    results = sorted((bench_setup(root, log, label) for _ in range(runs)), key=_setup_key)
    median = dict(results[len(results) // 2])
    median["runs"] = [r["seconds_to_watching"] for r in results]
    median["rss_runs_mb"] = [r["rss_mb"] for r in results]
    return median


def _setup_key(result: dict[str, Any]) -> float:
    return float(result["seconds_to_watching"])


def bench_setup(root: Path, log: IO[bytes], label: str) -> dict[str, Any]:
    """(b), one fresh server: initialized -> watching, its RSS, and a read sent meanwhile."""
    probe = next(root.glob("pkg000/*/file000.py"))
    server = Server(root, log)
    try:
        # A read sent while the setup walks the workspace: it must not wait for it.
        asked = time.perf_counter()
        server.request("readkeeper/read", {"file_path": str(probe)})
        read_ms = (time.perf_counter() - asked) * 1000
        status = server.wait_watching()
        ready = time.perf_counter() - server.initialized_at
        time.sleep(0.5)  # let the setup's garbage settle before RSS is taken
        rss = server.rss_mb()
        status = server.watcher()
    finally:
        server.close()
    return {
        "label": label,
        "seconds_to_watching": ready,
        "server_setup_ms": status["setup_ms"],
        "read_during_setup_ms": read_ms,
        "rss_mb": rss["VmRSS"],
        "peak_mb": rss["VmHWM"],
        "threads": rss["Threads"],
        "folders_walked": status["folders_walked"],
        "skipped_folders": status["skipped_folders"],
        "state": status["state"],
    }


def watcher_off(root: Path, log: IO[bytes]) -> dict[str, float]:
    """The same server with the watcher off, for scale: RSS, and its first read."""
    probe = next(root.glob("pkg000/*/file000.py"))
    server = Server(root, log, {"watch": False})
    try:
        asked = time.perf_counter()
        server.request("readkeeper/read", {"file_path": str(probe)})
        read_ms = (time.perf_counter() - asked) * 1000
        time.sleep(0.5)
        return {"rss_mb": server.rss_mb()["VmRSS"], "first_read_ms": read_ms}
    finally:
        server.close()


# --- (c) a burst of events ----------------------------------------------------------------


def burst_files(root: Path) -> list[str]:
    """The 1,000 files of a burst, 100 in each of 10 folders under `root / "burst"`."""
    paths = []
    for i in range(10):
        folder = root / "burst" / f"d{i}"
        folder.mkdir(parents=True)
        for index in range(100):
            path = folder / f"f{index:03d}.txt"
            path.write_text("0\n")
            paths.append(str(path))
    return paths


def rewrite(path: str, i: int) -> None:
    """One write of a burst: open-truncate, write, close (about two inotify events)."""
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    os.write(fd, b"%d\n" % i)
    os.close(fd)


def bench_burst(root: Path, writes: int, log: IO[bytes], queued: bool) -> dict[str, Any]:
    """`writes` rewrites of 1,000 files (two of them read), each an open-truncate, a
    write and a close: about two inotify events each. Live, the watcher keeps up with
    this process writing; queued, the server is stopped (SIGSTOP) while the events pile
    up in the kernel's queue, then resumed: how fast it drains them."""
    paths = burst_files(root)
    first, last = paths[0], paths[-1]
    # Written once after the burst: its notice comes once every earlier event is handled.
    sentinel = root / "burst" / "sentinel.txt"
    sentinel.write_text("before\n")
    server = Server(root, log)
    try:
        server.wait_watching()
        for path in (first, last, str(sentinel)):
            server.request("readkeeper/read", {"file_path": path})
        before = server.watcher()
        mark = len(server.notices)
        if queued:
            os.kill(server.pid, signal.SIGSTOP)
        started = time.perf_counter()
        for i in range(writes):
            rewrite(paths[i % len(paths)], i)
        sentinel.write_text("after\n")
        burst_done = time.perf_counter()
        if queued:
            os.kill(server.pid, signal.SIGCONT)
            started = time.perf_counter()
        caught_up = server.wait_notice(str(sentinel), mark)
        after = server.watcher()
        noticed = {c["file_path"] for _, p in server.notices[mark:] for c in p["changes"]}
    finally:
        server.close()
    events = after["events"] - before["events"]
    elapsed = caught_up - started
    return {
        "queued": queued,
        "writes": writes,
        "files": len(paths),
        "events": events,
        "write_seconds": burst_done - (burst_done if queued else started),
        "seconds_to_caught_up": elapsed,
        "lag_after_last_write_ms": (caught_up - burst_done) * 1000,
        "events_per_second": events / elapsed,
        "coalesced_events": after["coalesced_events"] - before["coalesced_events"],
        "overflows": after["overflows"] - before["overflows"],
        "both_read_files_noticed": {first, last} <= noticed,
    }


def bench_burst_reads(root: Path, writes: int, reads: int, log: IO[bytes]) -> dict[str, Any]:
    """(d): `writes` rewrites of 1,000 files while `reads` read files are rewritten once
    each, evenly spread through the burst: each read file's write -> notice, and the
    server's CPU time per watcher event."""
    paths = burst_files(root)
    read_folder = root / "read"
    read_folder.mkdir()
    watched = [str(read_folder / f"r{i:03d}.py") for i in range(reads)]
    for path in watched:
        Path(path).write_text("value = 0\n")
    sentinel = root / "sentinel.txt"
    sentinel.write_text("before\n")
    written: dict[str, float] = {}
    every = max(1, writes // reads)

    def burst() -> None:
        for i in range(writes):
            rewrite(paths[i % len(paths)], i)
            if i % every == every // 2 and len(written) < len(watched):
                path = watched[len(written)]
                Path(path).write_text(f"value = {i}\n")
                written[path] = time.perf_counter()
        sentinel.write_text("after\n")
        timing["written"] = time.perf_counter()

    timing: dict[str, float] = {}
    server = Server(root, log)
    try:
        server.wait_watching()
        for path in [*watched, str(sentinel)]:
            server.request("readkeeper/read", {"file_path": path})
        before, cpu_before = server.watcher(), cpu_seconds(server.pid)
        mark = len(server.notices)
        started = time.perf_counter()
        writer = threading.Thread(target=burst)
        writer.start()
        server.wait_notice(str(sentinel), mark, timeout=300)
        writer.join()
        cpu = cpu_seconds(server.pid) - cpu_before
        after = server.watcher()
    finally:
        server.close()
    noticed: dict[str, float] = {}
    for arrived, params in server.notices[mark:]:
        for change in params["changes"]:
            noticed.setdefault(change["file_path"], arrived)
    ms = [(noticed[p] - written[p]) * 1000 for p in watched if p in noticed and p in written]
    events = after["events"] - before["events"]
    return {
        **summarize(ms, ("p50_ms", "p95_ms", "max_ms")),
        "writes": writes,
        "read_files_written": len(written),
        "read_files_noticed": len(ms),
        "events": events,
        "seconds": time.perf_counter() - started,
        "write_seconds": timing["written"] - started,
        "cpu_seconds": cpu,
        "cpu_us_per_event": cpu / events * 1e6 if events else None,
        "overflows": after["overflows"] - before["overflows"],
        "samples_ms": [round(x, 2) for x in ms],
    }


# --- report -------------------------------------------------------------------------------


def table(
    latency: dict[str, Any],
    setups: list[dict[str, Any]],
    bare: dict[str, float],
    bursts: list[dict[str, Any]],
    long_burst: dict[str, Any],
) -> list[str]:
    """The printed table: each figure beside its target."""
    head = f"{'measure':<58} {'value':>12} {'target':>10}  result"
    rows = [head, "-" * len(head)]
    rows.append(f"{'(a) write -> notice, p50':<58} {latency['p50_ms']:>10.1f}ms {'':>10}")
    rows.append(
        f"{'    p95 over ' + str(latency['n']) + ' writes':<58} {latency['p95_ms']:>10.1f}ms "
        f"{'<=100ms':>10}  {verdict(latency['p95_ms'], TARGET_LATENCY_P95_MS)}"
    )
    rows.append(f"    (min {latency['min_ms']:.1f} ms, max {latency['max_ms']:.1f} ms)")
    for setup in setups:
        rows.append(
            f"{'(' + setup['label'] + ') initialized -> watching, median':<58} "
            f"{setup['seconds_to_watching']:>11.2f}s {'<=3s':>10}  "
            f"{verdict(setup['seconds_to_watching'], TARGET_SETUP_S)}"
        )
        rows.append(
            f"{'    server RSS when watching':<58} {setup['rss_mb']:>10.1f}MB {'<=200MB':>10}  "
            f"{verdict(setup['rss_mb'], TARGET_RSS_MB)}"
        )
        rows.append(
            f"    (setup {setup['server_setup_ms']:.0f} ms in the server, "
            f"{setup['folders_walked']} folders watched, {setup['skipped_folders']} skipped, "
            f"the first read, sent during setup, took {setup['read_during_setup_ms']:.1f} ms, "
            f"{setup['threads']} threads, peak {setup['peak_mb']:.1f} MB; runs: "
            + ", ".join(f"{t:.2f} s" for t in setup["runs"])
            + ")"
        )
    rows.append(
        f"    (watcher off: RSS {bare['rss_mb']:.1f} MB, first read {bare['first_read_ms']:.1f} ms)"
    )
    for burst in bursts:
        label = "(c2) queued burst: drained" if burst["queued"] else "(c) live burst: processed"
        rows.append(f"{label + ' events per second':<58} {burst['events_per_second']:>11.0f}/s")
        where = (
            "queued while the server was stopped, drained"
            if burst["queued"]
            else f"written in {burst['write_seconds'] * 1000:.0f} ms; caught up"
        )
        rows.append(
            f"    ({burst['writes']} writes to {burst['files']} files, {burst['events']} events "
            f"{where} {burst['seconds_to_caught_up'] * 1000:.0f} ms after "
            f"{'resuming' if burst['queued'] else 'the first write'}; "
            f"{burst['coalesced_events']} events coalesced, {burst['overflows']} overflows)"
        )
    return rows + long_burst_rows(long_burst)


def long_burst_rows(d: dict[str, Any]) -> list[str]:
    """Row (d) of the table."""
    rows = []
    rows.append(
        f"{'(d) ' + format(d['writes'], ',') + '-write burst: read file notice, p50':<58} "
        f"{d['p50_ms']:>10.1f}ms {'<=100ms':>10}  "
        f"{verdict(d['p50_ms'], TARGET_BURST_NOTICE_P50_MS)}"
    )
    rows.append(
        f"{'    max':<58} {d['max_ms']:>10.1f}ms {'<=300ms':>10}  "
        f"{verdict(d['max_ms'], TARGET_BURST_NOTICE_MAX_MS)}"
    )
    per_event = d["cpu_us_per_event"] or 0.0
    rows.append(f"{'    server CPU per watcher event':<58} {per_event:>10.1f}us")
    rows.append(
        f"    ({d['read_files_noticed']} of {d['read_files_written']} read files noticed, "
        f"{d['events']} events written in {d['write_seconds']:.1f} s, "
        f"{d['cpu_seconds']:.2f} s of CPU in {d['seconds']:.1f} s, "
        f"{d['overflows']} overflows)"
    )
    return rows


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the table and write the JSON."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--writes", type=int, default=200, help="samples for (a)")
    parser.add_argument("--files", type=int, default=50_000, help="files for (b)")
    parser.add_argument("--folders", type=int, default=2_000, help="folders for (b)")
    parser.add_argument("--node-modules", type=int, default=20_000, help="folders for (b2)")
    parser.add_argument("--runs", type=int, default=3, help="servers started for (b)")
    parser.add_argument("--burst", type=int, default=5_000, help="writes (2 events each) for (c)")
    parser.add_argument("--long-burst", type=int, default=50_000, help="writes for (d)")
    parser.add_argument("--only-long-burst", action="store_true", help="run (d) alone")
    parser.add_argument("--output", type=Path, default=RESULTS, help="JSON results file")
    args = parser.parse_args(argv)

    began = time.perf_counter()
    load_before = os.getloadavg()
    with scratch("readkeeper-bench-watch-") as (workdir, log):
        if args.only_long_burst:
            long_burst = bench_burst_reads(workdir / "d", args.long_burst, 100, log)
            print("\n".join(long_burst_rows(long_burst)))
            return 0
        print("measuring notice latency ...", file=sys.stderr)
        latency = bench_latency(workdir / "a", args.writes, log)
        print(f"generating {args.files:,} files in {args.folders:,} folders ...", file=sys.stderr)
        big = workdir / "b"
        generate(big, args.files, args.folders)
        print("measuring setup ...", file=sys.stderr)
        setups = [bench_setups(big, log, "b", args.runs)]
        bare = watcher_off(big, log)
        if args.node_modules:
            modules = big / "node_modules"
            for i in range(args.node_modules):
                (modules / f"m{i // 100:03d}" / f"pkg{i:05d}").mkdir(parents=True)
            setups.append(bench_setups(big, log, "b2", args.runs))
        print(f"measuring bursts of {args.burst:,} writes ...", file=sys.stderr)
        bursts = [
            bench_burst(workdir / "c", args.burst, log, queued=False),
            bench_burst(workdir / "c2", args.burst, log, queued=True),
        ]
        print(f"measuring a burst of {args.long_burst:,} writes with reads ...", file=sys.stderr)
        long_burst = bench_burst_reads(workdir / "d", args.long_burst, 100, log)

    meta = {
        **machine(),
        "max_user_watches": _read("/proc/sys/fs/inotify/max_user_watches"),
        "max_user_instances": _read("/proc/sys/fs/inotify/max_user_instances"),
        "max_queued_events": _read("/proc/sys/fs/inotify/max_queued_events"),
        "load_avg_before": load_before,
        "load_avg_after": os.getloadavg(),
        "seconds": time.perf_counter() - began,
    }
    print(
        f"readkeeper watch benchmark: Python {meta['python']}, {meta['cpus']} CPUs, "
        f"load {load_before[0]:.2f}, {meta['seconds']:.0f} s; inotify: max_user_watches "
        f"{meta['max_user_watches']}, max_queued_events {meta['max_queued_events']}"
    )
    print("\n".join(table(latency, setups, bare, bursts, long_burst)))
    targets = {
        "latency_p95_ms": (latency["p95_ms"], TARGET_LATENCY_P95_MS),
        "setup_seconds": (setups[0]["seconds_to_watching"], TARGET_SETUP_S),
        "rss_mb": (setups[0]["rss_mb"], TARGET_RSS_MB),
        "burst_notice_p50_ms": (long_burst["p50_ms"], TARGET_BURST_NOTICE_P50_MS),
        "burst_notice_max_ms": (long_burst["max_ms"], TARGET_BURST_NOTICE_MAX_MS),
    }
    report = {
        "meta": meta,
        "targets": scored(targets),
        "latency": latency,
        "setup": setups,
        "watcher_off": bare,
        "bursts": bursts,
        "long_burst": long_burst,
    }
    write_json(args.output, report)
    print(f"\nwritten to {args.output}")
    return 0


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


if __name__ == "__main__":
    raise SystemExit(main())
