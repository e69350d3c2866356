"""What a call sends besides its budgeted content is bounded: a refusal names each path
once per place, cut past a few hundred characters (` … [N characters cut] … `, readkeeper's
mark), its did-you-mean too, and read_many's refusals are bounded in all. 20 missing
names under a 3,600-character folder chain sent 228,798 characters through read_many
with no budget (each refusal said the long path three times and its guess), and one
missing long path cost grep, glob, list, read and the drop-in's tools about 11,000
characters (round 19 fixers)."""

from __future__ import annotations

from pathlib import Path

from deep_chain import long_named

from conftest import Session
from helpers import tiktoken_count
from mcp_helpers import (
    error_kind,
    mcp_env,
    named_call,
    private_runtime_dir,
    stdio_client,
    text_of,
)
from readkeeper import render_many
from readkeeper.errors import MAX_NAME_CHARS

# A refusal naming a 3,600-character path and its 3,600-character guess, as a tool error.
MOST_REFUSAL_CHARS = 1_500
# 20 such refusals in one read_many, with no budget.
MOST_MANY_TOKENS = 8_000


def missing(folder: Path, many: int = 20) -> list[str]:
    return [f"{folder}/nope{n}\u202e\u200b\x1b … [9 characters cut].txt" for n in range(many)]


async def test_read_many_refusals_are_cut_and_bounded(workspace: Path) -> None:
    folder = long_named(workspace)
    # Nothing to guess from: a did-you-mean guess is looked for within a time budget, so
    # on a loaded machine one call may find a guess the next does not, and the least
    # budget the first names would not hold the second's refusals.
    (folder / "real.txt").unlink()
    names = missing(folder)
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        answer = await client.call_tool("read_many", {"file_paths": names})
        said = text_of(answer)
        assert tiktoken_count(said) < MOST_MANY_TOKENS, len(said)
        assert " characters cut] " in said
        # The name's own words of a cut are not readkeeper's mark.
        assert "[9 characters cut]" not in said
        structured = answer.structured_content
        assert isinstance(structured, dict)
        # Every entry, or those that fit max_tokens as sent with the count of all
        # (a 3,600-character name is sent whole there: mcp/facts.py).
        cut = structured.get("structured_cut", {"of": len(structured["results"])})
        assert cut["of"] == len(names)
        assert structured["results"]
        # With a budget, every refusal is within it: the least it asks for is small now.
        small = await client.call_tool("read_many", {"file_paths": names, "budget_tokens": 100})
        assert error_kind(small) == "token_limit"
        assert isinstance(small.structured_content, dict)
        least = small.structured_content["error"]["data"]["tokens"]
        assert least < MOST_MANY_TOKENS
        enough = await client.call_tool("read_many", {"file_paths": names, "budget_tokens": least})
        assert not enough.is_error, text_of(enough)
        assert tiktoken_count(text_of(enough)) <= least


async def test_one_long_missing_path_is_a_short_refusal(workspace: Path) -> None:
    folder = long_named(workspace)
    path = f"{folder}/{'z' * 200}"
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        for tool, args in (
            ("read", {"file_path": path}),
            ("grep", {"pattern": "x", "path": path}),
            ("glob", {"pattern": "*", "path": path}),
            ("list", {"path": path}),
        ):
            answer = await client.call_tool(tool, args)
            assert error_kind(answer) == "not_found"
            said = text_of(answer)
            assert len(said) < MOST_REFUSAL_CHARS, (tool, len(said))
            assert " characters cut] " in said, tool
    fs = ["--standalone", "--root", str(workspace), "--tools", "filesystem"]
    async with stdio_client(fs, env) as client:
        for tool, args in (
            ("list_directory", {"path": path}),
            ("directory_tree", {"path": path}),
            ("search_files", {"path": path, "pattern": "x"}),
            ("get_file_info", {"path": path}),
            ("read_text_file", {"path": path}),
        ):
            answer = await client.call_tool(tool, args)
            assert answer.is_error, tool
            said = text_of(answer)
            assert len(said) < MOST_REFUSAL_CHARS, (tool, len(said))
        many = await client.call_tool("read_multiple_files", {"paths": missing(folder)})
        assert tiktoken_count(text_of(many)) < MOST_MANY_TOKENS, len(text_of(many))


