"""What escaping line breaks costs a read (issue 28, item 10): the time of forced reads,
whole and ranged, of a 1 MB text file with LF endings, with CRLF endings, and with a
U+2028 on every 50th line (the lines that hold one are escaped).

Run it as `.venv/bin/python bench/bench_quoting.py` (about half a minute). Prints the
median and p95 per case and writes `bench/results/quoting.json`. To compare with the
code before the escaping, run it on that commit: the cases are the same.
"""

from __future__ import annotations

import sysconfig
import time
from pathlib import Path

from common import machine, scratch, summarize, write_json
from readkeeper.core import Readkeeper
from readkeeper.protocol import ReadParams

SIZE = 1_000_000
ROUNDS = 15


def _text() -> str:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    parts: list[str] = []
    total = 0
    for path in sorted(stdlib.glob("*.py")):
        part = path.read_text(encoding="utf-8", errors="replace")
        parts.append(part)
        total += len(part)
        if total >= SIZE:
            break
    return "".join(parts)[:SIZE]


def main() -> None:
    text = _text()
    separated = "\n".join(
        line + "\u2028" if n % 50 == 0 else line for n, line in enumerate(text.split("\n"))
    )
    cases = {
        "lf": text.encode(),
        "crlf": text.replace("\n", "\r\n").encode(),
        "u2028_every_50th_line": separated.encode(),
    }
    report: dict[str, object] = {"machine": machine(), "bytes": SIZE, "cases": {}}
    settings = {"max_tokens": 10_000_000, "default_limit": 10_000_000}
    print(f"{'case':<24} {'read':<7} {'p50 ms':>8} {'p95 ms':>8}")
    with scratch("rk-bench-quoting-") as (root, _log):
        core = Readkeeper(roots=[str(root)], client_settings=settings)
        for name, data in cases.items():
            path = root / f"{name}.txt"
            path.write_bytes(data)
            for how in ("whole", "ranged"):
                samples: list[float] = []
                for n in range(ROUNDS):
                    # A limit of its own each round: no view is served from the cache.
                    limit = 5_000_000 - n if how == "whole" else 1_000_000 - n
                    params = ReadParams(file_path=str(path), force=True, limit=limit)
                    if how == "ranged":
                        params = ReadParams(file_path=str(path), force=True, offset=2, limit=limit)
                    start = time.perf_counter()
                    core.read(params)
                    samples.append((time.perf_counter() - start) * 1000)
                figures = summarize(samples[2:], ("p50_ms", "p95_ms"))  # after a warm-up
                report["cases"][f"{name}/{how}"] = figures  # type: ignore[index]
                print(f"{name:<24} {how:<7} {figures['p50_ms']:>8.1f} {figures['p95_ms']:>8.1f}")
    write_json(Path(__file__).resolve().parent / "results" / "quoting.json", report)


if __name__ == "__main__":
    main()
