"""grep's page as each front end sends it keeps to `max_tokens` in every output mode:
each match line counted with its file's name as shown (quoting.name: a name of controls
or of bytes not UTF-8 costs several times its bytes once escaped) and its framing, each
name of `files` and `counts` alike, and a page the budget cut says so and names the call
for the rest. Before, the cap counted a match's text only and no name at all: 1,200
files of 255-byte names sent 542,938 tokens for one `grep` with max_matches=2,000
(attack round 20, finding 1), and the default page 45,192 whatever max_tokens was.
Checked with the official SDK client, counted with tiktoken on the text content."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from deep_chain import long_named

from helpers import tiktoken_count
from mcp_helpers import mcp_env, ok, private_runtime_dir, stdio_client

CAP = 4000
ALLOWANCE = 300  # the closing note and the next call: a fixed size, whatever the names
FILES = 120


def names(kind: str) -> list[bytes]:
    """FILES names of one hostile kind, each of 200 to 255 bytes."""
    if kind == "controls":
        return [b"%04d" % i + b'\x01\x1b "\\' * 40 + b".txt" for i in range(FILES)]
    if kind == "not_utf8":
        return [b"%04d" % i + b"\xff\xfe" * 120 + b".txt" for i in range(FILES)]
    return [b"%04d" % i + b"a" * 247 + b".txt" for i in range(FILES)]


def crowd(workspace: Path, kind: str) -> None:
    root = os.fsencode(workspace)
    for name in names(kind):
        with open(os.path.join(root, name), "wb") as file:
            file.write(b"needle one\nhay\nneedle two\n")


@pytest.mark.parametrize("kind", ["controls", "not_utf8", "plain"])
@pytest.mark.parametrize("output", ["matches", "files", "counts"])
async def test_grep_as_sent_keeps_to_max_tokens(workspace: Path, kind: str, output: str) -> None:
    crowd(workspace, kind)
    env = mcp_env(private_runtime_dir(), READKEEPER_MAX_TOKENS=str(CAP))
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        for page in ({"max_matches": 2000}, {}):
            said = await ok(client, "grep", pattern="needle", output=output, **page)
            assert tiktoken_count(said) <= CAP + ALLOWANCE, (page, tiktoken_count(said))
            assert "cut by the token cap (max_tokens)" in said, said[-600:]
            assert '"offset":' in said, said[-600:]


async def test_grep_of_deep_paths_as_sent_keeps_to_max_tokens(workspace: Path) -> None:
    """Names of 3,600 characters (14 folders of 250), each about 500 tokens a line."""
    folder = long_named(workspace)
    for index in range(40):
        (folder / f"f{index:03d}.txt").write_text("needle one\nneedle two\n")
    env = mcp_env(private_runtime_dir(), READKEEPER_MAX_TOKENS=str(CAP))
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        for output in ("matches", "files", "counts"):
            said = await ok(client, "grep", pattern="needle", output=output, max_matches=2000)
            assert tiktoken_count(said) <= CAP + ALLOWANCE, (output, tiktoken_count(said))
            assert "cut by the token cap (max_tokens)" in said, said[-600:]


async def test_grep_with_context_as_sent_keeps_to_max_tokens(workspace: Path) -> None:
    crowd(workspace, "controls")
    env = mcp_env(private_runtime_dir(), READKEEPER_MAX_TOKENS=str(CAP))
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        for extra in ({"context": 2}, {"multiline": True}):
            said = await ok(client, "grep", pattern="needle", max_matches=2000, **extra)
            assert tiktoken_count(said) <= CAP + ALLOWANCE, (extra, tiktoken_count(said))
            assert "cut by the token cap (max_tokens)" in said, said[-600:]
