"""read_many's `budget_tokens` bounds the whole text the call sends (attack round 15's
A10: 12 small files at budget 1000 sent 1,134 tokens and said "left: 45"): every file's
header line, every refusal whatever its length, the note and the last line are spent,
and the budget left is the budget less what was sent, counted with tiktoken over the
text the client receives (the SDK client, a real `readkeeper mcp`)."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import Session
from helpers import tiktoken_count
from mcp_helpers import error_kind, mcp_env, private_runtime_dir, stdio_client, text_of
from readkeeper import render_many

MISSING = [f"notes{n}.txt" for n in range(6)]
SIZES = [31, 20, 77, 9, 16, 40, 12, 25, 60, 5, 33, 18]
REFUSED = ["missing.txt", "bin.dat", "../outside.txt", "/etc/passwd"]


def files(workspace: Path) -> list[str]:
    names = []
    for i, lines in enumerate(SIZES):
        name = f"f{i:02}.txt"
        text = "".join(f"line {n} of file {i}: some words to read here\n" for n in range(lines))
        (workspace / name).write_text(text)
        names.append(name)
    (workspace / "bin.dat").write_bytes(b"\0\1\2" * 50)
    (workspace.parent / "outside.txt").write_text("secret\n")
    return names


async def test_what_read_many_sends_is_within_its_budget(workspace: Path) -> None:
    names = files(workspace)
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        for paths in (names, names + REFUSED):
            for budget in (700, 1000, 2000, 5000):
                args = {"file_paths": paths, "budget_tokens": budget, "force": True}
                answer = await client.call_tool("read_many", args)
                said = text_of(answer)
                structured = answer.structured_content
                assert isinstance(structured, dict)
                sent = tiktoken_count(said)
                assert sent <= budget, (budget, sent, said)
                if "error" in structured:  # too small for the refusals: nothing read
                    assert structured["error"]["data"]["kind"] == "token_limit", said
                    assert structured["error"]["data"]["tokens"] > budget, said
                    continue
                assert structured["budget_tokens_left"] == budget - sent, (budget, said)
                assert said.endswith(f"(budget_tokens left: {budget - sent})")
                if budget >= 2000:  # beside the refusals, files are read
                    assert any("result" in r for r in structured["results"]), said
                assert re.search(r"(?:^|\s)-\d", said) is None, said


async def test_a_budget_too_small_for_the_refusals_is_refused(workspace: Path) -> None:
    names = files(workspace)
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        small = await client.call_tool(
            "read_many", {"file_paths": names + REFUSED, "budget_tokens": 100}
        )
        assert error_kind(small) == "token_limit"
        said = text_of(small)
        least = int(re.findall(r"budget_tokens of at least (\d+)", said)[0])
        assert "none was read" in said
        enough = await client.call_tool(
            "read_many", {"file_paths": names + REFUSED, "budget_tokens": least}
        )
        assert not enough.is_error
        assert tiktoken_count(text_of(enough)) <= least


def guessable(workspace: Path) -> None:
    """Each of `MISSING` under a long folder chain: a file a missing name's did-you-mean
    finds (the very name elsewhere), long (a guess is cut near 240 characters), so a
    refusal with a guess is longer than one without."""
    folder = workspace / ("g" * 60) / ("h" * 60) / ("i" * 60)
    folder.mkdir(parents=True)
    for name in MISSING:
        (folder / name).write_text("found\n")


async def test_the_least_budget_holds_when_guesses_appear_meanwhile(workspace: Path) -> None:
    # The refusals of a budgeted call do not hang on a did-you-mean guess, which is looked
    # for within a time budget (so a loaded machine finds one call's guess and not the
    # next's) and whose files may appear between two calls: made to differ here.
    paths = files(workspace) + MISSING
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        small = await client.call_tool("read_many", {"file_paths": paths, "budget_tokens": 100})
        assert error_kind(small) == "token_limit"
        least = int(re.findall(r"budget_tokens of at least (\d+)", text_of(small))[0])
        guessable(workspace)
        enough = await client.call_tool("read_many", {"file_paths": paths, "budget_tokens": least})
        said = text_of(enough)
        assert not enough.is_error, said
        assert tiktoken_count(said) <= least
        assert said.count("refused (not_found)") == len(MISSING), said


async def test_the_least_budget_holds_over_lsp(lsp: Session, workspace: Path) -> None:
    paths = files(workspace) + MISSING
    small = await lsp.error("readkeeper/readMany", {"file_paths": paths, "budget_tokens": 100})
    assert small.data["kind"] == "token_limit"
    least = small.data["tokens"]
    assert f"budget_tokens of at least {least}" in small.message
    guessable(workspace)
    enough = await lsp.client.request(
        "readkeeper/readMany", {"file_paths": paths, "budget_tokens": least}
    )
    assert tiktoken_count(render_many.many(enough)) <= least
    refused = [r["error"]["data"]["kind"] for r in enough["results"] if "error" in r]
    assert refused.count("not_found") == len(MISSING), enough


async def test_a_long_sessions_calls_are_counted_by_the_budget(workspace: Path) -> None:
    """MCP names each call in the caller's session: a missing file's refusal and the note
    repeat a 256-character session, uncounted: 1,692 tokens sent at a budget of 1,500,
    3,102 at 800 (round 34)."""
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "b.txt").write_text("beta\n")
    session = "\ua66e" * 256
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        for budget in (800, 1500, 3000):
            arguments = {"file_paths": ["a.txt", "b.txt", "nope.txt"], "session": session}
            result = await client.call_tool("read_many", {**arguments, "budget_tokens": budget})
            said = text_of(result)
            if result.is_error:
                assert error_kind(result) == "token_limit", said[:300]
                continue
            assert tiktoken_count(said) <= budget, (budget, tiktoken_count(said))
