"""Every error of the drop-in names the drop-in's own parameters (`paths`, `path`,
`head`, `oldText`...), in its message, in `data.field` and as keys of `data`, never the
core's (`file_paths`, `file_path`, `old_string`...): the server as a subprocess, each
tool given a bad value of each parameter.

Attack: read_multiple_files with 101 paths answered "file_paths must name 1 to 100
files" with data.field "file_paths", a field the drop-in does not have."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from mcp_helpers import dropin_client, text_of
from readkeeper.mcp.filesystem import SCHEMAS

# The core's names that are not a drop-in parameter of the same name.
CORE_NAMES = ("file_paths", "file_path", "old_string", "new_string", "dry_run", "budget_tokens")
_CORE_WORD = re.compile(r"(?<![\w/.\-])(" + "|".join(CORE_NAMES) + r")(?![\w/.\-])")

CASES: list[tuple[str, dict[str, Any], str | None]] = [
    ("read_text_file", {"path": ""}, "path"),
    ("read_text_file", {"path": "a.txt", "offset": 0}, "offset"),
    ("read_text_file", {"path": "a.txt", "offset": 99}, "offset"),
    ("read_text_file", {"path": "a.txt", "head": -1}, "head"),
    ("read_text_file", {"path": "a.txt", "tail": -1}, "tail"),
    ("read_text_file", {"path": "a.txt", "head": 1, "tail": 1}, "tail"),
    ("read_text_file", {"path": "a.txt", "force": "maybe"}, "force"),
    ("read_text_file", {"path": "missing.txt"}, None),
    ("read_file", {"path": "a.txt", "offset": 0}, "offset"),
    ("read_media_file", {"path": "missing.png"}, None),
    ("read_multiple_files", {"paths": []}, "paths"),
    ("read_multiple_files", {"paths": ["a.txt"] * 101}, "paths"),
    ("write_file", {"path": "", "content": "x"}, "path"),
    ("write_file", {"path": "b.txt", "content": 5}, "content"),
    ("write_file", {"path": "a.txt", "content": "x"}, None),  # never read: refused
    ("edit_file", {"path": "a.txt", "edits": []}, "edits"),
    ("edit_file", {"path": "a.txt", "edits": [{"oldText": "", "newText": "x"}]}, "edits"),
    ("edit_file", {"path": "a.txt", "edits": [{"oldText": 1}]}, "edits"),
    ("edit_file", {"path": "", "edits": [{"oldText": "a", "newText": "b"}]}, "path"),
    (
        "edit_file",
        {"path": "a.txt", "edits": [{"oldText": "a", "newText": "b"}], "dryRun": "x"},
        "dryRun",
    ),
    ("edit_file", {"path": "missing.txt", "edits": [{"oldText": "a", "newText": "b"}]}, None),
    ("create_directory", {"path": ""}, "path"),
    ("move_file", {"source": "", "destination": "b"}, "source"),
    ("move_file", {"source": "a.txt", "destination": ""}, "destination"),
    ("get_file_info", {"path": ""}, "path"),
    ("list_directory", {"path": ""}, "path"),
    ("list_directory", {"path": "missing"}, None),
    ("list_directory_with_sizes", {"path": ".", "sortBy": "age"}, "sortBy"),
    ("directory_tree", {"path": ".", "excludePatterns": ["x\x00y"]}, "excludePatterns"),
    ("directory_tree", {"path": ".", "excludePatterns": ["*a*a*a*b"]}, "excludePatterns"),
    ("search_files", {"path": ".", "pattern": "!x"}, "pattern"),
    ("search_files", {"path": ".", "pattern": "*", "excludePatterns": 5}, "excludePatterns"),
    ("search_files", {"path": ".", "pattern": "*", "excludePatterns": ["a" * 5000]}, None),
]


async def test_every_error_names_the_drop_ins_own_parameters(workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\ntwo\n")
    async with dropin_client(workspace) as client:
        for tool, arguments, field in CASES:
            result = await client.call_tool(tool, arguments)
            case = f"{tool} {arguments!r:.80}"
            assert result.is_error, case
            structured = result.structured_content
            assert isinstance(structured, dict), case
            error = structured["error"]
            data = error["data"]
            params = set(SCHEMAS[tool]["properties"])
            if field is not None:
                assert data.get("field") == field, (case, error)
            if "field" in data:
                assert data["field"] in params, (case, error)
            assert not set(data) & set(CORE_NAMES), (case, data)
            for said in (error["message"], text_of(result)):
                assert not _CORE_WORD.search(said), (case, said)


async def test_a_file_of_many_is_named_by_its_path(workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\n")
    async with dropin_client(workspace) as client:
        result = await client.call_tool("read_multiple_files", {"paths": ["a.txt", "nope.txt"]})
    said = text_of(result)
    assert "nope.txt: Error - " in said
    assert not _CORE_WORD.search(said)


@pytest.mark.parametrize("word", CORE_NAMES)
def test_no_drop_in_tool_takes_a_core_name(word: str) -> None:
    # The test above holds a message to these words: none may be a drop-in parameter.
    assert all(word not in schema["properties"] for schema in SCHEMAS.values())


async def test_a_next_read_is_said_with_head(workspace: Path) -> None:
    (workspace / "big.txt").write_text(("word " * 80 + "\n") * 3000)  # over the whole-read cap
    async with dropin_client(workspace) as client:
        result = await client.call_tool("read_text_file", {"path": "big.txt"})
    said = text_of(result)
    assert result.is_error
    assert re.search(r'read_text_file with \{"path": "[^"]+", "offset": 1, "head": \d+\}', said)
    assert "limit=" not in said
