"""What the `compact` line-number style saves (issue 16): the tokens of reads of real
files with `padded` numbers (`cat -n`, the default) and with `compact` ones.

Run it as `.venv/bin/python bench/bench_numbers.py` (a few seconds). Two measurements,
each reading files through the core once per style, with `force` (so that a big source
file gives its lines, not its outline); the `tokens` of each result are its exact count:

- **Python modules as an agent reads them**: every `.py` file of CPython's standard
  library, with the default caps; only files read whole in both styles count (a read
  cut at the line limit or the token cap would show other lines in each).
- **every text file, whole**: the standard library's `.py`, `.txt`, `.rst`, `.json`,
  `.html`, `.xml`, `.cfg` and `.csv` files under `max_size_bytes`, without a token cap
  or line limit (so that both styles show every line).

Prints the saving per file (median and spread) and over all files, and writes
`bench/results/numbers.json`.
"""

from __future__ import annotations

import argparse
import statistics
import sysconfig
from pathlib import Path
from typing import Any

from common import machine, percentile, write_json
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import ReadParams, unstructure
from readkeeper.settings import Settings

RESULTS = Path(__file__).resolve().parent / "results" / "numbers.json"
SUFFIXES = {".py", ".txt", ".rst", ".json", ".html", ".xml", ".cfg", ".csv"}


def files(lib: Path, suffixes: set[str], limit: int) -> list[Path]:
    found = sorted(
        p
        for p in lib.rglob("*")
        if p.suffix in suffixes
        and "site-packages" not in p.parts
        and p.is_file()
        and 0 < p.stat().st_size <= Settings().max_size_bytes
    )
    return found[:limit]


def tokens(core: Readkeeper, path: Path) -> int | None:
    """The tokens of a whole read of `path`, or None when it is not text read whole."""
    try:
        result = unstructure(core.read(ReadParams(str(path), force=True)))
    except ReadkeeperError:
        return None  # not text (a binary test fixture), or not readable
    if result["type"] != "text" or result["file"].get("partial"):
        return None
    value: int = result["file"]["tokens"]
    return value


def measure(lib: Path, paths: list[Path], settings: dict[str, object]) -> dict[str, Any]:
    """Each file's tokens in both styles, and the savings."""
    padded = Readkeeper(roots=[str(lib)], client_settings=settings)
    compact = Readkeeper(roots=[str(lib)], client_settings={**settings, "line_numbers": "compact"})
    rows = []
    for path in paths:
        a, b = tokens(padded, path), tokens(compact, path)
        if a and b:
            rows.append({"file": str(path.relative_to(lib)), "padded": a, "compact": b})
    savings = [1 - r["compact"] / r["padded"] for r in rows]
    total_padded = sum(r["padded"] for r in rows)
    total_compact = sum(r["compact"] for r in rows)
    summary = {
        "files": len(rows),
        "saving_median": statistics.median(savings),
        "saving_p10": percentile(savings, 10),
        "saving_p90": percentile(savings, 90),
        "tokens_padded": total_padded,
        "tokens_compact": total_compact,
        "saving_total": 1 - total_compact / total_padded,
    }
    return {"summary": summary, "files": rows}


def report(title: str, summary: dict[str, Any]) -> None:
    print(f"{title}: {summary['files']} files")
    print(f"  tokens, padded (cat -n):  {summary['tokens_padded']:>12,}")
    print(f"  tokens, compact:          {summary['tokens_compact']:>12,}")
    print(f"  saving over all files:    {summary['saving_total']:>12.1%}")
    print(
        f"  saving per file:          median {summary['saving_median']:.1%}, "
        f"p10 {summary['saving_p10']:.1%}, p90 {summary['saving_p90']:.1%}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=5_000, help="at most this many files")
    args = parser.parse_args(argv)
    lib = Path(sysconfig.get_paths()["stdlib"])
    print(f"readkeeper line numbers, CPython's standard library at {lib}")
    as_read = measure(lib, files(lib, {".py"}, args.files), {})
    report("Python modules read whole with the default caps", as_read["summary"])
    whole = {"max_tokens": 10**8, "default_limit": 10**8}
    every = measure(lib, files(lib, SUFFIXES, args.files), whole)
    report("every text file, whole (no cap, no line limit)", every["summary"])
    write_json(RESULTS, {"machine": machine(), "python_as_read": as_read, "every_file": every})
    print(f"written to {RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
