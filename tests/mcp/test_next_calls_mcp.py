"""The next call an MCP refusal names is one this server offers and that works, end to
end through the official SDK client (attack round 16): the drop-in reads a PDF too
long to read whole by the `pages` its refusal names, a tail of a file too large to read
whole, and says its own parameter names; the core tools name a tool for a file given
where a folder is wanted, never the LSP's `readkeeper/stat`."""

from __future__ import annotations

from pathlib import Path

from document_samples import numbered_pdf

from mcp_helpers import (
    dropin_client,
    error_kind,
    mcp_env,
    named_call,
    ok,
    private_runtime_dir,
    stdio_client,
)
from mcp_helpers import text_of as text


async def test_the_dropin_reads_a_long_pdf_by_the_pages_its_refusal_names(workspace: Path) -> None:
    (workspace / "long.pdf").write_bytes(numbered_pdf(25, lines=2))
    async with dropin_client(workspace) as client:
        for tool in ("read_media_file", "read_text_file"):  # the call made, its pages set
            refusal = await client.call_tool(tool, {"path": "long.pdf"})
            assert error_kind(refusal) == "pages_required"
            asked = named_call(text(refusal), tool)
            assert asked == {"path": "long.pdf", "pages": "1-20"}, text(refusal)
            if tool == "read_media_file":  # drawn
                assert "rendered to PNG" in await ok(client, tool, **asked)
        shown = await ok(client, "read_text_file", **asked)
        assert "--- page 20 ---" in shown
        assert "--- page 21 ---" not in shown
        # head on a PDF names the pages call, which the drop-in takes
        refusal = await client.call_tool("read_text_file", {"path": "long.pdf", "head": 5})
        assert error_kind(refusal) == "bad_params"
        assert text(refusal).startswith("head applies to text files")
        asked = named_call(text(refusal), "read_text_file")
        assert "--- page 5 ---" in await ok(client, "read_text_file", **asked)


async def test_the_dropin_reads_the_tail_of_a_file_too_large_to_read_whole(
    workspace: Path,
) -> None:
    lines = [f"line {i} lorem ipsum dolor sit amet" for i in range(1, 20_001)]
    (workspace / "big.log").write_text("\n".join(lines) + "\n")
    async with dropin_client(workspace) as client:
        tail = await ok(client, "read_text_file", path="big.log", tail=3)
        assert tail.startswith("```\n" + "\n".join(lines[-3:]) + "\n```")
        refusal = await client.call_tool("read_text_file", {"path": "big.log"})
        assert error_kind(refusal) == "too_large"
        asked = named_call(text(refusal), "read_text_file")
        assert asked["offset"] == 1
        assert lines[asked["head"] - 1] in await ok(client, "read_text_file", **asked)  # type: ignore[operator]


async def test_the_dropin_says_its_own_parameter_names(workspace: Path) -> None:
    (workspace / "notes.txt").write_text("alpha\nbeta\n")
    async with dropin_client(workspace) as client:
        unread = await client.call_tool(
            "edit_file",
            {"path": "notes.txt", "edits": [{"oldText": "a", "newText": "b"}]},
        )
        assert error_kind(unread) == "not_read"  # before the match (was ambiguous_match)
        await ok(client, "read_text_file", path="notes.txt")
        same = await client.call_tool(
            "edit_file",
            {"path": "notes.txt", "edits": [{"oldText": "beta", "newText": "beta"}]},
        )
        assert error_kind(same) == "no_change"
        assert "newText" in text(same)
        assert "new_string" not in text(same)


async def test_mcp_names_a_tool_it_has_for_a_file_given_as_a_folder(workspace: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("x = 1\n")
    args = ["--standalone", "--root", str(workspace)]
    async with stdio_client(args, mcp_env(private_runtime_dir())) as client:
        for tool, arguments in (
            ("list", {"path": "src/app.py"}),
            ("glob", {"pattern": "*", "path": "src/app.py"}),
        ):
            refusal = await client.call_tool(tool, arguments)
            assert error_kind(refusal) == "bad_params"
            said = text(refusal)
            assert "readkeeper/" not in said
            listed = await client.call_tool("list", named_call(said, "the list tool"))
            assert not listed.is_error
            assert "app.py" in text(listed)  # with its kind and size
        outside = await client.call_tool("read", {"file_path": "/etc/passwd"})
        assert error_kind(outside) == "outside_workspace"
        assert "READKEEPER_ALLOWED_PATHS" in text(outside)
