"""`readkeeper mcp` end to end: the real subprocess, driven by the `mcp` SDK's own
client over stdio and over streamable HTTP, on real files.
"""

from __future__ import annotations

import base64
import io
import json
import subprocess
import sys
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client
from PIL import Image

from helpers import eventually, names_a_shell_command
from mcp_helpers import (
    call,
    error_kind,
    http_client,
    mcp_env,
    private_runtime_dir,
    stdio_client,
    text_of,
)
from readkeeper.mcp.tools import TOOLS, input_schema

Connect = Callable[[], AbstractAsyncContextManager[Client]]


@pytest.fixture(params=["stdio", "http"])
def connect(request: pytest.FixtureRequest, workspace: Path) -> Connect:
    """Opens a client of `readkeeper mcp --root WORKSPACE` (entered in the test itself:
    the SDK's task groups must be left in the task that entered them)."""
    env = mcp_env(private_runtime_dir(), READKEEPER_WATCH_DEBOUNCE_MS="20")
    args = ["--root", str(workspace)]
    if request.param == "stdio":
        return lambda: stdio_client(args, env)
    return lambda: http_client(args, env)


async def test_every_tool_is_listed_with_its_generated_schema_and_annotations(
    connect: Connect,
) -> None:
    async with connect() as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(listed) == {
            "read",
            "edit",
            "write",
            "undo",
            "attachments",
            "changes",
            "forget",
            "stats",
            "read_many",
            "grep",
            "glob",
            "list",
        }
        for spec in TOOLS:
            tool = listed[spec.name]
            assert tool.input_schema == input_schema(spec)
            assert tool.annotations is not None
            assert tool.annotations.read_only_hint is spec.read_only
            assert tool.annotations.destructive_hint is spec.destructive
            assert tool.annotations.idempotent_hint is spec.idempotent
            assert tool.annotations.title == spec.title
        assert listed["read"].input_schema["required"] == ["file_path"]
        assert listed["read"].input_schema["properties"]["offset"]["type"] == "integer"
        # The edit tool also takes a notebook cell edit, so old_string is not required,
        # and several files (files), so neither is file_path.
        assert "required" not in listed["edit"].input_schema
        assert "cell_id" in listed["edit"].input_schema["properties"]
        assert "files" in listed["edit"].input_schema["properties"]
        assert listed["read"].annotations.read_only_hint is True  # type: ignore[union-attr]
        assert listed["write"].annotations.destructive_hint is True  # type: ignore[union-attr]


async def test_read_then_a_reread_is_the_unchanged_stub(connect: Connect, workspace: Path) -> None:
    async with connect() as client:
        (workspace / "a.py").write_text("alpha = 1\nbeta = 2\n")
        # A named session: over HTTP, 2026-07-28 clients have no connection to be one.
        first = await client.call_tool("read", {"file_path": "a.py", "session": "chat-1"})
        assert not first.is_error
        assert "     1\talpha = 1\n     2\tbeta = 2" in text_of(first)
        assert first.structured_content is not None
        assert first.structured_content["type"] == "text"
        assert first.structured_content["file"]["file_path"] == str(workspace / "a.py")
        assert first.structured_content["file"]["num_lines"] == 2
        # The lines travel once, in the text block: not again in the structured result.
        assert "content" not in first.structured_content["file"]
        assert "alpha = 1" not in json.dumps(first.structured_content)

        again = await client.call_tool(
            "read", {"file_path": str(workspace / "a.py"), "session": "chat-1"}
        )
        assert again.structured_content is not None
        assert again.structured_content["type"] == "file_unchanged"
        held = again.structured_content["file"]
        assert held["file_path"] == str(workspace / "a.py")
        assert (held["start_line"], held["num_lines"], held["total_lines"]) == (1, 2, 2)
        assert held["obtained_by"] == "read"
        assert "file_unchanged" in text_of(again)
        assert "All 2 lines unchanged since your read" in text_of(again)
        assert "alpha = 1" not in text_of(again)

        forced = await call(client, "read", file_path="a.py", force=True, session="chat-1")
        assert forced["type"] == "text"
        stats = await call(client, "stats", session="chat-1")
        assert stats["mode"] == "standalone"
        assert stats["total"]["dedup_hits"] == 1
        # After the session's own write, the stub says the content is what it wrote.
        await client.call_tool(
            "write", {"file_path": "a.py", "content": "gamma = 3\n", "session": "chat-1"}
        )
        written = await client.call_tool("read", {"file_path": "a.py", "session": "chat-1"})
        assert "exactly what you wrote at" in text_of(written)
        assert "since your read" not in text_of(written)


