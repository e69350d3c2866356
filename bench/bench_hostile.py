"""Benchmark the budgets on costly steps (issue 28, items 5 and 6): what they cost on
normal work, and how small reads fare while a hostile file is being read.

Run it as `.venv/bin/python bench/bench_hostile.py`. It prints a table and writes the
same figures to `bench/results/hostile.json`. Rows:

1. Normal work, in process: the outline of typing.py (parse and symbol walk, on a new
   content digest each time) and a normal diff (typing.py with ten lines changed here
   and there), p50 of wall time. The diff is also timed with plain difflib on the same
   lines, for the budget's overhead; the outline's overhead is the difference between
   this script's figure on a checkout before the budgets and after.
2. Under attack, over LSP: a hostile request is sent, then 3-line reads of another file
   one after another until it has answered (at least 20): their p50/p95, and how long
   the hostile request took. Hostile inputs: the nested JS of item 5, the difflib
   rewrite of item 6 as a stale edit (refused by the pair cap; and a smaller one that
   difflib runs on until its deadline) and as a delta re-read; and none, for reference.
"""

from __future__ import annotations

import difflib
import statistics
import time
import typing
from pathlib import Path
from typing import Any

from common import (
    READKEEPER_SERVE,
    LspProcess,
    machine,
    percentile,
    scratch,
    write_json,
)
from readkeeper.read import diffs
from readkeeper.read.readers import outline

TYPING = Path(typing.__file__).read_text(encoding="utf-8")
NESTED_JS = "function f(){" * 18_000 + "}" * 18_000
BEFORE = "".join(f"v{i % 400:03d}\n" for i in range(40_000))
AFTER = "".join(f"v{i * 7 % 400:03d}\n" for i in range(40_000))
# Under the pair cap (diffs.MAX_LINE_PAIRS), so difflib runs until its deadline.
SLOW_BEFORE = "".join(f"v{i % 400:03d}\n" for i in range(20_000))
SLOW_AFTER = "".join(f"v{i * 7 % 400:03d}\n" for i in range(20_000))
RUNS = 15
ATTACKS = (
    "none",
    "nested JS outline",
    "stale edit, slow diff",
    "stale edit, 1 s of difflib",
    "delta re-read, slow diff",
)
MIN_SMALL = 20


def _ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 2)


def normal_work() -> dict[str, Any]:
    grammar = outline.grammar_for("typing.py")
    assert grammar is not None
    outline.symbols(TYPING, grammar)  # the grammar loaded
    parse: list[float] = []
    for run in range(RUNS):
        text = TYPING + f"# {run}\n"
        start = time.perf_counter()
        outline.symbols(text, grammar, key=f"bench-{run}-{time.time_ns()}")
        parse.append(time.perf_counter() - start)
    lines = TYPING.splitlines(keepends=True)
    changed = list(lines)
    for index in range(10, len(changed), len(changed) // 10):
        changed[index] = "# changed\n"
    after = "".join(changed)
    bounded: list[float] = []
    plain: list[float] = []
    for _ in range(RUNS):
        start = time.perf_counter()
        diffs.bounded_diff(TYPING, after, "typing.py", 100_000)
        bounded.append(time.perf_counter() - start)
        start = time.perf_counter()
        list(difflib.unified_diff(lines, changed, n=2))
        plain.append(time.perf_counter() - start)
    return {
        "outline_typing_p50_ms": _ms(parse),
        "diff_bounded_p50_ms": _ms(bounded),
        "diff_plain_difflib_p50_ms": _ms(plain),
        "diff_overhead_ratio": round(_ms(bounded) / _ms(plain), 3),
    }


class Client(LspProcess):
    """An LspProcess that can leave a request running and collect its answer later."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.answers: dict[int, dict[str, Any]] = {}

    def send(self, method: str, params: Any) -> int:
        self._next_id += 1
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return self._next_id

    def wait(self, ident: int) -> dict[str, Any]:
        while ident not in self.answers:
            message = self._receive()
            if "method" not in message and "id" in message:
                self.answers[message["id"]] = message
        return self.answers.pop(ident)


def under_attack(
    name: str, root: Path, log: Any, command: list[str] = READKEEPER_SERVE
) -> dict[str, Any]:
    (root / "notes.txt").write_text("one\ntwo\nthree\nfour\n")
    client = Client(command, log, root)
    try:
        client.initialize(root)
        small = {"file_path": "notes.txt", "limit": 3, "force": True}
        client.wait(client.send("readkeeper/read", small))  # the read path loaded
        hostile = prepare(name, root, client)
        started = time.perf_counter()
        ident = client.send(*hostile) if hostile else None
        took: float | None = None
        samples: list[float] = []
        while len(samples) < MIN_SMALL or (ident is not None and took is None):
            begin = time.perf_counter()
            client.wait(client.send("readkeeper/read", small))
            samples.append(time.perf_counter() - begin)
            if ident is not None and ident in client.answers:
                took = time.perf_counter() - started
        if ident is not None and took is None:
            client.wait(ident)
            took = time.perf_counter() - started
        ms = [s * 1000 for s in samples]
        return {
            "hostile": name,
            "small_reads": len(ms),
            "small_p50_ms": round(percentile(ms, 50), 2),
            "small_p95_ms": round(percentile(ms, 95), 2),
            "hostile_ms": None if took is None else round(took * 1000, 1),
        }
    finally:
        client.close()


def prepare(name: str, root: Path, client: Client) -> tuple[str, dict[str, Any]] | None:
    """Set the hostile case up; the request to send, or None for no attack."""
    if name == "nested JS outline":
        (root / "deep.js").write_text(NESTED_JS)
        return "readkeeper/read", {"file_path": "deep.js"}
    if name in ("stale edit, slow diff", "stale edit, 1 s of difflib"):
        slow = name.endswith("difflib")
        (root / "big.txt").write_text(SLOW_BEFORE if slow else BEFORE)
        client.wait(client.send("readkeeper/read", {"file_path": "big.txt"}))
        (root / "big.txt").write_text(SLOW_AFTER if slow else AFTER)
        edit = {"file_path": "big.txt", "old_string": "v000\nv001\n", "new_string": "x\n"}
        return "readkeeper/edit", edit
    if name == "delta re-read, slow diff":
        write = {"file_path": "big.txt", "content": BEFORE}
        client.wait(client.send("readkeeper/write", write))
        (root / "big.txt").write_text(AFTER)
        return "readkeeper/read", {"file_path": "big.txt"}
    return None


def main() -> None:
    report: dict[str, Any] = {"machine": machine(), "normal": normal_work(), "attacks": []}
    for name in ATTACKS:
        with scratch("rk-bench-hostile-") as (workdir, log):
            report["attacks"].append(under_attack(name, workdir, log))
    normal = report["normal"]
    print(f"outline of typing.py          p50 {normal['outline_typing_p50_ms']:8.2f} ms")
    print(
        f"normal diff (bounded / plain) p50 {normal['diff_bounded_p50_ms']:8.2f} / "
        f"{normal['diff_plain_difflib_p50_ms']:.2f} ms (x{normal['diff_overhead_ratio']})"
    )
    print(f"{'hostile input':28} {'reads':>6} {'p50 ms':>8} {'p95 ms':>8} {'hostile ms':>11}")
    for row in report["attacks"]:
        print(
            f"{row['hostile']:28} {row['small_reads']:6} {row['small_p50_ms']:8.2f} "
            f"{row['small_p95_ms']:8.2f} {row['hostile_ms'] or 0:11.1f}"
        )
    write_json(Path(__file__).parent / "results" / "hostile.json", report)


if __name__ == "__main__":
    main()
