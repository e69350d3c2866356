"""Replay bench_session.py's seeded agent session through the reference MCP filesystem
server and through readkeeper in drop-in mode (`readkeeper mcp --tools filesystem`),
making the very same tool calls on both (`read_text_file` with head/tail, `edit_file`,
`write_file`): the saving a user gets by swapping one command and changing no prompt
(issue 31).

Run it as `.venv/bin/python bench/bench_dropin.py` (node and npm are needed for the
reference server, installed pinned by bench/common.py). It prints a table and writes
the figures to `bench/results/dropin.json`.

Counted: the text content of every tool result, with readkeeper's tokenizer, as
bench_session.py counts it. The drop-in's reads are not compared with the planned text
(a re-read it answers with a stub, a large module with an outline, a long one cut: that
is the difference measured); every edit and write that lands is checked on disk. Edits
the drop-in refuses (an edit of lines the session was never shown, a stale file) are
counted as refusals, their tokens included: with these unchanged prompts the agent
would read and retry, which this replay does not do.
"""

from __future__ import annotations

import argparse
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio

import bench_session as bs
from common import filesystem_server, machine, scratch, write_json
from readkeeper.read.tokens import TokenCounter
from readkeeper.settings import Settings

RESULTS = Path(__file__).resolve().parent / "results" / "dropin.json"


class DropIn(bs.Filesystem):
    """readkeeper with the reference server's tools, called exactly as it is called."""

    name = "readkeeper drop-in"

    def argv(self) -> list[str]:
        return [*bs.READKEEPER_MCP, "--tools", "filesystem", "--root", str(self.root)]

    async def step(self, step: bs.Step) -> None:
        if step.kind not in ("read", "range"):
            await super().step(step)
            return
        path = self.path(step.name)
        if step.kind == "read":
            result, text, _ = await self.call(step.call, "read_text_file", {"path": path})
        else:
            lines = bs.lines_of(step.text)
            last = step.offset + step.limit - 1
            from_end = len(lines) - step.offset + 1
            if last <= from_end:
                args = {"path": path, "head": last}
            else:
                args = {"path": path, "tail": from_end + step.text.endswith("\n")}
            result, text, _ = await self.call(step.call, "read_text_file", args)
        kind = (
            "error"
            if result.is_error
            else "stub"
            if text.startswith("file_unchanged")
            else "outline"
            if ": outline of" in text.split("\n", 1)[0]
            else "text"
        )
        self.tally.results[step.call, kind] += 1


def rows(dropin: bs.Tally, peer: bs.Tally) -> list[str]:
    out = [f"{'call type':<42}{'calls':>6}{'drop-in':>10}{'fs server':>11}{'ratio':>7}"]
    for call in [*bs.CALL_TYPES, "total"]:
        if call == "total":
            mine, theirs, calls = dropin.total(), peer.total(), sum(peer.calls.values())
        else:
            mine, theirs, calls = dropin.tokens[call], peer.tokens[call], peer.calls[call]
        if calls:
            ratio = f"{mine / theirs:.2f}x" if theirs else ""
            out.append(f"{call:<42}{calls:>6}{mine:>10,}{theirs:>11,}{ratio:>7}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--modules", type=int, default=30)
    parser.add_argument("--calls", type=int, default=250)
    parser.add_argument("--edits", type=int, default=40)
    parser.add_argument("--externals", type=int, default=6)
    parser.add_argument("--writes", type=int, default=3)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    command = filesystem_server()
    if command is None:
        return 1
    began, load_before = time.perf_counter(), os.getloadavg()
    counter = TokenCounter(Settings().token_encoding)
    rng = bs.random.Random(args.seed)
    texts = bs.stdlib_modules(args.modules, rng, Settings().max_size_bytes)
    steps = bs.Planner(texts, args.seed).plan(args.calls, args.edits, args.externals, args.writes)
    with scratch("rk-bench-dropin-") as (workdir, log):
        for folder in ("dropin", "filesystem"):
            (workdir / folder).mkdir()
            for name, text in texts.items():
                (workdir / folder / name).write_text(text, encoding="utf-8")
        dropin = anyio.run(DropIn(workdir / "dropin", counter, log, []).run, steps)
        peer = anyio.run(bs.Filesystem(workdir / "filesystem", counter, log, command).run, steps)
    ratio = dropin.total() / peer.total()
    planned = Counter(s.call for s in steps if s.call)
    print(
        f"drop-in replay: seed {args.seed}, {len(texts)} stdlib modules, "
        f"{sum(planned.values())} calls, load {load_before[0]:.2f}, "
        f"{time.perf_counter() - began:.0f} s"
    )
    print("\n".join(rows(dropin, peer)))
    answered = ", ".join(f"{c} {k}: {n}" for (c, k), n in sorted(dropin.results.items()))
    print(f"drop-in reads answered as: {answered}")
    for tally, who in ((dropin, "drop-in"), (peer, "filesystem server")):
        print(
            f"{who}: {tally.edits_landed}/{tally.edits} edits landed, {len(tally.errors)} "
            f"error results, {len(tally.mismatches)} mismatches, {tally.seconds:.1f} s"
        )
        for line in (tally.errors + tally.mismatches)[:6]:
            print(f"   {line[:200]}")
    print(f"session: drop-in / filesystem server = {ratio:.3f}x tokens returned")

    def tally_json(tally: bs.Tally) -> dict[str, Any]:
        return {
            "tokens": tally.total(),
            "by_call_type": {
                c: {"calls": tally.calls[c], "tokens": tally.tokens[c]} for c in tally.calls
            },
            "edits": tally.edits,
            "edits_landed": tally.edits_landed,
            "errors": tally.errors,
            "mismatches": tally.mismatches,
            "seconds": tally.seconds,
        }

    write_json(
        args.output,
        {
            "meta": {**machine(), "seed": args.seed, "load_avg_before": load_before},
            "planned_calls": dict(planned),
            "dropin": {
                **tally_json(dropin),
                "answers": {f"{c}|{k}": n for (c, k), n in dropin.results.items()},
            },
            "filesystem_server": tally_json(peer),
            "ratio": ratio,
        },
    )
    print(f"written to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
