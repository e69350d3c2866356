"""What the journal (issue 32: the record behind the picture of the session) costs a
read, and what the journal and the picture weigh at their cap.

Cases: the stub of a re-read of a small file (the cheapest read there is, so the
journal's share of it is the largest), with the journal as it runs and with its call
replaced by a do-nothing one; then the journal's memory at its cap (5,000 events of
distinct paths) and the time to render `readkeeper stats --html`'s page of them.

Run it as `.venv/bin/python bench/bench_journal.py` (about ten seconds). Prints a table
and writes `bench/results/journal.json`.
"""

from __future__ import annotations

import contextlib
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from common import machine, scratch, summarize, write_json
from readkeeper.core import Readkeeper
from readkeeper.picture import page
from readkeeper.protocol import ReadParams
from readkeeper.state.journal import JOURNAL_EVENTS, Event, Journal, Tally

ROUNDS = 3000


@contextlib.contextmanager
def _no_journal(*args: Any, **kwargs: Any) -> Iterator[Tally]:
    yield Tally()


def _stub_reads(cores: dict[str, Readkeeper], path: str) -> dict[str, list[float]]:
    """Stub reads of `path` by each core in turn, round after round (the machine's
    drift falls on every case alike)."""
    params = ReadParams(file_path=path)
    samples: dict[str, list[float]] = {name: [] for name in cores}
    for core in cores.values():
        core.read(params)
    for _ in range(ROUNDS):
        for name, core in cores.items():
            start = time.perf_counter()
            core.read(params)
            samples[name].append((time.perf_counter() - start) * 1000)
    return {name: taken[100:] for name, taken in samples.items()}  # after a warm-up


def main() -> None:
    report: dict[str, Any] = {"machine": machine(), "rounds": ROUNDS, "cases": {}}
    print(f"{'case':<34} {'p50 ms':>8} {'p95 ms':>8}")
    with scratch("rk-bench-journal-") as (root, _log):
        (root / "small.py").write_text("x = 1\n" * 20)
        path = str(root / "small.py")
        cores = {"stub read, journal on": Readkeeper(roots=[str(root)])}
        cores["stub read, journal off"] = Readkeeper(roots=[str(root)])
        cores["stub read, journal off"].stats.journal.call = _no_journal  # type: ignore[method-assign]
        for name, samples in _stub_reads(cores, path).items():
            figures = summarize(samples, ("p50_ms", "p95_ms"))
            report["cases"][name] = figures
            print(f"{name:<34} {figures['p50_ms']:>8.4f} {figures['p95_ms']:>8.4f}")

    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    journal = Journal()
    for n in range(JOURNAL_EVENTS * 2):  # twice the cap: the oldest half dropped
        path = f"/home/user/project/src/package_{n % 97}/module_{n}.py"
        journal.add(Event(time.time_ns(), "chat-1", "text", path, 1200, 300, 1.5))
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    held = sum(s.size_diff for s in after.compare_to(before, "filename"))
    history = journal.snapshot()
    start = time.perf_counter()
    html = page({"history": history, "total": {"reads": JOURNAL_EVENTS * 2}})
    render_ms = (time.perf_counter() - start) * 1000
    report["at_cap"] = {
        "events": len(history["events"]),
        "dropped": history["dropped"],
        "journal_bytes": held,
        "page_bytes": len(html.encode()),
        "page_render_ms": round(render_ms, 1),
    }
    print(
        f"journal at its cap: {len(history['events']):,} events, {held / 1e6:.2f} MB held; "
        f"the page {len(html.encode()) / 1e3:.0f} KB in {render_ms:.0f} ms"
    )
    write_json(Path(__file__).resolve().parent / "results" / "journal.json", report)


if __name__ == "__main__":
    main()