async def test_read_many_refusals_are_bounded_over_lsp(lsp: Session, workspace: Path) -> None:
    names = missing(long_named(workspace))
    answer = await lsp.client.request("readkeeper/readMany", {"file_paths": names})
    assert tiktoken_count(render_many.many(answer)) < MOST_MANY_TOKENS
    assert len(answer["results"]) == len(names)


async def test_a_long_bad_glob_is_a_short_refusal(workspace: Path) -> None:
    # The glob library's words repeat the glob: cut as a library's words are
    # (errors.library_words), the glob shown once, cut (8,092 characters before).
    bad = "x" * 4000 + "\\"
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        for tool, args in (
            ("glob", {"pattern": bad}),
            ("glob", {"pattern": "*", "exclude": [bad]}),
            ("grep", {"pattern": "a", "glob": bad}),
        ):
            answer = await client.call_tool(tool, args)
            assert error_kind(answer) == "bad_params"
            said = text_of(answer)
            assert len(said) < MOST_REFUSAL_CHARS, (tool, len(said))
            assert " characters cut]" in said, tool


async def test_names_echoed_by_attachments_and_stats_are_cut(workspace: Path) -> None:
    # An attachment's header names its source outside the budget, and stats' history
    # names each event's path: a 3,800-character path there sent 7,192 tokens for a
    # budget of 2,000 (three headers), and 53,458 tokens of history for 201 reads.
    deep = long_named(workspace) / "real.txt"
    (deep.parent / "CLAUDE.md").write_text("memory\n")
    budget = 2_000
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        for _ in range(3):
            await client.call_tool("read", {"file_path": str(deep)})
        args = {"budget_tokens": budget, "mentions": [str(deep)]}
        said = text_of(await client.call_tool("attachments", args))
        assert tiktoken_count(said) < budget + 1_000
        history = text_of(await client.call_tool("stats", {"history": True}))
        assert "q" * (MAX_NAME_CHARS + 1) not in history
        assert " characters cut] … " in history


async def test_a_refusal_s_next_call_for_a_long_real_path_can_be_followed(
    workspace: Path,
) -> None:
    # A call is sent as written: a too_large's read of a file under four folders of 200
    # characters named the path cut in its middle, and followed it was `not_found`
    # (round 36, B6). Names of a real path's length are whole in calls and guesses.
    folder = workspace.joinpath(*[f"folder_{n}_" + "q" * 200 for n in range(4)])
    folder.mkdir(parents=True)
    (folder / "big.txt").write_text("".join(f"line {n}\n" for n in range(60_000)))
    name = str((folder / "big.txt").relative_to(workspace))
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        refused = await client.call_tool("read", {"file_path": name})
        assert error_kind(refused) == "too_large", text_of(refused)[:300]
        said = text_of(refused)
        assert len(said) < 4 * MOST_REFUSAL_CHARS, len(said)
        ranged = await client.call_tool("read", named_call(said, "read"))
        assert not ranged.is_error, text_of(ranged)[:300]
        assert "line 0" in text_of(ranged)
        guessed = await client.call_tool("read", {"file_path": name[:-7] + "bog.txt"})
        assert error_kind(guessed) == "not_found"
        structured = guessed.structured_content
        assert isinstance(structured, dict)
        [guess] = structured["error"]["data"]["suggestions"]
        assert guess == str(folder / "big.txt")


def _strings(value: object) -> list[str]:
    """Every string in a JSON value, at any depth."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


async def test_a_stale_anchors_refusal_echoes_each_anchor_cut(workspace: Path) -> None:
    """The anchors an anchored edit names are echoed in its `stale` refusal's data, a
    list of objects: each cut as a top-level string is (round 41: a 3,000,000-digit
    anchor made a 3 MB answer, over the 1 MiB event over HTTP)."""
    (workspace / "c.txt").write_text("one\ntwo\nthree\n")
    anchor = "9" * 3_000_000 + "ab"
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        await client.call_tool("read", {"file_path": "c.txt", "line_format": "anchors"})
        edit = {"op": "replace", "start": anchor, "lines": ["x"]}
        answer = await client.call_tool("edit", {"file_path": "c.txt", "anchor_edits": [edit]})
        assert error_kind(answer) == "stale"
        structured = answer.structured_content
        assert isinstance(structured, dict)
        data = structured["error"]["data"]
        assert max(map(len, _strings(data))) <= 1_024
        assert len(text_of(answer)) < 2_000
    assert (workspace / "c.txt").read_text() == "one\ntwo\nthree\n"
