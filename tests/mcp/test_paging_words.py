"""What paging says is what happened: a search's offset is a count of results skipped
(from 0), never a read's first line (from 1), in the error of a bad one; a cut page
names the cap that cut it (the caller's max_matches, the default page, or readkeeper's
own cap of a page) and the call that shows the rest; a drop-in read of head=0 or tail=0
says it showed none of the file's lines instead of answering an empty text, as an
empty file's read does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcp_helpers import (
    dropin_client,
    error_kind,
    mcp_env,
    private_runtime_dir,
    stdio_client,
    text_of,
)
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.search import grep, listing


async def test_a_search_offset_out_of_range_is_said_as_results_skipped(workspace: Path) -> None:
    (workspace / "a.txt").write_text("hit\n")
    args = ["--root", str(workspace), "--standalone"]
    async with stdio_client(args, mcp_env(private_runtime_dir())) as client:
        for tool, params in [
            ("glob", {"pattern": "*.txt"}),
            ("grep", {"pattern": "hit"}),
            ("grep", {"pattern": "hit", "output": "files"}),
            ("list", {"path": "."}),
        ]:
            for offset in (2**40, 2**63, 1.5, True):
                answer = await client.call_tool(tool, {**params, "offset": offset})
                said = text_of(answer)
                assert error_kind(answer) == "bad_params", said
                assert "results to skip" in said, said
                assert "0 or more" in said, said
                assert "first line" not in said, said
                assert "-2147483648" not in said, said
        read = await client.call_tool("read", {"file_path": "a.txt", "offset": 2**40})
        assert error_kind(read) == "bad_params"
        assert "the first line is 1" in text_of(read)


def test_the_hints_name_the_limits_the_methods_keep() -> None:
    from readkeeper.protocol.convert import _FIX_OF

    said = _FIX_OF["GrepParams"]
    assert f"at most {grep.MAX_MATCHES}" in said["max_matches"]
    assert f"default of {grep.DEFAULT_MAX_MATCHES}" in said["max_matches"]
    assert f"from 0 to {grep.MAX_CONTEXT}" in said["context"]
    assert f"from 1 to {listing.MAX_DEPTH}" in _FIX_OF["ListParams"]["depth"]


@pytest.fixture
def many(workspace: Path) -> Path:
    """More files, each with one match, than a page of grep holds (grep.MAX_MATCHES)."""
    for index in range(grep.MAX_MATCHES + 50):
        (workspace / f"f{index:04d}.txt").write_text("hit\n")
    return workspace


@pytest.mark.parametrize(
    ("params", "cut_by"),
    [
        ({"max_matches": 10**9}, "cut by readkeeper's cap of 2000 matches a page"),
        ({}, "cut by the default page of 100 matches (max_matches sets up to 2,000)"),
        ({"max_matches": 10}, "cut by max_matches (10)"),
        ({"max_matches": 10**9, "output": "files"}, "cut by readkeeper's cap of 2000 files"),
        ({"max_matches": 10**9, "output": "counts"}, "cut by readkeeper's cap of 2000 files"),
        ({"output": "files"}, "cut by the default page of 100 files"),
    ],
)
def test_a_page_cut_names_the_cap_that_cut_it(
    core: Readkeeper, many: Path, params: dict[str, Any], cut_by: str
) -> None:
    # Room for 2,000 absolute names: the token cap, which counts them, is not the cap
    # under test (tests/mcp/test_grep_budget_as_sent.py is).
    core.configure({"max_tokens": 200_000})
    result = calls.call(core, "grep", {"pattern": "hit", **params})
    assert cut_by in result["note"], result["note"]
    assert "max_matches (2000)" not in result["note"]
    assert "the rest:" in result["note"]
    assert f"offset={result['next']['offset']}" in result["note"]


async def test_head_or_tail_0_says_no_line_was_shown(workspace: Path) -> None:
    (workspace / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    (workspace / "empty.txt").write_text("")
    async with dropin_client(workspace) as client:
        for field in ("head", "tail"):
            answer = await client.call_tool("read_text_file", {"path": "a.txt", field: 0})
            said = text_of(answer)
            assert not answer.is_error, said
            assert said.startswith("(readkeeper: 0 of 10 lines shown"), said
            assert f"{field}=0 asks for none" in said, said
        empty = text_of(await client.call_tool("read_text_file", {"path": "empty.txt"}))
        none = text_of(await client.call_tool("read_text_file", {"path": "a.txt", "head": 0}))
        assert none != empty
        missing = await client.call_tool("read_text_file", {"path": "b.txt", "head": 0})
        assert error_kind(missing) == "not_found"
        edit = {"path": "a.txt", "edits": [{"oldText": "line 7", "newText": "x"}]}
        assert error_kind(await client.call_tool("edit_file", edit)) == "not_read"
