"""The drop-in's words for readkeeper's next calls and params (mcp/filesystem/words.py):
each method said as this server's tool with its arguments renamed, a method it lacks
said as readkeeper's own, and never a path or a name changed on the way."""

from __future__ import annotations

from readkeeper.hints import again, call
from readkeeper.mcp.filesystem import SCHEMAS
from readkeeper.mcp.filesystem.words import error_words, for_filesystem


def test_each_next_call_is_a_tool_of_the_drop_in() -> None:
    message = (
        f"Read it ({call('read', file_path='/w/a.py', offset=3, limit=2)}), list "
        f"({call('list', path='/w')}) or find it ({call('glob', pattern='**/a.py')})."
    )
    assert for_filesystem(message) == (
        'Read it (read_text_file with {"path": "/w/a.py", "offset": 3, "head": 2}), list '
        '(list_directory with {"path": "/w"}) or find it (search_files with {"path": ".", '
        '"pattern": "**/a.py"}).'
    )
    assert for_filesystem(f"({call('mkdir', path='/w/d')})") == (
        '(create_directory with {"path": "/w/d"})'
    )
    grep = for_filesystem(call("grep", pattern="x"))
    assert "does not offer it" in grep
    assert "readkeeper/" not in grep


def test_param_words_are_renamed_but_never_inside_a_path() -> None:
    said = for_filesystem(
        "old_string was not found in /w/old_string.py; file_path /w/file_path/new_string.txt."
    )
    assert said == ("oldText was not found in /w/old_string.py; path /w/file_path/new_string.txt.")


def test_an_error_names_the_tools_own_parameters() -> None:
    params = SCHEMAS["read_text_file"]["properties"]
    said, data = error_words(
        "read_text_file",
        {"path": "a", "tail": 3},
        "The limit is the budget: read fewer lines, offset=1, limit=2; file_path must exist.",
        {"kind": "bad_params", "field": "limit", "file_path": "/a"},
        params,
    )
    # A next read's count is head (only it takes an offset), said as the whole call:
    # tail is read as offset and head, so the call's tail is dropped; the field given
    # was tail.
    assert said == (
        'The limit is the budget: read fewer lines, read_text_file with {"path": "a", '
        '"offset": 1, "head": 2}; path must exist.'
    )
    assert data == {"kind": "bad_params", "field": "tail", "path": "/a"}
    many = SCHEMAS["read_multiple_files"]["properties"]
    said, data = error_words(
        "read_multiple_files",
        {},
        "file_paths must name 1 to 100 files.",
        {"field": "file_paths"},
        many,
    )
    assert (said, data) == ("paths must name 1 to 100 files.", {"field": "paths"})
    # A core param the tool has no counterpart for is not named as a field to fix.
    listing = SCHEMAS["list_directory"]["properties"]
    assert error_words("list_directory", {}, "x", {"field": "depth"}, listing)[1] == {}


def test_a_notes_line_count_is_said_as_head() -> None:
    assert for_filesystem("Read fewer lines: offset=3, limit=20.") == (
        "Read fewer lines: offset=3, head=20."
    )
    # As the core writes it (a sentence names no option as a word: test_ways_on.py).
    assert for_filesystem(f"Read any lines, e.g. {again(offset=5, limit=9)}.") == (
        "Read any lines, e.g. offset=5, head=9."
    )
    assert for_filesystem("over the limit; see /a/limit=3") == "over the limit; see /a/limit=3"