async def test_an_outline_and_a_diff_travel_once_in_the_text_block(
    connect: Connect, workspace: Path
) -> None:
    source = "".join(f"def handler_{i}(event):\n    return event + {i}\n\n" for i in range(600))
    (workspace / "big.py").write_text(source)
    (workspace / "notes.txt").write_text("".join(f"note {n}\n" for n in range(1, 201)))
    async with connect() as client:
        outline = await client.call_tool("read", {"file_path": "big.py", "session": "s"})
        assert outline.structured_content is not None
        assert outline.structured_content["type"] == "outline"
        assert "handler_250" in text_of(outline)  # a symbol the outline shows
        assert "outline" not in outline.structured_content["file"]
        assert "handler_250" not in json.dumps(outline.structured_content)
        await call(client, "read", file_path="notes.txt", session="s")
        (workspace / "notes.txt").write_text(
            (workspace / "notes.txt").read_text().replace("note 7\n", "note seven\n")
        )
        changed = await client.call_tool("read", {"file_path": "notes.txt", "session": "s"})
        assert changed.structured_content is not None
        assert changed.structured_content["type"] == "file_changed"
        assert "+note seven" in text_of(changed)
        assert "diff" not in changed.structured_content["file"]
        assert "note seven" not in json.dumps(changed.structured_content)


async def test_a_ranged_read_says_where_to_go_on(connect: Connect, workspace: Path) -> None:
    async with connect() as client:
        (workspace / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 101)))
        result = await client.call_tool(
            "read", {"file_path": "long.txt", "offset": "10", "limit": 5}
        )
        text = text_of(result)
        assert "lines 10-14 of 100" in text
        assert "    10\tline 10" in text
        assert "line 15" not in text


async def test_every_error_kind_is_a_tool_error_with_the_lsp_message(
    connect: Connect, workspace: Path
) -> None:
    async with connect() as client:
        (workspace / "src").mkdir()
        (workspace / "src" / "main.py").write_text("print('hi')\n")
        missing = await client.call_tool("read", {"file_path": "src/mian.py"})
        assert error_kind(missing) == "not_found"
        assert missing.structured_content is not None
        assert missing.structured_content["error"]["data"]["suggestions"] == [
            str(workspace / "src" / "main.py")
        ]
        assert str(workspace / "src" / "main.py") in text_of(missing)

        outside = workspace.parent / "outside.txt"
        outside.write_text("secret\n")
        assert error_kind(await client.call_tool("read", {"file_path": str(outside)})) == (
            "outside_workspace"
        )
        assert error_kind(await client.call_tool("read", {"file_path": "src"})) == "is_directory"
        bad = await client.call_tool("read", {"file_path": "src/main.py", "limit": "many"})
        assert error_kind(bad) == "bad_params"
        assert "limit" in text_of(bad)
        assert error_kind(
            await client.call_tool("read", {"file_path": "src/main.py", "offset": -3})
        ) == ("bad_params")
        assert error_kind(await client.call_tool("read", {})) == "bad_params"

        (workspace / "big.log").write_text("x" * 100 + "\n" * 3000 + "y" * 300_000)
        assert error_kind(await client.call_tool("read", {"file_path": "big.log"})) == "too_large"
        (workspace / "blob.bin").write_bytes(bytes(range(256)) * 64)
        binary = await client.call_tool("read", {"file_path": "blob.bin"})
        assert error_kind(binary) == "binary"
        assert not names_a_shell_command(text_of(binary)), text_of(binary)
        assert 'the list tool with {"path": ' in text_of(binary)  # a call it offers

        edit = {"file_path": "src/main.py", "old_string": "hi", "new_string": "ho"}
        assert error_kind(await client.call_tool("edit", edit)) == "not_read"
        await call(client, "read", file_path="src/main.py")
        no_match = {**edit, "old_string": "absent"}
        assert error_kind(await client.call_tool("edit", no_match)) == "no_match"
        (workspace / "twice.txt").write_text("a\na\n")
        await call(client, "read", file_path="twice.txt")
        twice = {"file_path": "twice.txt", "old_string": "a", "new_string": "b"}
        assert error_kind(await client.call_tool("edit", twice)) == "ambiguous_match"
        same = {**edit, "new_string": "hi"}
        assert error_kind(await client.call_tool("edit", same)) == "no_change"
        attach = await client.call_tool("attachments", {"types": ["weather"]})
        assert error_kind(attach) == "bad_params"
        assert error_kind(await client.call_tool("nonesuch", {})) == "unsupported"


