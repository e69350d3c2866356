"""An answer's characters are counted as JSON writes them (quoting.sent_chars): a
control is six (`\\u0001`), so a file of controls is six times its length on the wire.
Round 41: ten files of `\\x01` lines (one token a character) read in one read_many at a
budget of 1,000,000 sent 1,454,980 bytes, attachments with them as mentions 1,431,045:
over HTTP the SDK's client drops an event over 1 MiB, so the agent got no answer."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from mcp_helpers import mcp_env, named_call, ok, private_runtime_dir, stdio_client, text_of

ANSWER_MAX_CHARS = 500_000  # read/room.py ANSWER_MAX_CHARS
LINE = "\x01" * 200 + "\n"


def sent(text: str) -> int:
    """The characters JSON writes for `text` (its quotes aside)."""
    return len(json.dumps(text, ensure_ascii=False)) - 2


def _control_files(workspace: Path, count: int = 10) -> list[str]:
    names = [f"c{i}.txt" for i in range(count)]
    for name in names:
        (workspace / name).write_text(LINE * 120)
    return names


def _client(workspace: Path, **env: str):  # type: ignore[no-untyped-def]
    runtime = private_runtime_dir()
    return stdio_client(["--root", str(workspace), "--standalone"], mcp_env(runtime, **env))


async def test_read_many_counts_controls_as_json_writes_them(workspace: Path) -> None:
    names = _control_files(workspace)
    async with _client(workspace) as client:
        said = await ok(client, "read_many", file_paths=names, budget_tokens=1_000_000)
    assert sent(said) <= ANSWER_MAX_CHARS, sent(said)
    assert "characters one answer sends" in said or "characters left" in said, said[-1500:]
    assert "c0.txt" in said


async def test_attachments_count_controls_as_json_writes_them(workspace: Path) -> None:
    names = _control_files(workspace, 30)  # 30 of 8,192 tokens each (a mention's cap)
    async with _client(workspace) as client:
        said = await ok(client, "attachments", mentions=names, budget_tokens=1_000_000)
    assert sent(said) <= ANSWER_MAX_CHARS, sent(said)
    assert "characters one answer sends" in said, said[-1500:]


async def test_one_read_at_a_raised_cap_counts_controls_as_json_writes_them(
    workspace: Path,
) -> None:
    (workspace / "big.txt").write_text(LINE * 2_500)  # 502,500 characters, 3 MB as JSON
    async with _client(workspace, READKEEPER_MAX_TOKENS="1000000") as client:
        # Its lines (2,500 of 201 characters) are 3 MB as JSON, within the token cap.
        refused = await client.call_tool(
            "read", {"file_path": "big.txt", "offset": 1, "limit": 2_500}
        )
        assert refused.is_error
        words = text_of(refused)
        assert "within the 1,000,000-token cap but over the 400,000 characters a read" in words
        said = await ok(client, "read", **named_call(words, "read"))  # the fewer lines named
        assert sent(said) <= ANSWER_MAX_CHARS, sent(said)
        whole = await ok(client, "read", file_path="big.txt", offset=1)  # cut, not refused
        assert sent(whole) <= ANSWER_MAX_CHARS, sent(whole)
        assert "characters a read sends at most" in whole, whole[-800:]
        grep = await ok(client, "grep", pattern="\x01+", path="big.txt")
        assert sent(grep) <= ANSWER_MAX_CHARS, sent(grep)


async def test_a_notebook_of_controls_counts_them_as_json_writes_them(workspace: Path) -> None:
    cell = {"cell_type": "markdown", "metadata": {}, "source": ["\x01" * 100_000]}
    notebook = {"cells": [cell] * 12, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (workspace / "n.ipynb").write_text(json.dumps(notebook))
    async with _client(workspace, READKEEPER_MAX_TOKENS="1000000") as client:
        said = await ok(client, "read", file_path="n.ipynb")
    assert sent(said) <= ANSWER_MAX_CHARS, sent(said)
    assert "Showing cells" in said, said[-800:]


async def test_change_notices_of_controls_count_them_as_json_writes_them(
    workspace: Path,
) -> None:
    # Round 42: one diff of 250 lines of 1,000 controls turned into others, its cap
    # raised, was 502,178 characters of text and 3,002,684 as JSON writes them.
    raised = {"READKEEPER_CHANGES_MAX_TOKENS": "1000000"}
    raised["READKEEPER_CHANGES_TOTAL_MAX_TOKENS"] = "1000000"
    names = [f"c{i}.txt" for i in range(3)]
    for name in names:
        (workspace / name).write_text(("\x01" * 1000 + "\n") * 250)
    async with _client(workspace, **raised) as client:
        for name in names:
            await ok(client, "read", file_path=name)
        for name in names:
            (workspace / name).write_text(("\x02" * 1000 + "\n") * 250)
        said = ""
        for _ in range(200):  # until a change is told
            said = await ok(client, "changes")
            if "c0.txt" in said or "c1.txt" in said or "c2.txt" in said:
                break
            await asyncio.sleep(0.05)
    assert sent(said) <= ANSWER_MAX_CHARS, sent(said)
    assert "characters a diff sends at most" in said, said[-600:]


def test_a_diff_keeps_to_what_a_read_sends() -> None:
    from readkeeper.read.diffs import DIFF_MAX_CHARS
    from readkeeper.read.room import LINES_MAX_CHARS

    assert DIFF_MAX_CHARS == LINES_MAX_CHARS
