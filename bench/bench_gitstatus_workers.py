"""The wall time of a git_status attachments call with N stalled roots (each with its
HEAD commit object a FIFO) and M healthy ones, at the default settings
(attachments_timeout_ms 3 s, git_timeout_ms 2 s), and which roots got their status
(attack round 30: the first call with 4 or more stalled roots took 3.08-3.99 s, and a
healthy root behind them was told to ask again or remembered as stalled).

Usage: python bench/bench_gitstatus_workers.py [--runs R] [N:M ...]; each run makes
fresh repositories under /tmp and a fresh core (cold workers), and times three calls.
Prints a table of medians and writes bench/results/gitstatus_workers.json."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from readkeeper.attachments import gitstatus_stalls, gitstatus_workers
from readkeeper.core import Readkeeper
from readkeeper.protocol import AttachmentsParams

ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b"}
ENV.update(GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@b")


def repository(root: str, stalled: bool) -> None:
    os.makedirs(root)
    Path(root, "a.txt").write_text("a\n")
    for command in (["init", "-q"], ["add", "a.txt"], ["commit", "-qm1"]):
        subprocess.run(["git", "-C", root, *command], check=True, env=ENV)
    Path(root, "a.txt").write_text("a\nb\n")
    if stalled:
        commit = subprocess.check_output(["git", "-C", root, "rev-parse", "HEAD"], text=True)
        loose = Path(root, ".git", "objects", commit[:2], commit[2:].strip())
        loose.unlink()
        os.mkfifo(loose)


def run(stalled: int, healthy: int) -> list[dict[str, Any]]:
    """Three calls of a fresh core over `stalled` + `healthy` roots, interleaved."""
    top = os.path.realpath(tempfile.mkdtemp(prefix="rk-workers-"))
    kinds = ["S"] * stalled + ["H"] * healthy
    kinds = sorted(kinds, key=lambda k: (kinds.index(k) % 2, k))  # S and H mixed
    roots = [os.path.join(top, f"{kind}{n}") for n, kind in enumerate(kinds)]
    for root, kind in zip(roots, kinds, strict=True):
        repository(root, kind == "S")
    gitstatus_workers.WORKERS.stop()  # cold workers, as a new server has
    core = Readkeeper(roots=roots)
    calls = []
    try:
        for _ in range(3):
            start = time.perf_counter()
            result = core.attachments(AttachmentsParams(types=["git_status"]))
            wall = time.perf_counter() - start
            shown = {os.path.basename(a["source"]) for a in result["attachments"]}
            healthy_shown = sum(name.startswith("H") for name in shown)
            asked_again = sum(
                "ask for the attachments again" in d["reason"].lower() for d in result["dropped"]
            )
            calls.append({"wall_s": wall, "healthy_shown": healthy_shown, "ask_again": asked_again})
        blamed = sum(os.path.basename(r).startswith("H") for r in gitstatus_stalls._MEMORY)
        calls[-1]["healthy_remembered"] = blamed
    finally:
        core.close()
        for root in roots:
            gitstatus_stalls.forget(root)
        shutil.rmtree(top, ignore_errors=True)
    return calls


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("shapes", nargs="*", default=["0:4", "4:4", "6:4", "8:2"])
    args = parser.parse_args()
    rows = []
    print("| stalled | healthy | call 1 s | call 2 s | call 3 s | healthy shown | again | blamed |")
    print("|---|---|---|---|---|---|---|---|")
    for shape in args.shapes:
        stalled, healthy = map(int, shape.split(":"))
        samples = [run(stalled, healthy) for _ in range(args.runs)]
        median = [
            {
                key: statistics.median(s[k][key] for s in samples)
                for key in ("wall_s", "healthy_shown", "ask_again")
            }
            for k in range(3)
        ]
        walls = " | ".join(f"{m['wall_s']:.2f}" for m in median)
        shown = "/".join(f"{m['healthy_shown']:g}" for m in median)
        again = "/".join(f"{m['ask_again']:g}" for m in median)
        blamed = max(s[-1]["healthy_remembered"] for s in samples)  # healthy roots remembered
        print(f"| {stalled} | {healthy} | {walls} | {shown} of {healthy} | {again} | {blamed} |")
        rows.append({"stalled": stalled, "healthy": healthy, "median": median, "samples": samples})
    out = Path(__file__).parent / "results" / "gitstatus_workers.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"runs": args.runs, "rows": rows}, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