async def test_an_image_read_is_image_content_within_the_token_budget(
    connect: Connect, workspace: Path
) -> None:
    async with connect() as client:
        picture = Image.new("RGB", (3000, 2000))
        for x in range(0, 3000, 50):
            for y in range(0, 2000, 50):
                picture.putpixel((x, y), (x % 256, y % 256, 128))
        picture.save(workspace / "photo.png")

        result = await client.call_tool("read", {"file_path": "photo.png"})
        assert not result.is_error, text_of(result)
        images = [b for b in result.content if isinstance(b, types.ImageContent)]
        assert len(images) == 1
        shown = Image.open(io.BytesIO(base64.b64decode(images[0].data)))
        assert images[0].mime_type in ("image/png", "image/jpeg", "image/webp")
        assert (shown.width * shown.height + 749) // 750 <= 1600  # the default image budget
        structured = result.structured_content
        assert structured is not None
        assert "base64" not in structured["file"]  # it travels once, as the image
        assert structured["file"]["dimensions"]["original_width"] == 3000
        assert structured["file"]["tokens"] <= 1600
        assert "3000x2000" in text_of(result)


async def test_a_stale_edit_is_caught_after_an_external_change(
    connect: Connect, workspace: Path
) -> None:
    async with connect() as client:
        target = workspace / "config.py"
        target.write_text("DEBUG = False\nPORT = 80\n")
        await call(client, "read", file_path="config.py")
        target.write_text("DEBUG = True\nPORT = 80\n")  # someone else changed that line
        stale = await client.call_tool(
            "edit",
            {"file_path": "config.py", "old_string": "DEBUG = False", "new_string": "DEBUG = 1"},
        )
        assert error_kind(stale) == "stale"
        assert "+DEBUG = True" in text_of(stale)
        assert target.read_text() == "DEBUG = True\nPORT = 80\n"
        assert (await call(client, "stats"))["total"]["stale_edits_caught"] == 1


async def test_an_edit_over_a_disjoint_change_is_merged(connect: Connect, workspace: Path) -> None:
    async with connect() as client:
        target = workspace / "app.py"
        target.write_text("".join(f"line{n} = {n}\n" for n in range(1, 41)))
        await call(client, "read", file_path="app.py")
        target.write_text(target.read_text().replace("line40 = 40", "line40 = 'changed'"))
        edited = await call(
            client, "edit", file_path="app.py", old_string="line2 = 2", new_string="line2 = 'two'"
        )
        assert edited["merged"] is True
        assert edited["replacements"] == 1
        content = target.read_text()
        assert "line2 = 'two'" in content
        assert "line40 = 'changed'" in content


