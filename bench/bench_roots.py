"""What it costs to notice a replaced workspace root: the one lstat per request.

A root deleted and created again (`rm -rf ws && git clone ... ws`) is opened again
when the folder held open is no longer the one at the root's path (files/paths.py,
`Anchor.current`): one lstat of the root on every request that opens something
beneath it. This times the in-process core's stub re-read and forced read of a small
file with that check and with it switched off (the folder held is taken as current,
as before the check), and the check alone, and writes bench/results/roots.json.

    .venv/bin/python bench/bench_roots.py [--samples N]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

from common import machine, scratch, summarize, write_json
from readkeeper.core import Readkeeper
from readkeeper.files.beneath import Anchor
from readkeeper.protocol import ReadParams

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "roots.json"


def timed(call: Callable[[], object], samples: int) -> list[float]:
    for _ in range(50):  # warm up: imports on first use, the token table
        call()
    times = []
    for _ in range(samples):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=5000)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()

    rows: dict[str, dict[str, float]] = {}
    with scratch("rk-bench-roots-") as (root, _):
        ws = root / "a" / "deep" / "workspace"
        ws.mkdir(parents=True)
        path = ws / "small.py"
        path.write_text("".join(f"value_{i} = compute({i})\n" for i in range(28)))
        core = Readkeeper(roots=[str(ws)])
        core.tokens.warm_up()
        stub, forced = ReadParams(str(path)), ReadParams(str(path), force=True)
        core.read(stub)
        checked = Anchor.current
        for label, check in (("checked", checked), ("unchecked", lambda self: True)):
            Anchor.current = check  # type: ignore[method-assign]
            try:
                rows[f"stub re-read, {label}"] = summarize(
                    timed(lambda: core.read(stub), args.samples)
                )
                rows[f"forced read, {label}"] = summarize(
                    timed(lambda: core.read(forced), args.samples)
                )
            finally:
                Anchor.current = checked  # type: ignore[method-assign]
        anchor = Anchor.open(str(ws))
        rows["Anchor.current alone"] = summarize(timed(anchor.current, args.samples))

    print(f"{'row':<28}{'p50 µs':>10}{'p95 µs':>10}{'mean µs':>10}")
    for name, row in rows.items():
        print(
            f"{name:<28}{row['p50_ms'] * 1000:>10.1f}{row['p95_ms'] * 1000:>10.1f}"
            f"{row['mean_ms'] * 1000:>10.1f}"
        )
    write_json(args.output, {"machine": machine(), "samples": args.samples, "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
