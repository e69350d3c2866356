"""Every argument of the drop-in (`--tools filesystem`) is checked with the core's checks
and words (protocol/convert.py): a bad value is `bad_params` naming the drop-in's field
and repeating the value as the JSON sent (`as_sent`), never `internal`, never silent
about the value. Raw JSON-RPC lines, so NaN, Infinity and 1e400 reach the server as a
client may send them.

Attack round 17 (a23b_head_nan.py, a24): read_text_file with head, tail or offset NaN,
Infinity or 1e400 answered `internal` (ValueError, OverflowError from int()); head,
dryRun and paths refusals did not repeat the value sent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcp_helpers import dropin_client, exchange, ok, text_of

HUGE = "123456789012345678901234567890"
EDIT = '{"oldText":"hi","newText":"x"}'
# (tool, arguments as JSON text, the field named, the value as the message repeats it)
CASES: list[tuple[str, str, str, str]] = [
    *[
        (tool, f'{{"path":"a.txt","{field}":{sent}}}', field, said)
        for tool in ("read_text_file", "read_file")
        for field in ("head", "tail", "offset")
        for sent, said in (
            ("NaN", "NaN"),
            ("Infinity", "Infinity"),
            ("-Infinity", "-Infinity"),
            ("1e400", "Infinity"),
            ("1.5", "1.5"),
            (HUGE, HUGE),
            ("-" + HUGE, "-" + HUGE),
            ('"x"', '"x"'),
            ("true", "true"),
            ("[1]", "[1]"),
            ("-1", "-1"),
        )
    ],
    ("read_text_file", '{"path":"a.txt","force":"maybe"}', "force", '"maybe"'),
    ("read_text_file", '{"path":"a.txt","force":NaN}', "force", "NaN"),
    ("read_text_file", '{"path":5}', "path", "5"),
    ("read_text_file", '{"path":""}', "path", '""'),
    ("read_text_file", '{"path":null}', "path", "null"),
    ("read_media_file", '{"path":[1]}', "path", "[1]"),
    ("read_multiple_files", '{"paths":"a.txt"}', "paths", '"a.txt"'),
    ("read_multiple_files", '{"paths":[]}', "paths", "[]"),
    ("read_multiple_files", '{"paths":Infinity}', "paths", "Infinity"),
    ("write_file", '{"path":"b.txt","content":1e400}', "content", "Infinity"),
    ("write_file", '{"path":false,"content":"x"}', "path", "false"),
    ("edit_file", '{"path":"a.txt","edits":5}', "edits", "5"),
    *[
        ("edit_file", f'{{"path":"a.txt","edits":[{EDIT}],"dryRun":{sent}}}', "dryRun", sent)
        for sent in ('"x"', "NaN", "0")
    ],
    ("create_directory", '{"path":-0.5}', "path", "-0.5"),
    ("move_file", '{"source":"a.txt","destination":NaN}', "destination", "NaN"),
    ("get_file_info", '{"path":{}}', "path", "{}"),
    ("list_directory", '{"path":true}', "path", "true"),
    ("list_directory_with_sizes", '{"path":".","sortBy":"age"}', "sortBy", '"age"'),
    ("list_directory_with_sizes", '{"path":".","sortBy":NaN}', "sortBy", "NaN"),
    ("directory_tree", '{"path":".","excludePatterns":"x"}', "excludePatterns", '"x"'),
    ("search_files", '{"path":".","pattern":5}', "pattern", "5"),
    (
        "search_files",
        '{"path":".","pattern":"*","excludePatterns":[NaN]}',
        "excludePatterns[0]",
        "NaN",
    ),
]


def _exchange(workspace: Path, lines: list[bytes]) -> dict[Any, dict[str, Any]]:
    (workspace / "a.txt").write_text("hi\n")
    return exchange(workspace, lines, "--tools", "filesystem")


def test_every_bad_argument_is_bad_params_echoing_what_was_sent(workspace: Path) -> None:
    lines = [
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":%s}}\n'
        % (number, tool.encode(), arguments.encode())
        for number, (tool, arguments, _, _) in enumerate(CASES, 1)
    ]
    by_id = _exchange(workspace, lines)
    wrong = []
    for number, (tool, arguments, field, said) in enumerate(CASES, 1):
        result = by_id[number]["result"]
        text = "".join(part.get("text", "") for part in result["content"])
        data = result["structuredContent"]["error"]["data"]
        first = text.splitlines()[0]
        if not (
            result["isError"]
            and data.get("kind") == "bad_params"
            and data.get("field") == field
            and f"{field} " in first
            and f"got {said}." in first
        ):
            wrong.append((tool, arguments, text))
    assert not wrong, "\n".join(map(repr, wrong))


@pytest.mark.parametrize("head", ["0", "2", "2.0", '"2"'])
def test_a_whole_number_is_taken_as_the_core_takes_it(workspace: Path, head: str) -> None:
    line = (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_text_file",'
        b'"arguments":{"path":"a.txt","head":%s}}}\n' % head.encode()
    )
    result = _exchange(workspace, [line])[1]["result"]
    assert not result.get("isError"), result


async def test_dry_run_zero_is_refused_not_taken_as_false(workspace: Path) -> None:
    # 0 == False in Python: `dryRun: 0` made a real edit of a file the session had read.
    (workspace / "a.txt").write_text("hi\n")
    async with dropin_client(workspace) as client:
        await ok(client, "read_text_file", path="a.txt")
        edits = [{"oldText": "hi", "newText": "changed"}]
        result = await client.call_tool("edit_file", {"path": "a.txt", "edits": edits, "dryRun": 0})
        assert result.is_error, text_of(result)
        assert "dryRun expected true or false, got 0." in text_of(result)
    assert (workspace / "a.txt").read_text() == "hi\n"


async def test_an_argument_the_tool_lacks_is_refused_naming_it(workspace: Path) -> None:
    # The core refuses a param it lacks (known_fields.py); the drop-in dropped it, so a
    # `heads: 3` read the whole file and the caller believed it had three lines.
    (workspace / "a.txt").write_text("one\ntwo\nthree\nfour\n")
    async with dropin_client(workspace) as client:
        result = await client.call_tool("read_text_file", {"path": "a.txt", "heads": 3})
        assert result.is_error, text_of(result)
        assert "read_text_file has no parameter heads" in text_of(result)
        assert "kind: bad_params" in text_of(result)
        listed = await client.call_tool("list_allowed_directories", {"x": 1})
        assert listed.is_error, text_of(listed)
