"""grep, glob and list end to end: the real server over LSP, and `readkeeper mcp` driven by
the official SDK client, on real files; a search then an edit with no read between."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Session
from mcp_helpers import call, error_kind, mcp_env, private_runtime_dir, stdio_client, text_of


def make_tree(root: Path) -> None:
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def main():\n    return compute()\n")
    (root / "src" / "util.py").write_text("def compute():\n    return 42\n")
    (root / "notes.md").write_text("compute is documented here\n")


async def test_lsp_grep_glob_list_and_an_edit_after_a_search(lsp: Session, workspace: Path) -> None:
    make_tree(workspace)
    found = await lsp.client.request(
        "readkeeper/grep", {"pattern": "return 42", "path": "src", "context": "1"}
    )
    assert [(m["line"], m["text"]) for m in found["matches"]] == [
        (1, "def compute():"),
        (2, "    return 42"),
    ]
    assert found["partial"] is False
    edited = await lsp.client.request(
        "readkeeper/edit",
        {"file_path": "src/util.py", "old_string": "return 42", "new_string": "return 43"},
    )
    assert edited["replacements"] == 1
    assert (workspace / "src" / "util.py").read_text() == "def compute():\n    return 43\n"

    globbed = await lsp.client.request("readkeeper/glob", {"pattern": "**/*.py"})
    assert sorted(globbed["paths"]) == [
        str(workspace / "src" / "app.py"),
        str(workspace / "src" / "util.py"),
    ]
    assert globbed["paths"][0] == str(workspace / "src" / "util.py")  # newest first

    listed = await lsp.client.request("readkeeper/list", {"path": ".", "depth": 2})
    assert {(e["name"], e["kind"]) for e in listed["entries"]} == {
        ("notes.md", "file"),
        ("src", "dir"),
        ("src/app.py", "file"),
        ("src/util.py", "file"),
    }
    bad = await lsp.error("readkeeper/grep", {"pattern": "(unclosed"})
    assert bad.data["kind"] == "bad_params"
    assert bad.data["position"] == 0


async def test_mcp_grep_glob_list_and_an_edit_after_a_search(workspace: Path) -> None:
    make_tree(workspace)
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        found = await call(client, "grep", pattern="compute", glob="*.py")
        assert [(Path(m["file_path"]).name, m["line"]) for m in found["matches"]] == [
            ("app.py", 2),
            ("util.py", 1),
        ]
        result = await client.call_tool("grep", {"pattern": "compute", "output": "counts"})
        assert f"{workspace / 'notes.md'}:1" in text_of(result).splitlines()
        # The agent reads compact lines (path:line:text), not JSON.
        compact = text_of(await client.call_tool("grep", {"pattern": "return 42"}))
        assert compact.splitlines() == [f"{workspace / 'src' / 'util.py'}:2:    return 42"]
        # A capped search ends with where it stopped and the call for the rest.
        capped = text_of(await client.call_tool("grep", {"pattern": "compute", "max_matches": 1}))
        *_, note, rest = capped.splitlines()
        assert note.startswith("(Showing matches 1-1 of ")
        assert note.endswith(")")
        assert json.loads(rest.removeprefix("next: ")) == {
            "pattern": "compute",
            "max_matches": 1,
            "offset": 1,
        }
        edited = await call(
            client,
            "edit",
            file_path="src/app.py",
            old_string="return compute()",
            new_string="return compute() + 1",
        )
        assert edited["replacements"] == 1
        globbed = await call(client, "glob", pattern="*.md")
        assert globbed["paths"] == [str(workspace / "notes.md")]
        listed = await call(client, "list", path="src")
        assert [e["name"] for e in listed["entries"]] == ["app.py", "util.py"]
        as_text = text_of(await client.call_tool("list", {"path": "src"})).splitlines()
        assert as_text[0] == f"{workspace / 'src'}:"  # the folder first, as ls names it
        assert [line.split()[-1] for line in as_text[1:]] == ["app.py", "util.py"]
        missing = await client.call_tool("list", {"path": "nope"})
        assert error_kind(missing) == "not_found"
        bad = await client.call_tool("grep", {"pattern": "a[b"})
        assert error_kind(bad) == "bad_params"
