"""Benchmark `readkeeper/attachments` (issue 6): assembling a turn's context.

Workload: 10,000 forwarded diagnostics over 500 files, three memory files (one over its
cap) and five change notices (files the session read, then changed on disk), fitted
into a 60,000-token budget. Measured in-process through the core and as an LSP round
trip through the real server. Prints a table and writes bench/results/attachments.json.
Nothing is asserted: the target is printed beside each figure.

Run: .venv/bin/python bench/bench_attachments.py [--requests N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from readkeeper.client import ReadkeeperClient
from readkeeper.core import Readkeeper
from readkeeper.protocol import AttachmentsParams, DiagnosticsParams, ReadParams

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "attachments.json"
TARGET_P50_MS = 50.0
FILES, PER_FILE = 500, 20
MESSAGES = [
    'Argument of type "str | None" cannot be assigned to parameter "name" of type "str"',
    'Import "requests" could not be resolved from source',
    '"total" is possibly unbound',
    'Expression of type "None" cannot be assigned to return type "int"',
    'Unused variable "response"',
]


def build_workspace(root: Path) -> tuple[list[dict[str, Any]], list[Path]]:
    (root / "AGENTS.md").write_text("".join(f"- rule {i}: be precise\n" for i in range(300)))
    (root / "CLAUDE.md").write_text("Run the tests with `bash tests/run`.\n" * 20)
    (root / ".github").mkdir()
    (root / ".github" / "copilot-instructions.md").write_text("Prefer small commits.\n" * 10)
    items = []
    for f in range(FILES):
        path = root / "src" / f"pkg{f // 50}" / f"module_{f}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("value = 1\n")
        items.append(
            {
                "uri": path.as_uri(),
                "version": 1,
                "diagnostics": [
                    {
                        "range": {
                            "start": {"line": i, "character": 4},
                            "end": {"line": i, "character": 9},
                        },
                        "severity": 1 + (i % 3),
                        "message": MESSAGES[(f + i) % len(MESSAGES)],
                        "source": "pyright",
                        "code": "reportGeneralTypeIssues",
                    }
                    for i in range(PER_FILE)
                ],
            }
        )
    changed = []
    for n in range(5):
        path = root / "src" / f"changed_{n}.py"
        path.write_text("".join(f"line {i} of file {n}\n" for i in range(200)))
        changed.append(path)
    return items, changed


def change(paths: list[Path], round_: int) -> None:
    """A new change to each file, so every measured request has five fresh notices."""
    for path in paths:
        lines = path.read_text().split("\n")
        lines[100] = f"line 100 changed in round {round_}"
        path.write_text("\n".join(lines))


def wait_until(condition: Any, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.002)


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def in_process(root: Path, items: list[dict[str, Any]], changed: list[Path], n: int) -> dict:
    core = Readkeeper(roots=[str(root)])
    pushed: list[Any] = []
    core.notices.on_notice = lambda session, changes: pushed.extend(changes)
    core.start_watching(lambda message: None, None)
    wait_until(lambda: core.watcher_status()["state"] != "starting", "the watcher")
    core.did_change_diagnostics(DiagnosticsParams(items=items))
    for path in changed:
        core.read(ReadParams(file_path=str(path)))
    core.tokens.warm_up()
    samples, last = [], {}
    for round_ in range(n):
        expected = len(pushed) + len(changed)
        change(changed, round_)
        wait_until(lambda goal=expected: len(pushed) >= goal, "the change notices")
        started = time.perf_counter()
        last = core.attachments(AttachmentsParams())
        samples.append((time.perf_counter() - started) * 1000)
    core.close()
    return {"samples": samples, "last": last}


async def over_lsp(root: Path, items: list[dict[str, Any]], changed: list[Path], n: int) -> dict:
    client = ReadkeeperClient()
    await client.start_server()
    try:
        await client.open_workspace(root)
        client.protocol.notify("readkeeper/didChangeDiagnostics", {"items": items})
        for _ in range(500):
            stats = await client.request("readkeeper/stats", {})
            if stats["watcher"]["state"] != "starting":
                break
            await asyncio.sleep(0.02)
        for path in changed:
            await client.request("readkeeper/read", {"file_path": str(path), "force": True})
        samples, last = [], {}
        for round_ in range(n):
            expected = pushed(client) + len(changed)
            change(changed, round_)
            for _ in range(5000):
                if pushed(client) >= expected:
                    break
                await asyncio.sleep(0.002)
            started = time.perf_counter()
            last = await client.request("readkeeper/attachments", {})
            samples.append((time.perf_counter() - started) * 1000)
        return {"samples": samples, "last": last}
    finally:
        await client.close()


def pushed(client: ReadkeeperClient) -> int:
    """Change notices the server has pushed so far (readkeeper/didChangeReadFiles)."""
    return sum(len(notice["changes"]) for notice in client.change_notices)


def summary(result: dict[str, Any]) -> dict[str, Any]:
    last = result["last"]
    kinds: dict[str, int] = {}
    for item in last["attachments"]:
        kinds[item["type"]] = kinds.get(item["type"], 0) + 1
    return {
        "p50_ms": statistics.median(result["samples"]),
        "p95_ms": percentile(result["samples"], 0.95),
        "n": len(result["samples"]),
        "used_tokens": last["used_tokens"],
        "attachments": kinds,
        "dropped": len(last["dropped"]),
        "truncated": sum(1 for a in last["attachments"] if a["truncated"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rk-bench-attach-") as tmp:
        root = Path(tmp).resolve()
        items, changed = build_workspace(root)
        core_run = summary(in_process(root, items, changed, args.requests))
    with tempfile.TemporaryDirectory(prefix="rk-bench-attach-") as tmp:
        root = Path(tmp).resolve()
        items, changed = build_workspace(root)
        lsp_run = summary(asyncio.run(over_lsp(root, items, changed, args.requests)))

    print(
        f"readkeeper attachments benchmark: Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}"
    )
    print(
        f"workload: {FILES * PER_FILE:,} diagnostics over {FILES} files, 3 memory files, "
        "5 change notices, 60,000-token budget"
    )
    print(f"{'measure':<28}{'p50':>10}{'p95':>10}{'n':>6}  {'target':<11}{'result':<7}tokens")
    print("-" * 84)
    for label, run in (("in-process core", core_run), ("LSP round trip", lsp_run)):
        verdict = "pass" if run["p50_ms"] <= TARGET_P50_MS else "MISS"
        print(
            f"{label:<28}{run['p50_ms']:>8.2f}ms{run['p95_ms']:>8.2f}ms{run['n']:>6}  "
            f"{'p50<=50ms':<11}{verdict:<7}{run['used_tokens']:,}"
        )
    print(
        f"attachments (LSP): {lsp_run['attachments']}, {lsp_run['truncated']} truncated, "
        f"{lsp_run['dropped']} dropped"
    )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "target_p50_ms": TARGET_P50_MS,
                "in_process": core_run,
                "lsp": lsp_run,
                "load": os.getloadavg()[0],
                "cpus": os.cpu_count(),
            },
            indent=2,
        )
    )
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
