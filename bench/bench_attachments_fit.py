"""Benchmark the attachments budgeter's passes (attachments/budget.py `fit`): the fit is
run again, from fresh copies of the items, each time a type is dropped that its
summary's room was not set aside for, so up to 8 passes (7 types, then the one that
holds). What do they cost with many mentions and memory files at small budgets?

Workload: a workspace of `--folders` folders, each with an AGENTS.md and a CLAUDE.md
(memory files above the mentions) and a 200-line source file mentioned, plus memory
files at the root, a git repository with changes, forwarded diagnostics, change notices,
a selection and the environment: every type, so every type can be dropped. Each row is
one budget; its figures are medians over `--requests` requests of the time `fit` takes
(in process, the core warmed up) and of the whole `readkeeper/attachments` call, the
passes `fit` made and the types dropped. Prints a table and writes
bench/results/attachments_fit.json. Nothing is asserted.

With `--base REV`, each request's items are also fitted by attachments/budget.py as it
was at git revision REV, interleaved with today's (each from its own copies), and the two
answers compared: the A/B of a change to `fit`, and the proof it answers the same.

Run: .venv/bin/python bench/bench_attachments_fit.py [--requests N] [--folders N] [--base REV]
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from readkeeper.attachments import budget, collect
from readkeeper.core import Readkeeper
from readkeeper.protocol import (
    ActiveEditor,
    AttachmentsParams,
    DiagnosticsParams,
    Position,
    Range,
    ReadParams,
)

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "attachments_fit.json"
BUDGETS = (60, 150, 300, 1_000, 3_000, 10_000, 60_000)


def build(root: Path, folders: int) -> list[str]:
    """The workspace; the mentions (one source file a folder)."""
    env = {"LC_ALL": "C", "PATH": os.environ["PATH"], "HOME": str(root.parent)}
    subprocess.run(["git", "-C", str(root), "init", "-q"], check=True, env=env)
    (root / "AGENTS.md").write_text("".join(f"- rule {i}: be precise\n" for i in range(200)))
    (root / "CLAUDE.md").write_text("Run the tests with `bash tests/run`.\n" * 20)
    mentions = []
    for f in range(folders):
        folder = root / f"pkg{f}"
        folder.mkdir()
        (folder / "AGENTS.md").write_text(f"- package {f}: keep it small\n" * 30)
        (folder / "CLAUDE.md").write_text(f"Package {f} talks to the database.\n" * 10)
        source = folder / "module.py"
        source.write_text("".join(f"def f_{i}(x):\n    return x + {i}\n" for i in range(100)))
        mentions.append(str(source))
    for i in range(20):
        (root / f"untracked_{i}.txt").write_text("x\n")
    return mentions


def base_fit(rev: str, tmp: str) -> Any:
    """`fit` of attachments/budget.py at git revision `rev`, loaded beside today's."""
    text = subprocess.run(
        ["git", "-C", str(HERE.parent), "show", f"{rev}:attachments/budget.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path(tmp, "budget_base.py")
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("readkeeper.attachments.budget_base", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.fit


def answer(items: list[Any], fitted: Any) -> Any:
    """What a fit answers: the result, and what it did to the items it was given."""
    return (json.dumps(fitted.as_json(), sort_keys=True), [vars(i) for i in items])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=9)
    parser.add_argument("--folders", type=int, default=40)
    parser.add_argument("--base", help="a git revision whose fit to compare with")
    args = parser.parse_args()
    base: Any = None
    base_seconds: list[float] = []
    same: list[bool] = []
    passes: list[int] = []
    fit_seconds: list[float] = []
    real_fit, real_fitted = budget.fit, budget._fitted

    def counted_fitted(*a: Any, **k: Any) -> Any:
        passes[-1] += 1
        return real_fitted(*a, **k)

    def timed_fit(items: list[Any], budget_tokens: int, counter: Any) -> Any:
        if base is not None:  # the base first, from copies: today's then works on the items
            theirs = [copy.copy(i) for i in items]
            start = time.perf_counter()
            base_answer = answer(theirs, base(theirs, budget_tokens, counter))
            base_seconds.append(time.perf_counter() - start)
        passes.append(0)
        start = time.perf_counter()
        fitted = real_fit(items, budget_tokens, counter)
        fit_seconds.append(time.perf_counter() - start)
        if base is not None:
            same.append(answer(items, fitted) == base_answer)
        return fitted

    budget._fitted = counted_fitted  # type: ignore[assignment]
    collect.fit = timed_fit  # type: ignore[assignment]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp, "ws").resolve()
        root.mkdir()
        if args.base:
            base = base_fit(args.base, tmp)
        mentions = build(root, args.folders)
        core = Readkeeper(roots=[str(root)])
        core.tokens.warm_up()
        try:
            diagnostics = [
                {
                    "uri": Path(m).as_uri(),
                    "diagnostics": [
                        {
                            "range": {
                                "start": {"line": i, "character": 0},
                                "end": {"line": i, "character": 3},
                            },
                            "severity": 1,
                            "message": f'"x{i}" is possibly unbound',
                            "source": "pyright",
                        }
                        for i in range(20)
                    ],
                }
                for m in mentions
            ]
            core.did_change_diagnostics(DiagnosticsParams(items=diagnostics))
            editor = ActiveEditor(mentions[0], Range(Position(0, 0), Position(40, 0)))
            for budget_tokens in BUDGETS:
                fit_seconds.clear()
                base_seconds.clear()
                passes.clear()
                totals, drops = [], []
                for _ in range(args.requests):
                    # Change notices, as a session that read the files then saw them change.
                    for m in mentions[:5]:
                        core.read(ReadParams(file_path=m, session="bench", force=True))
                    params = AttachmentsParams(
                        session="bench",
                        mentions=mentions,
                        budget_tokens=budget_tokens,
                        active_editor=editor,
                    )
                    start = time.perf_counter()
                    result = core.attachments(params)
                    totals.append(time.perf_counter() - start)
                    drops.append(sorted({d["type"] for d in result["dropped"]}))
                rows.append(
                    {
                        "budget_tokens": budget_tokens,
                        "fit_ms_p50": statistics.median(fit_seconds) * 1000,
                        "fit_ms_max": max(fit_seconds) * 1000,
                        "call_ms_p50": statistics.median(totals) * 1000,
                        "passes": statistics.median(passes),
                        "passes_max": max(passes),
                        "types_dropped": drops[-1],
                    }
                )
                if base is not None:
                    rows[-1]["base_fit_ms_p50"] = statistics.median(base_seconds) * 1000
                    rows[-1]["same_answers"] = all(same)
        finally:
            core.close()
    print(f"{args.folders} mentions, {2 * args.folders + 2} memory files, every type")
    ab = f" {'base fit':>9} {'same':>5}" if base is not None else ""
    print(f"{'budget':>7} {'passes':>6} {'fit p50':>9}{ab} {'fit max':>9} {'call p50':>9}  dropped")
    for row in rows:
        versus = ""
        if base is not None:
            versus = f" {row['base_fit_ms_p50']:>7.2f}ms {row['same_answers']!s:>5}"
        print(
            f"{row['budget_tokens']:>7} {row['passes']:>6g} {row['fit_ms_p50']:>7.2f}ms{versus} "
            f"{row['fit_ms_max']:>7.2f}ms {row['call_ms_p50']:>7.1f}ms  "
            f"{', '.join(row['types_dropped'])}"
        )
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "folders": args.folders,
                "base": args.base,
                "requests": args.requests,
                "rows": rows,
                "machine": platform.platform(),
                "cpus": os.cpu_count(),
                "load": load,
            },
            indent=2,
        )
    )
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
