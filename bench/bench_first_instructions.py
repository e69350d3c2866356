"""What a first read costs the MCP server in instructions (issue 34), the figure that
holds whatever else runs on the machine: before/after figures of a change to the
first-read path, where wall-clock time here swings by half.

Run it as `.venv/bin/python bench/bench_first_instructions.py` (a few minutes; needs
valgrind). The server (`readkeeper mcp --standalone`, `read_ahead` off so nothing runs
beside the calls, a new empty user cache each run, `PYTHONHASHSEED=0`) runs under
`valgrind --tool=callgrind`, driven by a raw stdio client: `initialize`, ten forced
reads of a small file (the token table loaded, every lazy import made), then the reads
of a row. callgrind's counters are zeroed before the row's first read and dumped once
its last is answered (`callgrind_control`), so a row's figure is the server's whole
share of its reads (each line parsed, the read, the result, its JSON, the write, and
whatever its other threads did meanwhile) divided by the reads. Counting from the
start instead and subtracting a run without the reads left a noise of +-10 M
instructions a read (the start's threads do not interleave the same way twice); see
`server_env` for the GIL's switch interval.

Rows: a read with the default parameters of each of `--first` never-read modules of
bench_peer.py's standard-library selection (an outline for most), and a read with
`force` of as many others. `--keep DIR` keeps each row's dump for `callgrind_annotate`.
`--profile` instead runs the server under cProfile (a profiler a thread, merged; no
valgrind) and prints each row's top functions by cumulative time. Results:
`bench/results/first_instructions.json`.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench_peer import copies, real_modules
from common import clean_env, compile_like_an_install, machine, write_json
from readkeeper.read import token_table

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "first_instructions.json"
READKEEPER_MCP = [sys.executable, "-m", "readkeeper", "mcp", "--standalone"]
ROWS = ("first read, stdlib module", "first read, stdlib module, force")


def drive(
    argv: list[str],
    env: dict[str, str],
    calls: list[dict[str, Any]],
    between: Callable[[int], None] | None = None,
    after: int = 0,
) -> None:
    """Start `argv`, make the handshake and `calls` one at a time, end its input;
    `between(pid)` is called before call number `after` and once the last is answered."""
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    def send(message: dict[str, Any]) -> None:
        stdin.write(json.dumps(message).encode() + b"\n")
        stdin.flush()

    def answer() -> dict[str, Any]:
        while True:
            message: dict[str, Any] = json.loads(stdout.readline())
            if "id" in message:
                return message

    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw"}}
    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello})
    answer()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    for number, arguments in enumerate(calls, 1):
        if between is not None and number == after + 1:
            between(proc.pid)
        params = {"name": "read", "arguments": arguments}
        send({"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params})
        reply = answer()
        if "result" not in reply or reply["result"].get("isError"):
            raise RuntimeError(f"read {arguments} failed: {reply}")
    if between is not None:
        between(proc.pid)
    stdin.close()
    proc.wait(timeout=600)


def token_table_entries(root: Path, warm_up: list[dict[str, Any]], folder: Path) -> list[Path]:
    """The token table's entries of the user cache, made by one server run without
    valgrind: each measured server finds them in its new cache folder, so none writes
    them (tens of MB, on a thread of its own, sometimes while a row is counted)."""
    drive([*READKEEPER_MCP, "--root", str(root)], server_env(folder), warm_up)
    kept = folder / "cache" / "readkeeper"
    return [p for p in kept.iterdir() if p.name.startswith(token_table.CACHE_KIND)]


def server_env(scratch: Path, table: Sequence[Path] = ()) -> dict[str, str]:
    """The server's environment: its own user cache (`table`: the token table's entries
    copied in), nothing read ahead, and a `sitecustomize` that sets the GIL's switch
    interval to a second. At the default 5 ms, a thread waiting for the GIL asks for it
    every 5 ms of wall-clock time, which under valgrind is a varying number of
    instructions: counts of one build swung by +-7 M a read; with it, two runs agree
    within 0.2 M."""
    site = scratch / "site"
    site.mkdir()
    if table:
        cache = scratch / "cache" / "readkeeper"
        cache.mkdir(parents=True, mode=0o700)
        for entry in table:
            shutil.copy(entry, cache / entry.name)
    (site / "sitecustomize.py").write_text("import sys\n\nsys.setswitchinterval(1.0)\n")
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    return {
        **clean_env(),
        "XDG_CACHE_HOME": str(scratch / "cache"),
        "READKEEPER_READ_AHEAD": "false",
        "PYTHONHASHSEED": "0",
        "PYTHONPATH": path,
    }


def instructions(
    root: Path,
    warm_up: list[dict[str, Any]],
    calls: list[dict[str, Any]],
    keep: Path | None,
    table: list[Path],
) -> int:
    """The server's instructions (all its threads) from the answer to its warm-up's
    last call to the answer to the last of `calls`: callgrind's counters are zeroed
    after the warm-up and dumped after the calls (`callgrind_control`)."""
    with tempfile.TemporaryDirectory(prefix="rk-first-ir-") as scratch:
        out = Path(scratch) / "callgrind.out"
        argv = [
            "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
            *READKEEPER_MCP, "--root", str(root),
        ]  # fmt: skip
        steps = iter(("--zero", "--dump=calls"))

        def control(pid: int) -> None:
            subprocess.run(
                ["callgrind_control", next(steps), str(pid)],
                check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300,
            )  # fmt: skip

        env = server_env(Path(scratch), table)
        drive(argv, env, warm_up + calls, control, len(warm_up))
        for dump in sorted(Path(scratch).glob("callgrind.out.*")):
            data = dump.read_bytes()
            if b"calls" in data[:2000]:
                if keep is not None:  # for callgrind_annotate
                    keep.write_bytes(data)
                found = re.search(rb"^(?:summary|totals): (\d+)", data, re.MULTILINE)
                assert found is not None, "no total in callgrind's output"
                return int(found.group(1))
        raise RuntimeError(f"no dump of the calls: {sorted(os.listdir(scratch))}")


def profile(root: Path, calls: list[dict[str, Any]], row: str, top: int) -> None:
    """Print the `top` functions by cumulative time of the server serving `calls`, over
    its threads (the SDK serves a costly read on a worker thread)."""
    with tempfile.TemporaryDirectory(prefix="rk-first-prof-") as scratch:
        out = Path(scratch) / "server.prof"
        argv = [sys.executable, __file__, "--as-server", str(out), "--root", str(root)]
        drive(argv, server_env(Path(scratch)), calls)
        print(f"--- {row}: the server's top {top} functions by cumulative time")
        pstats.Stats(str(out)).sort_stats("cumulative").print_stats(top)


def serve_profiled(out: str, argv: list[str]) -> int:
    """`readkeeper mcp --standalone argv`, each thread under a profiler of its own, the
    profiles merged into `out` at its end."""
    from readkeeper.cli import main as readkeeper_main

    profiles: list[cProfile.Profile] = []

    def on_new_thread(*_: object) -> None:
        # The thread's first event: a profiler of its own replaces this hook.
        profiler = cProfile.Profile()
        profiles.append(profiler)
        profiler.enable()

    threading.setprofile(on_new_thread)
    main_profile = cProfile.Profile()
    profiles.append(main_profile)
    main_profile.enable()
    try:
        code = readkeeper_main(["mcp", "--standalone", *argv])
    finally:
        main_profile.disable()
        merged = pstats.Stats(main_profile)
        for profiler in profiles[1:]:
            merged.add(profiler)
        merged.dump_stats(out)
    return code


def main() -> int:
    if sys.argv[1:2] == ["--as-server"]:
        return serve_profiled(sys.argv[2], sys.argv[3:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--first", type=int, default=12, help="never-read modules per row")
    parser.add_argument("--profile", action="store_true", help="cProfile, not callgrind")
    parser.add_argument("--top", type=int, default=45, help="functions shown by --profile")
    parser.add_argument("--output", type=Path, default=RESULTS, help="JSON results file")
    parser.add_argument("--keep", type=Path, help="a folder for each row's callgrind dump")
    args = parser.parse_args()
    compile_like_an_install()
    modules = real_modules("stdlib")[: 2 * args.first]
    with (
        tempfile.TemporaryDirectory(prefix="rk-first-files-") as folder,
        tempfile.TemporaryDirectory(prefix="rk-first-table-") as table_folder,
    ):
        root = Path(folder)
        warm = root / "warm.py"
        warm.write_text("x = 1\n" * 300)
        warm_up = [{"file_path": str(warm), "force": True}] * 10
        default = copies(root / "default", modules[: args.first])
        forced = copies(root / "force", modules[args.first :])
        reads = {
            ROWS[0]: [{"file_path": str(p)} for p in default],
            ROWS[1]: [{"file_path": str(p), "force": True} for p in forced],
        }
        if args.profile:
            for row, calls in reads.items():
                profile(root, warm_up + calls, row, args.top)
            return 0
        made = token_table_entries(root, warm_up, Path(table_folder))
        table = {}
        for row, calls in reads.items():
            keep = None if args.keep is None else args.keep / f"callgrind.{len(table)}.out"
            total = instructions(root, warm_up, calls, keep, made)
            table[row] = {"instructions_per_read": total // len(calls)}
    print(f"server instructions per read (callgrind), {args.first} modules a row")
    for row, figures in table.items():
        print(f"{row:<42}{figures['instructions_per_read'] / 1e6:>10.2f} M")
    write_json(
        args.output,
        {
            "benchmark": "first_instructions",
            "machine": machine(),
            "first": args.first,
            "rows": table,
        },
    )
    print(f"written to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
