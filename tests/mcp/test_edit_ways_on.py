"""An edit's refusal names its way on as a call (hints.call), which the MCP edit tool's
words name as a tool with its arguments, and which works end to end: the same edit of
every place for a match found in many, the closest lines read again for one not found,
an anchored read of the file for an anchor that is none."""

from __future__ import annotations

from pathlib import Path

from mcp_helpers import error_kind, named_call, ok, stdio_client
from mcp_helpers import text_of as text


async def test_an_edit_refusal_names_the_call_that_goes_on(workspace: Path) -> None:
    path = workspace / "a.py"
    path.write_text("foo = 1\nfoo = 1\n\ndef main():\n    return 0\n")
    async with stdio_client(["--standalone", "--root", str(workspace)]) as client:
        await ok(client, "read", file_path="a.py")
        many = await client.call_tool(
            "edit", {"file_path": "a.py", "old_string": "foo = 1", "new_string": "bar = 2"}
        )
        assert error_kind(many) == "ambiguous_match"
        said = text(many)
        assert "replace_all=" not in said, said
        assert "readkeeper/" not in said, said
        every = named_call(said, "the edit tool")
        assert every == {
            "file_path": str(path),
            "old_string": "foo = 1",
            "new_string": "bar = 2",
            "replace_all": True,
        }
        await ok(client, "edit", **every)
        assert path.read_text().startswith("bar = 2\nbar = 2\n")

        await ok(client, "read", file_path="a.py")
        missed = await client.call_tool(
            "edit",
            {"file_path": "a.py", "old_string": "def main():\n    return 1", "new_string": "x"},
        )
        assert error_kind(missed) == "no_match"
        said = text(missed)
        assert "offset=" not in said, said
        assert "readkeeper/" not in said, said
        again = named_call(said, "the read tool")
        assert again == {"file_path": str(path), "offset": 4, "limit": 2}
        shown = await ok(client, "read", **again, force=True)
        assert "def main():" in shown
        assert "return 0" in shown

        bad = await client.call_tool(
            "edit",
            {"file_path": "a.py", "anchor_edits": [{"op": "delete", "start": "4"}]},
        )
        assert error_kind(bad) == "bad_params"
        said = text(bad)
        assert "line_format=" not in said, said
        assert "readkeeper/" not in said, said
        anchored = named_call(said, "the read tool")
        assert anchored == {"file_path": "a.py", "line_format": "anchors"}
        shown = await ok(client, "read", **anchored)
        assert "4" in shown
