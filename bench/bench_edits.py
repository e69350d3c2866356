"""Edits by anchor (issue 33), in sections, each a function returning its part of the
report; later sections (an edit-robustness corpus) add a function and a key.

Run it as `.venv/bin/python bench/bench_edits.py` (under a minute).

- **read_tokens**: the tokens of a whole read of real files (CPython's standard library
  and this repository's `server/`) as `cat -n` (the default, padded numbers) and as
  anchors (`12ab<tab>text`), each through the core with `force`, the exact count; only
  files read whole in both formats count. Also the candidate anchor forms, counted on
  the same lines with the same token table, which chose the one shown.

- **read_time**: what a read costs in each format, on the largest of the standard
  library's modules within the read caps: the median of forced re-reads (answered from
  the views kept), and of first anchored views (hashing and counting every line).

- **robustness**: the edit-robustness corpus (tests/edit_samples.py: at least 1,000
  base edits over real Python, C and JavaScript files, seeded), each in its variants:
  plain old_string edits with the slips models make, anchored edits, stale versions.
  Per form and variant: applied correctly, refused (and whether the refusal showed
  where to look), applied wrongly (the goal is 0); and the output tokens of the call
  an agent sends per edit in each form (exact variants).

Prints a table per section and writes `bench/results/edits.json`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import machine, percentile, write_json
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import ReadParams, unstructure
from readkeeper.read.anchors import short_hash
from readkeeper.settings import Settings

RESULTS = Path(__file__).resolve().parent / "results" / "edits.json"
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # edit_samples
REPO = Path(__file__).resolve().parents[1]

# The forms measured (number n, hash h, line text t).
FORMS: dict[str, Callable[[int, str, str], str]] = {
    "cat -n (padded)": lambda n, h, t: f"{n:>6}\t{t}",
    "compact numbers": lambda n, h, t: f"{n}\t{t}",
    "12ab<tab> (chosen)": lambda n, h, t: f"{n}{h}\t{t}",
    "12#ab<tab>": lambda n, h, t: f"{n}#{h}\t{t}",
    "12:ab<tab>": lambda n, h, t: f"{n}:{h}\t{t}",
    "12#ab|": lambda n, h, t: f"{n}#{h}|{t}",
}


def sources(limit: int) -> dict[str, list[Path]]:
    cap = Settings().max_size_bytes
    lib = Path(sysconfig.get_paths()["stdlib"])

    def python_files(root: Path) -> list[Path]:
        found = sorted(
            p
            for p in root.rglob("*.py")
            if "site-packages" not in p.parts and p.is_file() and 0 < p.stat().st_size <= cap
        )
        return found[:limit]

    return {"stdlib": python_files(lib), "readkeeper": python_files(REPO / "server")}


def _tokens(core: Readkeeper, path: Path, line_format: str) -> int | None:
    try:
        result = unstructure(core.read(ReadParams(str(path), force=True, line_format=line_format)))  # type: ignore[arg-type]
    except ReadkeeperError:
        return None
    if result["type"] != "text" or result["file"].get("partial"):
        return None
    value: int = result["file"]["tokens"]
    # The count a read reports is the count of what it shows (anchors are counted
    # without counting the joined text: read/anchors.py).
    assert value == core.tokens.count(result["file"]["content"]), path
    return value


def read_tokens(limit: int) -> dict[str, Any]:
    """Section: tokens of whole reads as cat -n and as anchors, and of each form."""
    section: dict[str, Any] = {}
    for name, paths in sources(limit).items():
        root = Path(sysconfig.get_paths()["stdlib"]) if name == "stdlib" else REPO / "server"
        core = Readkeeper(roots=[str(root)], client_settings={"max_tokens": 10**8})
        core.tokens.warm_up()
        rows = []
        forms = dict.fromkeys(FORMS, 0)
        for path in paths:
            cat_n, anchored = _tokens(core, path, "cat-n"), _tokens(core, path, "anchors")
            if not (cat_n and anchored):
                continue
            rows.append({"file": str(path.relative_to(root)), "cat_n": cat_n, "anchors": anchored})
            lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            for form, shape in FORMS.items():
                text = "\n".join(shape(n, short_hash(t), t) for n, t in enumerate(lines, 1))
                forms[form] += core.tokens.count(text)
        ratios = [r["anchors"] / r["cat_n"] for r in rows]
        total_cat, total_anchors = sum(r["cat_n"] for r in rows), sum(r["anchors"] for r in rows)
        section[name] = {
            "files": len(rows),
            "tokens_cat_n": total_cat,
            "tokens_anchors": total_anchors,
            "ratio_total": total_anchors / total_cat,
            "ratio_median": statistics.median(ratios),
            "ratio_p10": percentile(ratios, 10),
            "ratio_p90": percentile(ratios, 90),
            "forms": {
                form: {"tokens": t, "ratio": t / forms["cat -n (padded)"]}
                for form, t in forms.items()
            },
        }
        core.close()
    return section


def print_read_tokens(section: dict[str, Any]) -> None:
    print("anchored reads against cat -n (whole reads, exact tokens)")
    head = f"  {'files':<12}{'n':>6}{'cat -n':>12}{'anchors':>12}{'total':>8}{'median':>8}"
    print(head + f"{'p10':>7}{'p90':>7}")
    for name, s in section.items():
        print(
            f"  {name:<12}{s['files']:>6}{s['tokens_cat_n']:>12,}{s['tokens_anchors']:>12,}"
            f"{s['ratio_total']:>8.3f}{s['ratio_median']:>8.3f}{s['ratio_p10']:>7.3f}{s['ratio_p90']:>7.3f}"
        )
    print("  anchor forms, tokens relative to cat -n:")
    for name, s in section.items():
        shown = ", ".join(f"{form} {v['ratio']:.3f}" for form, v in s["forms"].items())
        print(f"    {name}: {shown}")


def read_time(repeats: int) -> dict[str, Any]:
    """Section: milliseconds per read, cat -n and anchored, re-read and first view."""
    from readkeeper.read import anchors

    lib = Path(sysconfig.get_paths()["stdlib"])
    paths = sources(10_000)["stdlib"]
    path = max(paths, key=lambda p: p.stat().st_size)
    core = Readkeeper(roots=[str(lib)])
    core.tokens.warm_up()

    def median_ms(run: Callable[[], object]) -> float:
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            run()
            times.append((time.perf_counter() - start) * 1000)
        return statistics.median(times)

    def reread(line_format: str) -> Callable[[], object]:
        params = ReadParams(str(path), force=True, line_format=line_format)  # type: ignore[arg-type]
        return lambda: core.read(params)

    def first_view() -> object:
        anchors._VIEWS.clear()  # as for a file never read anchored
        return core.read(ReadParams(str(path), force=True, line_format="anchors"))

    for line_format in ("cat-n", "anchors"):
        reread(line_format)()
    result = unstructure(core.read(ReadParams(str(path), force=True)))
    section = {
        "file": str(path.relative_to(lib)),
        "lines": result["file"]["num_lines"],
        "reread_cat_n_ms": median_ms(reread("cat-n")),
        "reread_anchors_ms": median_ms(reread("anchors")),
        "first_anchored_view_ms": median_ms(first_view),
    }
    core.close()
    return section


def print_read_time(section: dict[str, Any]) -> None:
    print(f"read time, {section['file']} ({section['lines']} lines shown), medians:")
    print(f"  forced re-read, cat -n:   {section['reread_cat_n_ms']:8.2f} ms")
    print(f"  forced re-read, anchors:  {section['reread_anchors_ms']:8.2f} ms")
    print(f"  first anchored view:      {section['first_anchored_view_ms']:8.2f} ms")


def robustness(count: int, seed: int) -> dict[str, Any]:
    import tempfile

    import edit_samples

    edits = edit_samples.corpus(count, seed)
    with tempfile.TemporaryDirectory(prefix="rk-edits-") as folder:
        root = Path(folder).resolve()
        core = Readkeeper(roots=[str(root)])
        core.tokens.warm_up()
        started = time.perf_counter()
        outcomes = edit_samples.run(core, root, edits)
        seconds = time.perf_counter() - started
        core.close()
    tokens = {
        form: [o.tokens for o in outcomes if o.form == form and o.variant == "exact"]
        for form in ("plain", "anchored")
    }
    languages = sorted({edit.name.rsplit(".", 1)[1] for edit in edits})
    return {
        "base_edits": len(edits),
        "cases": len(outcomes),
        "languages": languages,
        "seed": seed,
        "seconds": round(seconds, 1),
        "table": edit_samples.tally(outcomes),
        "wrong": sum(o.result == "wrong" for o in outcomes),
        "output_tokens_per_edit": {
            form: {
                "median": statistics.median(values) if values else None,
                "mean": round(statistics.fmean(values), 1) if values else None,
            }
            for form, values in tokens.items()
        },
    }


def print_robustness(section: dict[str, Any]) -> None:
    print(
        f"\nrobustness: {section['base_edits']} base edits ({', '.join(section['languages'])}), "
        f"{section['cases']} cases, {section['seconds']} s; applied wrongly: {section['wrong']}"
    )
    head = ("form", "variant", "cases", "correct", "refused", "useful", "wrong")
    print("  {:9} {:20} {:>6} {:>8} {:>8} {:>7} {:>6}".format(*head))
    for form, rows in section["table"].items():
        for variant, row in rows.items():
            print(
                f"  {form:9} {variant:20} {row['cases']:6} {row['correct']:8} "
                f"{row['refused']:8} {row['useful']:7} {row['wrong']:6}"
            )
    for form, figures in section["output_tokens_per_edit"].items():
        print(
            f"  output tokens per edit, {form}: median {figures['median']}, mean {figures['mean']}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=400, help="at most this many files per source")
    parser.add_argument("--repeats", type=int, default=30, help="reads timed per figure")
    parser.add_argument("--edits", type=int, default=1000, help="base edits of the corpus")
    parser.add_argument("--seed", type=int, default=33, help="the corpus's seed")
    parser.add_argument("--only", choices=("read_tokens", "read_time", "robustness"))
    args = parser.parse_args(argv)
    report: dict[str, Any] = {"machine": machine()}
    if args.only in (None, "read_tokens"):
        report["read_tokens"] = read_tokens(args.files)
        print_read_tokens(report["read_tokens"])
    if args.only in (None, "read_time"):
        report["read_time"] = read_time(args.repeats)
        print_read_time(report["read_time"])
    if args.only in (None, "robustness"):
        report["robustness"] = robustness(args.edits, args.seed)
        print_robustness(report["robustness"])
    write_json(RESULTS, report)
    print(f"written to {RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
