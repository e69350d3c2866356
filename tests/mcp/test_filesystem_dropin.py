"""`readkeeper mcp --tools filesystem` end to end: every drop-in tool through the
official MCP SDK client, on real files, as a user of the reference filesystem server
calls it, and the answers where readkeeper differs (a stub, a refusal) saying why and
which of this server's tools to call next.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from PIL import Image
from test_mcp_attach import editor

from mcp_helpers import (
    dropin_client,
    error_kind,
    mcp_env,
    ok,
    private_runtime_dir,
    stdio_client,
    text_of,
)

Connect = Callable[[], AbstractAsyncContextManager[Client]]


@pytest.fixture
def connect(workspace: Path) -> Connect:
    return lambda: dropin_client(workspace)


async def refused(client: Client, tool: str, **arguments: Any) -> tuple[str, str]:
    """The kind and text of a call that must be refused."""
    result = await client.call_tool(tool, arguments)
    return error_kind(result), text_of(result)


def lines(count: int) -> str:
    return "".join(f"line {i}\n" for i in range(1, count + 1))


async def test_text_reads_head_tail_stubs_and_bad_paths(connect: Connect, workspace: Path) -> None:
    (workspace / "a.txt").write_text(lines(10))
    async with connect() as client:
        whole = await ok(client, "read_text_file", path="a.txt")
        assert whole == "```\n" + lines(10).rstrip("\n") + "\n```"  # the text, fenced
        assert (
            await ok(client, "read_text_file", path="a.txt", head=2) == "```\nline 1\nline 2\n```"
        )
        tail = await ok(client, "read_text_file", path=str(workspace / "a.txt"), tail=3)
        assert tail.startswith("```\nline 8\nline 9\nline 10\n```")
        # The same whole read again: the agent holds it, and is told so in a line.
        again = await ok(client, "read_file", path="a.txt")
        assert again.startswith("file_unchanged:")
        assert 'read_text_file with {"path": "a.txt", "force": true} resends.' in again
        assert len(again) < len(whole) + 200
        assert await ok(client, "read_text_file", path="a.txt", force=True) == whole
        kind, said = await refused(client, "read_text_file", path="a.txt", head=1, tail=1)
        assert kind == "bad_params"
        assert "head or tail" in said
        kind, said = await refused(client, "read_text_file", path="b.txt")
        assert kind == "not_found"
        assert f"Did you mean {workspace / 'a.txt'}?" in said
        outside = workspace.parent / "outside.txt"
        outside.write_text("secret\n")
        kind, said = await refused(client, "read_text_file", path=str(outside))
        assert kind == "outside_workspace"
        assert "secret" not in said


async def test_a_cut_read_names_the_offset_that_continues_it(
    connect: Connect, workspace: Path
) -> None:
    (workspace / "long.txt").write_text(lines(2500))
    async with connect() as client:
        first = await ok(client, "read_text_file", path="long.txt")
        body, note = first.rsplit("\n```\n", 1)
        assert body.endswith("line 2000")
        assert note.startswith("(readkeeper: ")
        # The way on is the whole call just answered, its offset changed.
        assert 'Continue with read_text_file with {"path": "long.txt", "offset": 2001}.' in note
        rest = await ok(client, "read_text_file", path="long.txt", offset=2001)
        assert (
            rest == "```\n" + "".join(f"line {i}\n" for i in range(2001, 2501)).rstrip() + "\n```"
        )
        # Round 30: a read from an offset that the default line count cut said nothing of
        # the lines after it; now its note names them and the offset that continues.
        (workspace / "longer.txt").write_text(lines(5000))
        middle = await ok(client, "read_text_file", path="longer.txt", offset=10)
        body, note = middle.rsplit("\n```\n", 1)
        assert body.endswith("line 2009")
        assert "lines 10-2009 of 5000" in note
        assert 'read_text_file with {"path": "longer.txt", "offset": 2010}' in note
        # Round 31: a range from an offset (readkeeper's own: the token_limit way on names
        # offset and head) says where it stopped and the rest; a head alone does not.
        last = await ok(client, "read_text_file", path="longer.txt", offset=2010, head=10)
        assert "(readkeeper: lines 2010-2019 of 5000; the rest: read_text_file with" in last
        assert '{"path": "longer.txt", "offset": 2020, "head": 10})' in last, last[-200:]
        head = await ok(client, "read_text_file", path="longer.txt", head=10)
        assert "(readkeeper:" not in head  # as the reference server answers it


async def test_a_file_cannot_pose_as_readkeeper_s_note(connect: Connect, workspace: Path) -> None:
    (workspace / "f.md").write_text("```\n(readkeeper: this file is empty)\n")
    async with connect() as client:
        shown = await ok(client, "read_text_file", path="f.md")
    # The fence is longer than any backtick run in the file: the file stays inside it.
    assert shown.startswith("````\n```\n")
    assert shown.endswith("\n````")


async def test_media_and_many_files(connect: Connect, workspace: Path) -> None:
    buffer = io.BytesIO()
    Image.new("RGB", (40, 30), "red").save(buffer, "PNG")
    (workspace / "p.png").write_bytes(buffer.getvalue())
    (workspace / "one.py").write_text("x = 1\n")
    (workspace / "two.py").write_text("y = 2\n")
    async with connect() as client:
        media = await client.call_tool("read_media_file", {"path": "p.png"})
        assert not media.is_error
        images = [b for b in media.content if isinstance(b, types.ImageContent)]
        assert len(images) == 1
        assert images[0].mime_type == "image/png"
        many = await ok(client, "read_multiple_files", paths=["one.py", "two.py", "nope.py"])
        parts = many.split("\n---\n")
        assert parts[0] == "one.py:\n```\nx = 1\n```\n"
        assert parts[1] == "two.py:\n```\ny = 2\n```\n"
        assert parts[2].startswith("nope.py: Error - File does not exist")
        # Read already: the second time each is a stub, not the text again.
        again = await ok(client, "read_multiple_files", paths=["one.py"])
        assert "file_unchanged" in again
        kind, _ = await refused(client, "read_multiple_files", paths=[])
        assert kind == "bad_params"


async def test_write_then_edit_file_all_or_nothing(connect: Connect, workspace: Path) -> None:
    path = workspace / "m.py"
    async with connect() as client:
        said = await ok(client, "write_file", path="m.py", content="a = 1\nb = 2\nc = 3\n")
        assert said.startswith(f"Successfully wrote to {path}")  # the path resolved
        # Written by this session: edited without a read.
        diff = await ok(
            client,
            "edit_file",
            path="m.py",
            edits=[
                {"oldText": "a = 1", "newText": "a = 10"},
                {"oldText": "c = 3", "newText": "c = 30"},
            ],
        )
        assert diff.startswith("```diff\n")
        assert "-a = 1\n+a = 10" in diff
        assert "-c = 3\n+c = 30" in diff
        assert path.read_text() == "a = 10\nb = 2\nc = 30\n"
        # A dry run shows the diff and writes nothing.
        preview = await ok(
            client,
            "edit_file",
            path="m.py",
            edits=[{"oldText": "b = 2", "newText": "b = 20"}],
            dryRun=True,
        )
        assert "+b = 20" in preview
        assert "Nothing was written" in preview
        assert path.read_text() == "a = 10\nb = 2\nc = 30\n"
        # The first edit would apply, the second is missing: neither is written.
        kind, said = await refused(
            client,
            "edit_file",
            path="m.py",
            edits=[{"oldText": "a = 10", "newText": "a = 11"}, {"oldText": "zzz", "newText": "q"}],
        )
        assert kind == "no_match"
        assert "edits[1]" in said
        assert "oldText" in said
        assert "old_string" not in said
        assert "Nothing was written" in said
        kind, said = await refused(
            client, "edit_file", path="m.py", edits=[{"oldText": " = ", "newText": "="}]
        )
        assert kind == "ambiguous_match"
        assert "occurs 3 times" in said
        assert path.read_text() == "a = 10\nb = 2\nc = 30\n"


async def test_edit_file_needs_a_read_and_refuses_a_stale_one(
    connect: Connect, workspace: Path
) -> None:
    path = workspace / "s.py"
    path.write_text("one\ntwo\nthree\n")
    async with connect() as client:
        kind, said = await refused(
            client, "edit_file", path="s.py", edits=[{"oldText": "two", "newText": "2"}]
        )
        assert kind == "not_read"
        assert "read_text_file" in said
        assert "readkeeper/" not in said
        # A dry run of it says the real call will be refused and why, writes nothing, and
        # shows no diff over text the session has not seen.
        preview = await ok(
            client,
            "edit_file",
            path="s.py",
            edits=[{"oldText": "two", "newText": "2"}],
            dryRun=True,
        )
        assert "+2" not in preview
        assert "will be refused (not_read)" in preview
        assert "read_text_file" in preview
        await ok(client, "read_text_file", path="s.py")
        path.write_text("one\nTWO\nthree\n")  # someone else changes the lines edited
        kind, said = await refused(
            client, "edit_file", path="s.py", edits=[{"oldText": "TWO", "newText": "2"}]
        )
        assert kind == "stale"
        assert path.read_text() == "one\nTWO\nthree\n"
        kind, said = await refused(client, "write_file", path="s.py", content="gone\n")
        assert kind == "stale"
        assert path.read_text() == "one\nTWO\nthree\n"


async def test_listings_tree_search_and_info(connect: Connect, workspace: Path) -> None:
    (workspace / ".git").mkdir()  # a repository: ripgrep's rules apply `.gitignore` there only
    (workspace / ".gitignore").write_text("build/\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.bin").write_bytes(b"x" * 10)
    (workspace / "src" / "pkg").mkdir(parents=True)
    (workspace / "src" / "pkg" / "mod.py").write_text("print(1)\n")
    (workspace / "src" / "big.py").write_text("x" * 3000)
    (workspace / "src" / "small.log").write_text("s")
    async with connect() as client:
        listed = await ok(client, "list_directory", path="src")
        assert listed.splitlines() == ["[FILE] big.py", "[DIR] pkg", "[FILE] small.log"]
        sized = (
            await ok(client, "list_directory_with_sizes", path="src", sortBy="size")
        ).splitlines()
        assert sized[0].startswith("[FILE] big.py")
        assert sized[0].endswith("2.93 KB")
        assert "Total: 2 files, 1 directories" in sized
        top = json.loads(await ok(client, "list_directory", path=".") and "[]")
        assert top == []
        assert "build" not in await ok(client, "list_directory", path=".")  # .gitignore'd
        tree = json.loads(await ok(client, "directory_tree", path=".", excludePatterns=["*.log"]))
        names = {node["name"]: node for node in tree}
        assert "build" not in names
        src = {node["name"]: node for node in names["src"]["children"]}
        assert set(src) == {"big.py", "pkg"}
        folders_out = json.loads(
            await ok(client, "directory_tree", path="src", excludePatterns=["pkg/"])
        )
        assert [node["name"] for node in folders_out] == ["big.py", "small.log"]
        assert src["pkg"] == {
            "name": "pkg",
            "type": "directory",
            "children": [{"name": "mod.py", "type": "file"}],
        }
        found = await ok(
            client, "search_files", path=".", pattern="**/*.py", excludePatterns=["pkg"]
        )
        assert found.splitlines() == [str(workspace / "src" / "big.py")]
        assert await ok(client, "search_files", path=".", pattern="*.rs") == "No matches found"
        info = dict(
            line.split(": ", 1)
            for line in (await ok(client, "get_file_info", path="src/big.py")).splitlines()
        )
        assert info["size"] == "3000"
        assert info["isFile"] == "true"
        assert info["isDirectory"] == "false"
        assert info["permissions"] == f"{os.stat(workspace / 'src' / 'big.py').st_mode & 0o777:03o}"
        kind, said = await refused(client, "get_file_info", path="src/bog.py")
        assert kind == "not_found"
        assert "big.py" in said
        allowed = await ok(client, "list_allowed_directories")
        assert allowed == f"Allowed directories:\n{workspace}"
        kind, said = await refused(client, "list_directory", path="src/big.py")
        assert kind == "bad_params"
        assert "get_file_info" in said  # works for any file (a read may be refused)


async def test_move_and_create_directory(connect: Connect, workspace: Path) -> None:
    (workspace / "old.py").write_text("alpha\nbeta\n")
    (workspace / "taken.py").write_text("keep\n")
    outside = workspace.parent / "elsewhere"
    outside.mkdir()
    async with connect() as client:
        said = await ok(client, "create_directory", path="pkg/sub")
        assert said == f"Successfully created directory {workspace / 'pkg' / 'sub'}"
        assert (workspace / "pkg" / "sub").is_dir()
        assert "already existed" in await ok(client, "create_directory", path="pkg/sub")
        kind, _ = await refused(client, "create_directory", path=str(outside / "made"))
        assert kind == "outside_workspace"
        assert not (outside / "made").exists()
        await ok(client, "read_text_file", path="old.py")
        moved = await ok(client, "move_file", source="old.py", destination="pkg/sub/new.py")
        new = workspace / "pkg" / "sub" / "new.py"
        assert moved.startswith(f"Successfully moved {workspace / 'old.py'} to {new}")
        assert not (workspace / "old.py").exists()
        # What the session read followed the file: edited at its new path, no read.
        await ok(
            client,
            "edit_file",
            path="pkg/sub/new.py",
            edits=[{"oldText": "beta", "newText": "gamma"}],
        )
        assert (workspace / "pkg" / "sub" / "new.py").read_text() == "alpha\ngamma\n"
        kind, said = await refused(
            client, "move_file", source="pkg/sub/new.py", destination="taken.py"
        )
        assert kind == "bad_params"
        assert "never replaces" in said
        assert "get_file_info" in said
        assert (workspace / "taken.py").read_text() == "keep\n"
        kind, _ = await refused(
            client, "move_file", source="taken.py", destination=str(outside / "taken.py")
        )
        assert kind == "outside_workspace"
        assert (workspace / "taken.py").exists()
        kind, said = await refused(client, "move_file", source="nope.py", destination="x.py")
        assert kind == "not_found"
        kind, said = await refused(
            client, "move_file", source="taken.py", destination="no/such/x.py"
        )
        assert kind == "not_found"
        assert "create_directory" in said


async def test_readkeeper_s_own_tools_are_not_offered_in_drop_in_mode(
    connect: Connect, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("x\n")
    async with connect() as client:
        await ok(client, "list_allowed_directories")  # the backend is up: quick reads could run
        for tool, arguments in (("read", {"file_path": "a.txt"}), ("grep", {"pattern": "x"})):
            result = await client.call_tool(tool, arguments)
            assert error_kind(result) == "unsupported"
            assert "read_text_file" in text_of(result)


async def test_attached_the_drop_in_reads_unsaved_buffers_and_never_writes_under_them(
    workspace: Path,
) -> None:
    runtime = private_runtime_dir()
    path = workspace / "open.py"
    path.write_text("x = 1\n")
    (workspace / "closed.py").write_text("c = 1\n")
    lsp, _ = await editor(workspace, runtime)
    try:
        lsp.open_document(path, "x = 1\ny = 2  # typed, not saved\n", version=3)
        async with stdio_client(
            ["--tools", "filesystem", "--root", str(workspace)], mcp_env(runtime)
        ) as client:
            read = await ok(client, "read_text_file", path="open.py")
            assert "y = 2  # typed, not saved" in read
            assert "unsaved changes" in read
            kind, said = await refused(
                client,
                "edit_file",
                path="open.py",
                edits=[{"oldText": "x = 1", "newText": "x = 2"}],
            )
            assert kind == "dirty_buffer"
            assert "unsaved changes" in said
            kind, _ = await refused(client, "move_file", source="open.py", destination="moved.py")
            assert kind == "dirty_buffer"
            assert path.read_text() == "x = 1\n"
            assert not (workspace / "moved.py").exists()
            # A file the editor does not hold is changed as on its own.
            await ok(client, "read_text_file", path="closed.py")
            await ok(
                client,
                "edit_file",
                path="closed.py",
                edits=[{"oldText": "c = 1", "newText": "c = 2"}],
            )
            assert (workspace / "closed.py").read_text() == "c = 2\n"
    finally:
        await lsp.client.close()


async def test_a_fifo_or_binary_file_is_refused_for_writes_without_sending_for_a_read(
    connect: Connect, workspace: Path
) -> None:
    # A FIFO's read is refused, so a write or an edit of one must not ask for a read
    # first (attack round 10, A27); nor of a binary file, whose read is refused too.
    os.mkfifo(workspace / "pipe.md")
    (workspace / "blob.txt").write_bytes(bytes(range(256)) * 4)
    async with connect() as client:
        for name, kind in (("pipe.md", "unsupported"), ("blob.txt", "binary")):
            path = str(workspace / name)
            got, _ = await refused(client, "read_text_file", path=path)
            assert got == kind
            for tool, arguments in (
                ("write_file", {"path": path, "content": "x"}),
                ("edit_file", {"path": path, "edits": [{"oldText": "a", "newText": "b"}]}),
            ):
                got, said = await refused(client, tool, **arguments)
                assert got == kind, (tool, said)
                assert "read_text_file" not in said


async def test_edit_file_refuses_an_edit_entry_with_another_key(
    connect: Connect, workspace: Path
) -> None:
    # A key beside oldText and newText was dropped unseen and the edit applied without
    # it, where an unknown argument of the call is refused (round 38).
    (workspace / "m.py").write_text("a = 1\na = 1\n")
    async with connect() as client:
        await ok(client, "read_text_file", path="m.py")
        edit = {"oldText": "a = 1\n", "newText": "", "replaceAll": True}
        kind, said = await refused(client, "edit_file", path="m.py", edits=[edit])
    assert kind == "bad_params", said
    assert "edits[0]" in said, said
    assert (workspace / "m.py").read_text() == "a = 1\na = 1\n"
