"""Benchmark the sandbox (issue 10): how often racing requests get out of the workspace,
and what an in-process read costs, before and after the open-beneath change.

Run it as `.venv/bin/python bench/bench_sandbox.py` (about a minute). It prints a table
and writes the same figures to `bench/results/sandbox.json`. Nothing is asserted.

Race rows: requests go to a real `readkeeper serve` over stdio, one at a time (watcher
off: it plays no part, and the rename storm would only cost CPU), while a swapper
process exchanges a name with a symlink out of the workspace (renameat2
RENAME_EXCHANGE) in a tight loop. Each row counts the tries that succeeded, were
refused (by `data.kind`), escaped (goal 0), and error replies without a `data.kind`
(goal 0):

- `read, file swapped`: ws/r.txt <-> a link to outside/r.txt, which holds the secret;
  an escape is a reply carrying the secret.
- `read, folder swapped`: ws/rd <-> a link to an outside folder with r.txt (the secret).
- `create, folder swapped`: a write of a new ws/d/new-<i>.txt; an escape is a name
  that appears in the outside folder (a file, or a leftover temporary file).
- `edit, folder swapped` / `write, folder swapped`: ws/e/f<i>.txt, each read beforehand
  (without the swapper), with byte-identical twins outside (so a change that follows
  the link passes every content check); an escape is a twin whose bytes changed, or a
  new name beside them.

Escapes are counted apart from the other columns: an escaped read also counts as ok,
and a temporary file left outside by a refused create counts as an escape too. The
`by operation` figures add the rows of each operation up.

Timing rows, in this process (`Readkeeper.read`, no JSON-RPC): a 1 KB file read with
`force` (open, read, hash, decode, count tokens, record) and its `file_unchanged` stub
re-read (open, read, hash): the per-read cost of how a workspace path is opened.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import (
    READKEEPER_SERVE,
    LspProcess,
    machine,
    scratch,
    summarize,
    write_json,
)
from readkeeper.core import Readkeeper
from readkeeper.protocol import ReadParams

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from swapper import swapping  # noqa: E402  (the race tests' swapper)

RESULTS = HERE / "results" / "sandbox.json"
SECRET = "sandbox-secret-5f1e9c-outside-the-workspace"


class RaceServer(LspProcess):
    """`LspProcess` whose requests return the error reply instead of raising."""

    def call(self, method: str, params: Any) -> tuple[Any, dict[str, Any] | None]:
        self._next_id += 1
        ident = self._next_id
        self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        while True:
            message = self._receive()
            if "method" in message or message.get("id") != ident:
                continue
            return message.get("result"), message.get("error")


class Row:
    def __init__(self) -> None:
        self.tries = self.ok = 0
        self.refused: Counter[str] = Counter()
        self.escapes: list[str] = []
        self.without_kind: list[str] = []

    def settle(self, result: Any, error: dict[str, Any] | None) -> None:
        self.tries += 1
        if SECRET in json.dumps([result, error]):
            self.escapes.append("a reply carries the secret")
        if error is None:
            self.ok += 1
            return
        data = error.get("data")
        if isinstance(data, dict) and "kind" in data:
            self.refused[data["kind"]] += 1
        else:
            self.without_kind.append(f"{error.get('code')} {error.get('message')}")

    def as_json(self) -> dict[str, Any]:
        return {
            "tries": self.tries,
            "ok": self.ok,
            "refused": dict(self.refused.most_common()),
            "escapes": len(self.escapes),
            "errors_without_kind": len(self.without_kind),
            "first_escapes": self.escapes[:5],
            "first_errors_without_kind": self.without_kind[:5],
        }


def listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def outside_changes(outside: Path, before: dict[str, bytes]) -> list[str]:
    now = listing(outside)
    changed = [f"modified outside: {n}" for n in before if now.get(n) != before[n]]
    return changed + [f"created outside: {n}" for n in now if n not in before]


def race(
    server: RaceServer, a: Path, b: Path, tries: int, request: Callable[[int], tuple[str, Any]]
) -> Row:
    row = Row()
    with swapping(a, b):
        for i in range(tries):
            row.settle(*server.call(*request(i)))
    return row


def races(root: Path, log: Any, tries: int) -> dict[str, Row]:
    ws = root / "ws"
    ws.mkdir()
    rows: dict[str, Row] = {}
    server = RaceServer(READKEEPER_SERVE, log)
    try:
        server.initialize(ws, {"watch": False})

        def read(path: Path) -> Callable[[int], tuple[str, Any]]:
            return lambda i: ("readkeeper/read", {"file_path": str(path), "force": True})

        outside = root / "outside-read-file"
        outside.mkdir()
        (outside / "r.txt").write_text(f"{SECRET}\n")
        (ws / "r.txt").write_text("inside\n")
        (ws / ".r.txt.link").symlink_to(outside / "r.txt")
        rows["read, file swapped"] = race(
            server, ws / "r.txt", ws / ".r.txt.link", tries, read(ws / "r.txt")
        )

        outside = root / "outside-read-folder"
        outside.mkdir()
        (outside / "r.txt").write_text(f"{SECRET}\n")
        (ws / "rd").mkdir()
        (ws / "rd" / "r.txt").write_text("inside\n")
        (ws / ".rd.link").symlink_to(outside, target_is_directory=True)
        rows["read, folder swapped"] = race(
            server, ws / "rd", ws / ".rd.link", tries, read(ws / "rd" / "r.txt")
        )

        outside = root / "outside-create"
        outside.mkdir()
        (ws / "d").mkdir()
        (ws / ".d.link").symlink_to(outside, target_is_directory=True)
        row = rows["create, folder swapped"] = race(
            server,
            ws / "d",
            ws / ".d.link",
            tries,
            lambda i: (
                "readkeeper/write",
                {"file_path": str(ws / "d" / f"new-{i}.txt"), "content": f"created {i}\n"},
            ),
        )
        row.escapes += outside_changes(outside, {})

        for verb, method, params in (
            ("edit", "readkeeper/edit", lambda i: {"old_string": "keep", "new_string": f"e{i}"}),
            ("write", "readkeeper/write", lambda i: {"content": f"rewritten {i}\n"}),
        ):
            folder, outside = ws / f"{verb}-dir", root / f"outside-{verb}"
            folder.mkdir()
            outside.mkdir()
            for i in range(tries):
                for where in (folder, outside):
                    (where / f"f{i}.txt").write_text(f"file {i}\nkeep this line\n")
                server.request("readkeeper/read", {"file_path": str(folder / f"f{i}.txt")})
            (ws / f".{verb}.link").symlink_to(outside, target_is_directory=True)
            before = listing(outside)

            def change(
                i: int, folder: Path = folder, method: str = method, params: Any = params
            ) -> tuple[str, Any]:
                return method, {"file_path": str(folder / f"f{i}.txt"), **params(i)}

            row = rows[f"{verb}, folder swapped"] = race(
                server, folder, ws / f".{verb}.link", tries, change
            )
            row.escapes += outside_changes(outside, before)
    finally:
        server.close()
    return rows


def read_timings(root: Path, samples: int) -> dict[str, dict[str, float]]:
    ws = root / "timing"
    ws.mkdir()
    path = ws / "small.py"
    path.write_text("".join(f"value_{i} = compute({i}, key)  # {i:04}\n" for i in range(28)))
    core = Readkeeper(roots=[str(ws)])

    def timed(params: ReadParams) -> list[float]:
        for _ in range(50):  # warm up: imports on first use, the token table
            core.read(params)
        times = []
        for _ in range(samples):
            started = time.perf_counter()
            core.read(params)
            times.append((time.perf_counter() - started) * 1000)
        return times

    forced = timed(ReadParams(str(path), force=True))
    core.read(ReadParams(str(path)))
    stub = timed(ReadParams(str(path)))
    figures = ("p50_ms", "p95_ms", "min_ms", "mean_ms")
    return {
        f"read {path.stat().st_size} B file (force), in-process core": summarize(
            forced, figures, "samples"
        ),
        "stub re-read, in-process core": summarize(stub, figures, "samples"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tries", type=int, default=1000, help="racing requests per row")
    parser.add_argument("--samples", type=int, default=2000, help="timed in-process reads")
    parser.add_argument("--output", type=Path, default=RESULTS, help="JSON results file")
    args = parser.parse_args()

    with scratch("rk-bench-sandbox-") as (root, log):
        started = time.perf_counter()
        rows = races(root, log, args.tries)
        race_s = time.perf_counter() - started
        timings = read_timings(root, args.samples)

    by_operation: dict[str, dict[str, int]] = {}
    for name, row in rows.items():
        total = by_operation.setdefault(
            name.split(",")[0], {"tries": 0, "escapes": 0, "errors_without_kind": 0}
        )
        total["tries"] += row.tries
        total["escapes"] += len(row.escapes)
        total["errors_without_kind"] += len(row.without_kind)

    print(f"racing requests through readkeeper serve, one at a time ({race_s:.0f} s)")
    print(f"{'row':<26}{'tries':>7}{'ok':>7}{'refused':>9}{'escapes':>9}{'no kind':>9}")
    for name, row in rows.items():
        refused = sum(row.refused.values())
        print(
            f"{name:<26}{row.tries:>7}{row.ok:>7}{refused:>9}"
            f"{len(row.escapes):>9}{len(row.without_kind):>9}"
        )
    print("by operation (goal: 0 escapes, 0 errors without a kind):")
    for op, total in by_operation.items():
        verdict = "pass" if total["escapes"] == total["errors_without_kind"] == 0 else "MISS"
        print(
            f"  {op:<8} escapes {total['escapes']}/{total['tries']}, "
            f"errors without a kind {total['errors_without_kind']}  {verdict}"
        )
    print(f"{'in-process reads':<50}{'p50 ms':>9}{'p95 ms':>9}{'min ms':>9}")
    for name, t in timings.items():
        print(f"{name:<50}{t['p50_ms']:>9.3f}{t['p95_ms']:>9.3f}{t['min_ms']:>9.3f}")

    write_json(
        args.output,
        {
            "races": {name: row.as_json() for name, row in rows.items()},
            "by_operation": by_operation,
            "read_in_process": timings,
            "machine": {**machine(), "load_average": os.getloadavg()},
        },
    )
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
