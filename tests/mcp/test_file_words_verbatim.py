"""A front end's rewording (the drop-in's `path` for `file_path`, every front end's next
call said as its own tool or command) applies to readkeeper's own words only, never to
a file's text or a name inside a message: a re-read's diff, a `stale` refusal's diff, a
`no_match`'s closest text and a quoted name are shown as they are (attack round 20's
A29: a write-back of a renamed diff lost another program's bytes; A15: a name was said
as another file's)."""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest
from mcp import Client

from mcp_helpers import (
    dropin_client,
    error_kind,
    mcp_env,
    ok,
    private_runtime_dir,
    stdio_client,
    text_of,
)

# A line of a file holding readkeeper's words: a tool schema, an agent's code, its docs.
THEIRS = '  "file_path": "/etc/x", "old_string": "keep me", "new_string": "y", limit=3,'
CALL = 'readkeeper/read {"file_path": "x"}'
ORIGINAL = "{\n" + "".join(f'  "key{i}": {i},\n' for i in range(200)) + '  "end": 0\n}\n'

Connect = Callable[[], AbstractAsyncContextManager[Client]]


def core_client(workspace: Path) -> AbstractAsyncContextManager[Client]:
    args = ["--standalone", "--root", str(workspace)]
    return stdio_client(args, mcp_env(private_runtime_dir()))


def _fenced(said: str) -> str:
    """The file's text a read_text_file answer fences."""
    return said.split("```\n", 1)[1].rsplit("\n```", 1)[0] + "\n"


async def test_a_dropin_write_back_of_a_reread_keeps_the_other_programs_bytes(
    workspace: Path,
) -> None:
    big = workspace / "big.json"
    big.write_text(ORIGINAL)
    async with dropin_client(workspace) as client:
        held = _fenced(await ok(client, "read_text_file", path=str(big)))
        assert held == ORIGINAL
        theirs = ORIGINAL.replace('  "key100": 100,', f"{THEIRS} {CALL}")
        big.write_text(theirs)
        said = await ok(client, "read_text_file", path=str(big))
        # The re-read's diff (or the whole text) shows the other program's line as it is.
        assert f"{THEIRS} {CALL}" in said, said
        minus = [ln[1:] for ln in said.splitlines() if ln.startswith("-") and ln[1:2] != "-"]
        plus = [ln[1:] for ln in said.splitlines() if ln.startswith("+") and ln[1:2] != "+"]
        mine = held.replace(minus[0] + "\n", plus[0] + "\n") if minus else _fenced(said)
        mine = mine.replace('"key5": 5,', '"key5": 555,')  # the agent's own change
        await ok(client, "write_file", path=str(big), content=mine)
    assert big.read_text() == theirs.replace('"key5": 5,', '"key5": 555,')


@pytest.mark.parametrize("front", ["dropin", "core"])
async def test_a_stale_diff_and_a_closest_text_show_the_file_as_it_is(
    workspace: Path, front: str
) -> None:
    file = workspace / "conf.json"
    file.write_text(ORIGINAL)
    path = str(file)
    near = THEIRS.replace("keep me", "keep you")
    if front == "dropin":
        connect, read = dropin_client, ("read_text_file", {"path": path})
        write = ("write_file", {"path": path, "content": "x\n"})
        edit = ("edit_file", {"path": path, "edits": [{"oldText": near, "newText": "z"}]})
    else:
        connect, read = core_client, ("read", {"file_path": path})
        write = ("write", {"file_path": path, "content": "x\n"})
        edit = ("edit", {"file_path": path, "old_string": near, "new_string": "z"})
    async with connect(workspace) as client:
        assert not (await client.call_tool(*read)).is_error
        file.write_text(ORIGINAL.replace('  "key100": 100,', f"{THEIRS} {CALL}"))
        refused = await client.call_tool(*write)
        assert error_kind(refused) == "stale"
        await client.call_tool(*read)  # read again: now the edit misses on the text
        missing = await client.call_tool(*edit)
        assert error_kind(missing) == "no_match"
        stale, missed = text_of(refused), text_of(missing)
    for said in (stale, missed):
        assert f"{THEIRS} {CALL}" in said, said


async def test_a_dropin_refusal_names_a_quoted_file_as_itself(workspace: Path) -> None:
    asked = workspace / 'a"file_path"b.txt'
    asked.write_text("mine\n")
    (workspace / 'a"path"b.txt').write_text("other\n")
    async with dropin_client(workspace) as client:
        for tool, args in (
            ("write_file", {"path": str(asked), "content": "x\n"}),
            ("edit_file", {"path": str(asked), "edits": [{"oldText": "m", "newText": "n"}]}),
        ):
            said = text_of(await client.call_tool(tool, args))
            assert error_kind(await client.call_tool(tool, args)) == "not_read"
            assert '\\"path\\"' not in said, said
            assert re.search(r'a\\"file_path\\"b\.txt', said), said
