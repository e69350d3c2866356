"""Over MCP, with the official SDK client: one path gets one answer, whichever tool and
front end asks (attack round 11). A name no file can have is `bad_params` everywhere; a
file missing behind a link to a folder inside is `not_found` with the same help as
without the link; one entry of a batch beyond an attached agent's roots is refused
alone, as standalone refuses it; a change echoes the path it resolved; a change notice
with no diff never says a diff was cut.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mcp import Client
from test_mcp_attach import editor

from helpers import eventually
from mcp_helpers import (
    call,
    dropin_client,
    error_kind,
    mcp_env,
    private_runtime_dir,
    stdio_client,
    text_of,
    until_watching,
)

LONG_NAME = "b" * 300  # over NAME_MAX (255 bytes)
LONG_PATH = "a/" * 2100 + "x"  # over PATH_MAX (4,096 bytes)


def own_calls(path: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("read", {"file_path": path}),
        ("write", {"file_path": path, "content": "x\n"}),
        ("edit", {"file_path": path, "old_string": "a", "new_string": "b"}),
        ("list", {"path": path}),
        ("grep", {"pattern": "x", "path": path}),
        ("glob", {"pattern": "*", "path": path}),
    ]


def dropin_calls(path: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("read_text_file", {"path": path}),
        ("write_file", {"path": path, "content": "x\n"}),
        ("edit_file", {"path": path, "edits": [{"oldText": "a", "newText": "b"}]}),
        ("create_directory", {"path": path}),
        ("list_directory", {"path": path}),
        ("get_file_info", {"path": path}),
        ("move_file", {"source": "a.txt", "destination": path}),
    ]


async def too_long_everywhere(client: Client, calls: list[tuple[str, dict[str, Any]]]) -> None:
    for tool, arguments in calls:
        result = await client.call_tool(tool, arguments)
        assert error_kind(result) == "bad_params", (tool, text_of(result)[:300])
        said = text_of(result)
        assert "each name is at most 255 bytes" in said, (tool, said[:300])
        assert "glob" in said  # the call that finds the file by part of its name


async def test_a_name_or_path_no_file_can_have_is_bad_params_for_every_tool(
    workspace: Path,
) -> None:
    (workspace / "a.txt").write_text("a\n")
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        for path in (LONG_NAME, f"sub/{LONG_NAME}", LONG_PATH):
            await too_long_everywhere(client, own_calls(path))
            many = await call(client, "read_many", file_paths=["a.txt", path])
            first, second = many["results"]
            assert "result" in first  # the other entry is still read
            assert second["error"]["data"]["kind"] == "bad_params"
    async with dropin_client(workspace) as client:
        for path in (LONG_NAME, LONG_PATH):
            await too_long_everywhere(client, dropin_calls(path))
    assert sorted(os.listdir(workspace)) == ["a.txt"]


async def test_a_file_missing_behind_a_link_to_a_folder_inside_is_not_found_with_help(
    workspace: Path,
) -> None:
    sub = workspace / "sub"
    sub.mkdir()
    (sub / "notes.txt").write_text("n\n")
    (workspace / "in").symlink_to("sub")
    (workspace / "dangling").symlink_to("sub/nothing.txt")
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        plain = await client.call_tool("read", {"file_path": "sub/nosuch/notes.txt"})
        linked = await client.call_tool("read", {"file_path": "in/nosuch/notes.txt"})
        for result in (plain, linked):
            assert error_kind(result) == "not_found"
            assert "symbolic link" not in text_of(result)
        guessed = [
            {os.path.realpath(s) for s in r.structured_content["error"]["data"]["suggestions"]}
            for r in (plain, linked)
        ]
        assert guessed[0] == guessed[1] == {str(sub / "notes.txt")}
        # With nothing close, the nearest folder on the way that is there, as named.
        far = await client.call_tool("read", {"file_path": "in/nosuch/zzzzqqqq.bin"})
        assert error_kind(far) == "not_found"
        assert "List the folder" in text_of(far)
        assert str(workspace / "in") in text_of(far)
        # A link that is itself the last name, and leads to nothing, says so.
        broken = await client.call_tool("read", {"file_path": "dangling"})
        assert error_kind(broken) == "not_found"
        assert "is a symbolic link to" in text_of(broken)


def agent_tree(workspace: Path) -> Path:
    """A file the agent may not read (`a.txt`) beside its own root (`sub`, holding
    `x.txt`): the root."""
    (workspace / "a.txt").write_text("NOT-FOR-THIS-AGENT\n")
    sub = workspace / "sub"
    sub.mkdir()
    (sub / "x.txt").write_text("mine\n")
    return sub


async def test_one_entry_beyond_an_attached_agents_roots_is_refused_alone(
    workspace: Path,
) -> None:
    sub = agent_tree(workspace)
    runtime = private_runtime_dir()
    answers: dict[str, list[Any]] = {}
    for mode in ("standalone", "attached"):
        args = ["--root", str(sub), *(["--standalone"] if mode == "standalone" else [])]
        lsp = (await editor(workspace, runtime))[0] if mode == "attached" else None
        try:
            async with stdio_client(args, mcp_env(runtime)) as client:
                assert (await call(client, "stats"))["mode"] == mode
                many = await call(client, "read_many", file_paths=["x.txt", "../a.txt"])
                first, second = many["results"]
                assert first["result"]["type"] == "text"
                assert second["error"]["data"]["kind"] == "outside_workspace"
                attached = await call(client, "attachments", mentions=["x.txt", "../a.txt"])
                sources = [a.get("source") for a in attached["attachments"]]
                assert str(sub / "x.txt") in sources
                dropped = [d for d in attached["dropped"] if d.get("type") == "file"]
                assert len(dropped) == 1
                shown = await client.call_tool("read_many", {"file_paths": ["x.txt", "../a.txt"]})
                assert "NOT-FOR-THIS-AGENT" not in text_of(shown)
                forgotten = await call(client, "forget", paths=["x.txt", "../a.txt"])
                answers[mode] = [second["error"]["data"]["kind"], forgotten["forgotten"]]
        finally:
            if lsp is not None:
                await lsp.client.close()
    assert answers["attached"] == answers["standalone"]


async def test_the_drop_in_reads_many_with_one_entry_beyond_an_attached_agents_roots(
    workspace: Path,
) -> None:
    sub = agent_tree(workspace)
    runtime = private_runtime_dir()
    lsp, _ = await editor(workspace, runtime)
    try:
        args = ["--tools", "filesystem", "--root", str(sub)]
        async with stdio_client(args, mcp_env(runtime)) as client:
            result = await client.call_tool("read_multiple_files", {"paths": ["x.txt", "../a.txt"]})
            assert not result.is_error, text_of(result)
            said = text_of(result)
            assert "mine" in said
            assert "Error - " in said
            assert "outside" in said
            assert "NOT-FOR-THIS-AGENT" not in said
    finally:
        await lsp.client.close()


async def test_the_drop_in_echoes_the_path_each_change_resolved(workspace: Path) -> None:
    sub = workspace / "sub"
    sub.mkdir()
    (sub / "top").symlink_to("..")
    async with dropin_client(workspace) as client:
        # `..` is taken by the text (sub/top/../made is sub/made), and so is it echoed.
        said = text_of(await client.call_tool("create_directory", {"path": "sub/top/../made"}))
        assert said == f"Successfully created directory {sub / 'made'}"
        assert (sub / "made").is_dir()
        said = text_of(
            await client.call_tool("write_file", {"path": "sub/top/../w.txt", "content": "w\n"})
        )
        assert said.startswith(f"Successfully wrote to {sub / 'w.txt'} ")
        said = text_of(
            await client.call_tool(
                "move_file", {"source": "sub/made/../w.txt", "destination": "sub/./v.txt"}
            )
        )
        assert said.startswith(f"Successfully moved {sub / 'w.txt'} to {sub / 'v.txt'}")


async def test_a_notice_with_no_diff_never_says_a_diff_was_cut(
    workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("elsewhere\n")
    folder = workspace / "d"
    folder.mkdir()
    (folder / "f.txt").write_text("inside 1\ninside 2\n")
    env = mcp_env(private_runtime_dir(), READKEEPER_WATCH_DEBOUNCE_MS="20")
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        await until_watching(client)
        await call(client, "read", file_path="d/f.txt")
        folder.rename(workspace / "d_real")
        folder.symlink_to(outside, target_is_directory=True)
        said: list[str] = []

        async def noticed() -> bool:
            result = await client.call_tool("changes", {})
            said.append(text_of(result))
            return str(folder / "f.txt") in said[-1]

        await eventually(noticed, "the notice of d/f.txt")
        assert "truncated" not in said[-1], said[-1]
        assert "elsewhere" not in said[-1]


async def test_a_batch_entry_s_refusal_names_a_tool_mcp_offers(workspace: Path) -> None:
    """The reason a mention was dropped, and a read_many entry's note, name each next
    call as an MCP tool (attack round 13: attachments said `readkeeper/glob {...}`)."""
    (workspace / "a.txt").write_text("a\n")
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        answer = await client.call_tool("attachments", {"mentions": [LONG_NAME, "a.txt"]})
        said = text_of(answer)
        assert "the glob tool" in said, said
        assert "readkeeper/glob" not in said, said
        structured = answer.structured_content or {}
        reasons = [d["reason"] for d in structured.get("dropped", [])]
        assert any("the glob tool" in r for r in reasons), reasons
        assert not any("readkeeper/" in r for r in reasons), reasons


# One entry no file name can be, in a batch (attack round 22: a NUL refused the batch).
BAD_ENTRIES: list[Any] = ["b\x00c", 5, None, ["a.txt"], "c" * 5000]


async def test_one_bad_entry_of_a_batch_is_refused_alone_the_others_read(
    workspace: Path,
) -> None:
    (workspace / "a.txt").write_text("a-text\n")
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        for bad in BAD_ENTRIES:
            many = await call(client, "read_many", file_paths=["a.txt", bad], force=True)
            first, second = many["results"]
            assert first["result"]["type"] == "text", (bad, first)
            assert second["error"]["data"]["kind"] == "bad_params", (bad, second)
            assert second["error"]["data"]["field"] in ("file_paths[1]", "file_path"), second
    async with dropin_client(workspace) as client:
        for bad in BAD_ENTRIES:
            result = await client.call_tool("read_multiple_files", {"paths": ["a.txt", bad]})
            said = text_of(result)
            assert not result.is_error, (bad, said[:300])
            read, refused = said.split("\n---\n")
            assert "Error - " not in read  # the text, or the stub of the text held
            assert ": Error - " in refused, refused[-300:]
            assert isinstance(bad, str) or "paths[1] expected a string" in refused
