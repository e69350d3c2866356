"""The search for a slipped copy of old_string runs under one budget per edit call
(edit/search_budget.py): a file of many alike lines and a long old_string that matches
nowhere get their `no_match` promptly, and a search cut by the budget never guesses."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_helpers import error_kind, mcp_env, private_runtime_dir, stdio_client, text_of
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.edit.forgiving import forgive
from readkeeper.edit.search_budget import SearchBudget, noted
from readkeeper.errors import ReadkeeperError

LINE = "    x = 'a'\n"


def alike(count: int) -> str:
    return LINE * count + "    y = 'b'\n"


async def test_a_long_old_string_over_many_alike_lines_gets_its_no_match(
    workspace: Path,
) -> None:
    # 21,000 alike lines and an old_string of 20,000 of them ending in a line found
    # nowhere: the search compared every line at every start (minutes of CPU).
    path = workspace / "big.py"
    path.write_text(alike(21_000))
    (workspace / "small.txt").write_text("small\n")
    old = LINE * 20_000 + "    y = 'c'"
    async with stdio_client(["--root", str(workspace)], mcp_env(private_runtime_dir())) as client:
        await client.call_tool("read", {"file_path": str(path), "offset": 1, "limit": 10})
        answer = await client.call_tool(
            "edit", {"file_path": str(path), "old_string": old, "new_string": "Z = 1"}
        )
        assert error_kind(answer) == "no_match", text_of(answer)
        batch = await client.call_tool(
            "edit",
            {
                "file_path": str(path),
                "edits": [{"old_string": old, "new_string": "Z = 1"}] * 3,
            },
        )
        assert error_kind(batch) == "no_match", text_of(batch)
        small = await client.call_tool("read", {"file_path": str(workspace / "small.txt")})
        assert "small" in text_of(small)
    assert path.read_text() == alike(21_000)


def test_a_slipped_copy_is_found_within_the_budget() -> None:
    text = "def f():\n    return 1\n" + alike(5_000)
    found = forgive(text, "def f():\n  return 1\n", "def f():\n  return 2\n", "a.py")
    assert found is not None
    assert found.new == "def f():\n    return 2\n"


def test_a_search_cut_by_the_budget_is_no_match_never_a_guess() -> None:
    text = alike(5_000) + "def f():\n    return 1\n"
    budget = SearchBudget(1_000)
    found = forgive(text, "def f():\n  return 1\n", "def f():\n  return 2\n", "a.py", budget)
    assert found is None
    assert budget.cut
    said = noted(ReadkeeperError("no_match", "old_string was not found.", file_path="a.py"), budget)
    assert said.kind == "no_match"
    assert "was cut at its budget" in said.message
    assert said.data["search_cut"] is True


def test_a_slip_matching_many_places_names_the_first_of_them() -> None:
    text = "    if x:\n        pass\n" * 50
    with pytest.raises(ReadkeeperError) as caught:
        forgive(text, "if x:\n    pass\n", "if y:\n    pass\n", "a.py")
    assert caught.value.kind == "ambiguous_match"
    assert "more than 20 places" in caught.value.message


def test_a_batch_of_slips_over_its_budget_is_no_match_saying_so(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "many.py"
    text = "".join(f"    v{i}='a'\n" for i in range(15_000))  # within the size cap
    path.write_text(text)
    calls.call(core, "read", {"file_path": str(path), "offset": 1, "limit": 5})
    # Each pair a slip (a tab for the file's spaces) of one line: forgiven one by one until the
    # call's budget is spent, far short of the 300.
    pairs = [{"old_string": f"\tv{i}='a'\n", "new_string": f"\tv{i}='b'\n"} for i in range(300)]
    with pytest.raises(ReadkeeperError) as caught:
        calls.call(core, "edit", {"file_path": str(path), "edits": pairs})
    assert caught.value.kind == "no_match"
    assert "was cut at its budget" in caught.value.message
    assert path.read_text() == text
