"""A merge never counts as seeing the other change, over MCP (`readkeeper mcp`, core
tools and the filesystem drop-in, each a subprocess): the text answer of a merged edit
carries the other change (not a pointer to a structured field the client may not
show), a later whole-file write is refused stale, and `changes` reports the change."""

from __future__ import annotations

from pathlib import Path

from unseen_work import ORIGINAL, THEIRS

from helpers import eventually
from mcp_helpers import (
    call,
    dropin_client,
    error_kind,
    mcp_env,
    ok,
    private_runtime_dir,
    stdio_client,
    text_of,
)

BELIEVED = ORIGINAL.replace("line 2\n", "line two\n").replace("line 3\n", "line three\n")


async def test_core_tools_say_the_change_and_refuse_the_write(workspace: Path) -> None:
    path = workspace / "core.txt"
    path.write_text(ORIGINAL)
    env = mcp_env(private_runtime_dir(), READKEEPER_WATCH_DEBOUNCE_MS="20")
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        await call(client, "read", file_path="core.txt")
        path.write_text(THEIRS)
        result = await client.call_tool(
            "edit", {"file_path": "core.txt", "old_string": "line 2\n", "new_string": "line two\n"}
        )
        said = text_of(result)
        assert "+line 80 THEIR UNSEEN WORK" in said
        assert "see external_change" not in said
        write = await client.call_tool("write", {"file_path": "core.txt", "content": BELIEVED})
        assert error_kind(write) == "stale"
        assert "+line 80 THEIR UNSEEN WORK" in text_of(write)
        assert "THEIR UNSEEN WORK" in path.read_text()

        async def reported() -> str:
            # The diff is the text's (the structured result has the facts: mcp/facts.py).
            return text_of(await client.call_tool("changes", {}))

        assert "+line 80 THEIR UNSEEN WORK" in await eventually(reported, "the change reported")


async def test_the_dropin_says_the_change_and_refuses_the_write(workspace: Path) -> None:
    path = workspace / "dropin.txt"
    path.write_text(ORIGINAL)
    async with dropin_client(workspace) as client:
        await ok(client, "read_text_file", path="dropin.txt")
        path.write_text(THEIRS)
        said = await ok(
            client,
            "edit_file",
            path="dropin.txt",
            edits=[{"oldText": "line 2\n", "newText": "two\n"}],
        )
        assert "+line 80 THEIR UNSEEN WORK" in said
        assert "external_change" not in said
        write = await client.call_tool("write_file", {"path": "dropin.txt", "content": BELIEVED})
        assert error_kind(write) == "stale"
        assert "THEIR UNSEEN WORK" in path.read_text()


async def test_a_dry_run_says_the_real_call_is_refused_and_why(workspace: Path) -> None:
    path = workspace / "s.txt"
    path.write_text(ORIGINAL)
    edits = [{"oldText": "line 50", "newText": "line fifty"}]
    async with dropin_client(workspace) as client:
        await ok(client, "read_text_file", path="s.txt")
        path.write_text(ORIGINAL.replace("line 50\n", "line 50 THEIRS\n"))
        preview = await ok(client, "edit_file", path="s.txt", edits=edits, dryRun=True)
        assert "will be refused (stale)" in preview
        assert "+line fifty" not in preview  # no clean diff over text the agent never saw
        assert "+line 50 THEIRS" in preview  # the change that makes it stale
        real = await client.call_tool("edit_file", {"path": "s.txt", "edits": edits})
        assert error_kind(real) == "stale"
        said = text_of(real)
        assert "not in the file you read either" not in said  # it was: say what is true
        assert "another program changed line 50 as you read it" in said
        assert "THEIRS" in path.read_text()


async def test_a_dry_run_of_a_merge_shows_the_change_it_goes_over(workspace: Path) -> None:
    path = workspace / "m.txt"
    path.write_text(ORIGINAL)
    edits = [{"oldText": "line 2\n", "newText": "two\n"}]
    async with dropin_client(workspace) as client:
        await ok(client, "read_text_file", path="m.txt")
        path.write_text(THEIRS)
        preview = await ok(client, "edit_file", path="m.txt", edits=edits, dryRun=True)
        assert "+two" in preview
        assert "will be merged" in preview
        assert "+line 80 THEIR UNSEEN WORK" in preview
        assert path.read_text() == THEIRS
