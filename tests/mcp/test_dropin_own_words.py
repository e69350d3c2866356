"""Every word of a drop-in answer (`--tools filesystem`) names the drop-in's own
parameters: its notes as well as its errors, in every one of its 14 tools (attack round
24: edit_file's dry run said "without dry_run", read_multiple_files named budget_tokens,
which it does not offer, and a bad excludePatterns entry was not named)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from mcp_helpers import dropin_client, ok, text_of
from readkeeper.mcp.filesystem import SCHEMAS

# The core's params the drop-in renames or does not offer.
CORE_ONLY = re.compile(
    r"\b(file_paths?|old_string|new_string|dry_run|budget_tokens|max_matches|replace_all"
    r"|expected_replacements|exclude(?!Patterns)|estimate)\b"
)
# Each tool's error paths (and a dry run, an over-budget batch: notes of answers).
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("read_text_file", {"path": "a.txt", "head": "x"}),
    ("read_text_file", {"path": "a.txt", "offset": 0}),
    ("read_text_file", {"path": "a.txt", "head": 1, "tail": 1}),
    ("read_text_file", {"path": "nope.txt"}),
    ("read_file", {"path": 7}),
    ("read_media_file", {"path": "nope.png"}),
    ("read_multiple_files", {"paths": ["a.txt", 7, "nope.txt", "b0.txt", "b1.txt", "b2.txt"]}),
    ("read_multiple_files", {"paths": []}),
    ("write_file", {"path": "a.txt", "content": 5}),
    ("write_file", {"path": "../x.txt", "content": "x"}),
    ("edit_file", {"path": "a.txt", "edits": [{"oldText": "one", "newText": "1"}], "dryRun": True}),
    ("edit_file", {"path": "a.txt", "edits": [{"oldText": "zzz", "newText": "1"}]}),
    ("edit_file", {"path": "a.txt", "edits": [{"oldText": "zzz", "newText": "1"}], "dryRun": True}),
    ("edit_file", {"path": "a.txt", "edits": [{"oldText": "o", "newText": "1"}]}),
    ("edit_file", {"path": "a.txt", "edits": [{"oldText": "one"}]}),
    ("edit_file", {"path": "a.txt", "edits": [{"oldText": "", "newText": "b"}]}),  # round 26
    ("edit_file", {"path": "a.txt", "edits": [{"oldText": "a", "newText": "b"}], "dryRun": 2}),
    ("create_directory", {"path": "a.txt"}),
    ("list_directory", {"path": "nope"}),
    ("list_directory_with_sizes", {"path": ".", "sortBy": "color"}),
    ("directory_tree", {"path": ".", "excludePatterns": ["a", 7]}),
    ("directory_tree", {"path": "nope"}),
    ("move_file", {"source": "nope", "destination": "b"}),
    ("search_files", {"path": ".", "pattern": "*.txt", "excludePatterns": ["a", 7]}),
    ("search_files", {"path": ".", "pattern": 5}),
    ("get_file_info", {"path": "nope"}),
    ("list_allowed_directories", {}),
]


def _workspace(workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\ntwo\n")
    for index in range(3):  # ~30,000 tokens each: over the batch's 40,000
        (workspace / f"b{index}.txt").write_text(("word " * 20 + "\n") * 1500)


async def test_no_answer_of_any_tool_names_a_core_parameter(workspace: Path) -> None:
    _workspace(workspace)
    assert {tool for tool, _ in CALLS} == set(SCHEMAS)
    async with dropin_client(workspace) as client:
        await ok(client, "read_text_file", path="a.txt")  # the edits may run
        for tool, arguments in CALLS:
            result = await client.call_tool(tool, arguments)
            said = text_of(result) + json.dumps(result.structured_content or {})
            assert not CORE_ONLY.search(said), (tool, arguments, said)


async def test_the_dry_run_note_names_dry_run_as_the_tool_does(workspace: Path) -> None:
    _workspace(workspace)
    async with dropin_client(workspace) as client:
        await ok(client, "read_text_file", path="a.txt")
        (workspace / "a.txt").write_text("one\nTWO\n")  # a change the agent has not seen
        edits = [{"oldText": "one", "newText": "1"}]
        said = await ok(client, "edit_file", path="a.txt", edits=edits, dryRun=True)
    assert "the same call without dryRun will be merged" in said, said


async def test_an_over_budget_batch_names_no_parameter_it_lacks(workspace: Path) -> None:
    _workspace(workspace)
    async with dropin_client(workspace) as client:
        said = await ok(client, "read_multiple_files", paths=["b0.txt", "b1.txt", "b2.txt"])
    assert "the call's token budget" in said, said
    assert "budget_tokens" not in said


async def test_a_bad_exclude_pattern_entry_is_named(workspace: Path) -> None:
    _workspace(workspace)
    async with dropin_client(workspace) as client:
        for tool, extra in (("search_files", {"pattern": "*.txt"}), ("directory_tree", {})):
            arguments = {"path": ".", "excludePatterns": ["a", 7], **extra}
            result = await client.call_tool(tool, arguments)
            assert result.is_error
            assert isinstance(result.structured_content, dict)
            assert result.structured_content["error"]["data"]["field"] == "excludePatterns[1]"
            assert "excludePatterns[1]" in text_of(result)
            assert "got 7" in text_of(result)