async def test_write_changes_forget_and_attachments(connect: Connect, workspace: Path) -> None:
    async with connect() as client:
        created = await call(client, "write", file_path="new.md", content="# Title\n")
        assert created["created"] is True
        assert (workspace / "new.md").read_text() == "# Title\n"
        await call(client, "read", file_path="new.md")
        (workspace / "new.md").write_text("# Title\nmore\n")

        async def noticed() -> bool:
            changes = await call(client, "changes")
            return any(c["file_path"] == str(workspace / "new.md") for c in changes["changes"])

        await eventually(noticed, "the watcher to report the change to new.md")
        (workspace / "AGENTS.md").write_text("Always run the tests.\n")
        attached = await client.call_tool("attachments", {"mentions": ["new.md"]})
        assert not attached.is_error, text_of(attached)
        assert attached.structured_content is not None
        assert "used_tokens" in attached.structured_content

        forgotten = await call(client, "forget")
        assert forgotten["forgotten"] >= 1
        assert (await call(client, "read", file_path="new.md"))["type"] == "text"


def test_only_quick_reads_by_our_own_core_are_served_on_the_event_loop(workspace: Path) -> None:
    from readkeeper.mcp.backends import AttachedBackend, LocalBackend

    backend = LocalBackend([str(workspace)])
    try:

        def on_loop(tool: str, arguments: dict[str, object]) -> bool:
            return backend.quick(tool, dict(arguments))

        # Until the token table is loaded (from the start: `load_ahead`), a read pays for
        # the rest of the load: never on the loop (a table loaded never unloads).
        assert not on_loop("read", {"file_path": "src/app.py"}) or backend.core.tokens.loaded
        backend.core.tokens.warm_up()
        assert on_loop("read", {"file_path": "src/app.py", "offset": 3})
        assert on_loop("read", {"file_path": "README"})
        # Readers that take hundreds of milliseconds, and every other tool, keep the loop free.
        assert not on_loop("read", {"file_path": "src/app.py", "symbol": "main"})
        assert not on_loop("read", {"file_path": "docs/spec.PDF"})
        assert not on_loop("read", {"file_path": "shot.png"})
        assert not on_loop("read", {"file_path": "nb.ipynb"})
        assert not on_loop("read", {"file_path": "misnamed.txt", "pages": "1-3"})
        assert not on_loop("read", {"file_path": "misnamed.txt", "render": True})
        assert not on_loop("read", {"file_path": 42})
        assert not on_loop("edit", {"file_path": "src/app.py"})
        assert not on_loop("attachments", {})
    finally:
        backend.close()
    # Attached, every call waits for the editor's server: never on the loop.
    attached = AttachedBackend.__new__(AttachedBackend)
    assert not attached.quick("read", {"file_path": "src/app.py"})


def test_serving_on_the_pipes_leaves_stdin_and_stdout_as_they_were() -> None:
    script = """
import asyncio, os, sys
from readkeeper.mcp.stdio import pipe_streams

def state():
    fds = sorted(os.listdir("/proc/self/fd"))
    return fds, os.get_blocking(0), os.get_blocking(1), os.fstat(0).st_ino, os.fstat(1).st_ino

async def serve():
    async with pipe_streams() as streams:
        assert streams is not None
        lines, writer = streams
        print("stray output goes to stderr")  # descriptor 1 is not the protocol's now
        await writer.write("over the wire\\n")
        await writer.flush()
        sys.stderr.write("read: " + await lines.__anext__())

before = state()
asyncio.run(serve())
print("restored" if state() == before else f"changed: {before} {state()}", flush=True)
"""
    # A notification (no answer owed): a line that is no message is answered at the door.
    notice = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
    done = subprocess.run(
        [sys.executable, "-c", script], input=notice + b"\n", capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().split("\n") == ["over the wire", "restored", ""]
    assert "stray output goes to stderr" in done.stderr.decode()
    assert "read: " + notice.decode() in done.stderr.decode()


def test_the_mcp_front_end_imports_the_core_with_its_first_call_not_at_start() -> None:
    # `initialize` is answered without the core's modules (about 100 ms here): the first
    # tool call chooses the backend, and a core of our own imports them then.
    code = (
        "import sys, readkeeper.mcp, readkeeper.cli\n"
        "core = {'readkeeper.core', 'readkeeper.read.pipeline'}\n"
        "print(sorted(core & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
