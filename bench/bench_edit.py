"""Benchmark `readkeeper/edit` (issue 3): round trip on an 80 KB file, and its overhead.

Run it as `.venv/bin/python bench/bench_edit.py`. It prints a table and writes the same
figures to `bench/results/edit.json`. Figures are printed beside their target with
pass/MISS; nothing is asserted, since timings depend on the machine and its load.

Rows (all on the same 80 KB, 2,000-line Python-like file, page cache warm):

- `edit, LSP`: `readkeeper/edit` round trips through a real `readkeeper serve` over
  stdio, each a real change (one line toggled between two spellings), with no read in
  between: each edit leaves the read-state the next one is checked against. Every one
  pays for the full commit: lease, read and hash, temp file, fsync, swap, directory
  fsync. Target: p50 <= 8 ms.
- `edit over a disjoint change, LSP`: the same, but another program rewrites a line far
  from the edit before each one (not timed), so each edit diffs the snapshot against
  the file and merges.
- `write, LSP`: `readkeeper/write` of the whole 80 KB file, alternating two contents.
- `edit, in-process core`: `Readkeeper.edit(...)` in this process: the core alone, no
  JSON-RPC, no pipe, no thread hop.
- `plain replace + atomic write`: the floor: read the bytes, decode, `str.replace` once,
  encode, write a temp file, fsync, `os.replace`, fsync the folder, in this process.

The overhead rows are p50 differences: what the LSP edit costs over the plain floor, and
how that splits into the core's checks (core - floor) and the transport (LSP - core).
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from common import READKEEPER_SERVE, machine, server, summarize, write_json
from readkeeper.core import Readkeeper
from readkeeper.protocol import EditParams, ReadParams

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "edit.json"
TARGET_EDIT_P50_MS = 8.0
EDITED_LINE = 1000  # the middle of the file


def workload(n_lines: int = 2000, seed: int = 3) -> str:
    """About 80 KB of plausible Python: 2,000 lines of about 40 bytes."""
    rng = random.Random(seed)
    words = ["order", "invoice", "account", "session", "payment", "report", "ledger"]
    lines = []
    for i in range(n_lines):
        a, b = rng.choice(words), rng.choice(words)
        lines.append(f"    {a}_{i} = get_{b}(key, {rng.randint(0, 999)})")
    return "\n".join(lines) + "\n"


def toggles(text: str) -> tuple[str, str]:
    """Two spellings of the edited line; the edit swaps one for the other."""
    line = text.split("\n")[EDITED_LINE - 1]
    return line, line.replace(" = ", " =  ", 1)


# --- measuring ----------------------------------------------------------------------------


def timed(
    samples: int, step: Callable[[int], None], before: Callable[[int], None] | None = None
) -> list[float]:
    """Milliseconds of `step(i)` for each i (after an untimed `before(i)`)."""
    times = []
    for i in range(samples):
        if before is not None:
            before(i)
        started = time.perf_counter()
        step(i)
        times.append((time.perf_counter() - started) * 1000)
    return times


def summary(ms: list[float]) -> dict[str, float]:
    return summarize(ms, count="samples")


def plain_replace_and_atomic_write(path: Path, old: str, new: str) -> None:
    """The floor: what any careful tool does to replace a string, with nothing checked."""
    text = path.read_bytes().decode("utf-8")
    data = text.replace(old, new, 1).encode("utf-8")
    tmp = path.with_name(f".{path.name}.bench-tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=300, help="timed edits per row")
    parser.add_argument("--output", type=Path, default=RESULTS, help="JSON results file")
    args = parser.parse_args()
    n = args.samples

    text = workload()
    one, other = toggles(text)
    rows: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="rk-bench-edit-") as folder:
        root = Path(folder).resolve()
        path = root / "module.py"

        def swap(i: int) -> tuple[str, str]:
            return (one, other) if i % 2 == 0 else (other, one)

        # Floor: plain in-process replace and atomic write.
        path.write_text(text)
        rows["plain replace + atomic write"] = summary(
            timed(n, lambda i: plain_replace_and_atomic_write(path, *swap(i)))
        )

        # The core in this process.
        path.write_text(text)
        core = Readkeeper(roots=[str(root)])
        core.read(ReadParams(str(path)))
        rows["edit, in-process core"] = summary(
            timed(n, lambda i: core.edit(EditParams(str(path), *swap(i))) and None)
        )

        with (
            open(root / "server.log", "wb") as log,
            server(READKEEPER_SERVE, root, log) as lsp,
        ):
            path.write_text(text)
            lsp.request("readkeeper/read", {"file_path": str(path)})

            def lsp_edit(i: int) -> None:
                old, new = swap(i)
                lsp.request(
                    "readkeeper/edit",
                    {"file_path": str(path), "old_string": old, "new_string": new},
                )

            for i in range(20):  # warm up: thread pool, imports on first use
                lsp_edit(i)
            rows["edit, LSP"] = summary(timed(n, lsp_edit))

            far = text.split("\n")[100]

            def someone_else_edits(i: int) -> None:
                # Another program changes line 101, far from the edited line 1000.
                current = path.read_text()
                marker = f"  # touched {i}"
                line = next(ln for ln in current.split("\n") if ln.startswith(far))
                path.write_text(current.replace(line, far + marker, 1))

            merges = timed(n, lsp_edit, before=someone_else_edits)
            rows["edit over a disjoint change, LSP"] = summary(merges)
            stats = lsp.request("readkeeper/stats", {"session": ""})
            merged = stats["session"]["disjoint_merges"]

            contents = [text, text.replace(one, other, 1)]
            lsp.request("readkeeper/read", {"file_path": str(path), "force": True})
            rows["write, LSP"] = summary(
                timed(
                    n,
                    lambda i: lsp.request(
                        "readkeeper/write",
                        {"file_path": str(path), "content": contents[i % 2]},
                    ),
                )
            )

    floor = rows["plain replace + atomic write"]["p50_ms"]
    core_p50 = rows["edit, in-process core"]["p50_ms"]
    lsp_p50 = rows["edit, LSP"]["p50_ms"]
    overhead = {
        "lsp_edit_over_plain_ms": lsp_p50 - floor,
        "core_checks_over_plain_ms": core_p50 - floor,
        "transport_lsp_over_core_ms": lsp_p50 - core_p50,
        "lsp_edit_over_plain_ratio": lsp_p50 / floor if floor else float("nan"),
    }
    verdict = "pass" if lsp_p50 <= TARGET_EDIT_P50_MS else "MISS"

    print(f"readkeeper/edit on an 80 KB file ({len(text.encode()):,} bytes, 2,000 lines)")
    print(f"{'row':<36}{'p50 ms':>9}{'p95 ms':>9}{'min ms':>9}  target")
    for name, row in rows.items():
        target = f"p50 <= {TARGET_EDIT_P50_MS:g} ms: {verdict}" if name == "edit, LSP" else ""
        print(
            f"{name:<36}{row['p50_ms']:>9.2f}{row['p95_ms']:>9.2f}{row['min_ms']:>9.2f}  {target}"
        )
    print(
        "overhead of the LSP edit over the plain floor: "
        f"{overhead['lsp_edit_over_plain_ms']:.2f} ms"
        f" (core checks {overhead['core_checks_over_plain_ms']:.2f} ms,"
        f" transport {overhead['transport_lsp_over_core_ms']:.2f} ms)"
    )
    print(f"disjoint merges applied by the server: {merged} of {n}")

    write_json(
        args.output,
        {
            "file_bytes": len(text.encode()),
            "rows": rows,
            "overhead": overhead,
            "target": {"edit_lsp_p50_ms": TARGET_EDIT_P50_MS, "verdict": verdict},
            "disjoint_merges": merged,
            "machine": {**machine(), "load_average": os.getloadavg()},
        },
    )
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
