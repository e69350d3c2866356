"""A session name belongs to the door it came through (state/sessions.py): the same name
from two MCP HTTP clients, or from an attached agent and the editor, is two sessions, and
`stats` shows a caller only its own; one caller's many sessions never push out another's,
and a session dropped at the bound is told so, not that it never read (nor that nothing
changed)."""

from __future__ import annotations

from pathlib import Path

from mcp import Client
from test_mcp_attach import editor

from mcp_helpers import (
    call,
    error_kind,
    http_server,
    legacy_clients,
    mcp_env,
    private_runtime_dir,
    stdio_client,
    text_of,
)


def sessions_in(stats: dict) -> set[str]:  # type: ignore[type-arg]
    return {event["session"] for event in stats["history"]["events"]}


async def test_an_http_client_cannot_act_in_another_clients_session(workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("one\ntwo\n")
    async with (
        http_server(["--root", str(workspace)]) as server,
        legacy_clients(server) as (first, second),
    ):
        assert (await call(first, "read", file_path="a.txt"))["type"] == "text"
        await call(first, "edit", file_path="a.txt", old_string="two", new_string="2")
        await call(first, "read", file_path="a.txt", session="named")
        (own,) = sessions_in(await call(first, "stats", history=True)) - {"named"}
        assert own.startswith("mcp-")
        # The second client sees none of the first's sessions, files or counts...
        theirs = await call(second, "stats", history=True)
        assert sessions_in(theirs) == set()
        assert "a.txt" not in str(theirs)
        # ...and naming them reaches a session of its own.
        for name in (own, "named"):
            undo = await second.call_tool("undo", {"session": name})
            assert error_kind(undo) == "no_change"
            edit = {"file_path": "a.txt", "old_string": "one", "new_string": "HIJACK"}
            refused = await second.call_tool("edit", {**edit, "session": name})
            assert error_kind(refused) == "not_read"
            assert (await call(second, "forget", session=name))["session"] == name
        assert path.read_text() == "one\n2\n"
        # The first client's sessions are as they were.
        again = await call(first, "read", file_path="a.txt", session="named")
        assert again["type"] == "file_unchanged"
        assert (await call(first, "undo"))["undone"] == "edit"


async def test_an_attached_agent_cannot_act_in_the_editors_session(workspace: Path) -> None:
    runtime = private_runtime_dir()
    sub = workspace / "sub"
    sub.mkdir()
    path = sub / "a.txt"
    path.write_text("one\ntwo\n")
    lsp, _ = await editor(workspace, runtime)
    try:
        await lsp.read(path, session="chat-1")
        edit = {"file_path": str(path), "old_string": "two", "new_string": "2"}
        await lsp.client.request("readkeeper/edit", {**edit, "session": "chat-1"})
        async with stdio_client(["--root", str(sub)], mcp_env(runtime)) as agent:
            stats = await call(agent, "stats", history=True)
            assert stats["mode"] == "attached"
            assert "chat-1" not in sessions_in(stats)
            hijack = {"file_path": "a.txt", "old_string": "one", "new_string": "HIJACK"}
            refused = await agent.call_tool("edit", {**hijack, "session": "chat-1"})
            assert error_kind(refused) == "not_read"
            assert (await call(agent, "forget", session="chat-1"))["session"] == "chat-1"
            # Its own session of that name is its own: read, edited, seen in its stats.
            await call(agent, "read", file_path="a.txt", session="chat-1")
            back = {"file_path": "a.txt", "old_string": "2", "new_string": "two"}
            await call(agent, "edit", **back, session="chat-1")
        assert path.read_text() == "one\ntwo\n"
        # The editor's chat still holds what it read: its edit is checked, not refused.
        back = {"file_path": str(path), "old_string": "one", "new_string": "ONE"}
        await lsp.client.request("readkeeper/edit", {**back, "session": "chat-1"})
        assert path.read_text() == "ONE\ntwo\n"
        history = await lsp.client.request("readkeeper/stats", {"history": True})
        assert {e["session"] for e in history["history"]["events"]} == {"chat-1"}
    finally:
        await lsp.client.close()


async def test_one_http_client_cannot_push_out_anothers_sessions(workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\ntwo\n")
    (workspace / "b.txt").write_text("b\n")
    async with (
        http_server(["--root", str(workspace)]) as server,
        legacy_clients(server) as (victim, other),
    ):
        await call(victim, "read", file_path="a.txt", session="victim")
        for i in range(300):
            await call(other, "read", file_path="b.txt", session=f"spam{i}")
        edit = {"file_path": "a.txt", "old_string": "two", "new_string": "2"}
        await call(victim, "edit", **edit, session="victim")
    assert (workspace / "a.txt").read_text() == "one\n2\n"


async def test_a_session_dropped_at_the_bound_is_told_so(workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\ntwo\n")
    (workspace / "b.txt").write_text("b\n")
    args = ["--standalone", "--root", str(workspace)]
    async with stdio_client(args) as client:
        await call(client, "read", file_path="a.txt", session="victim")
        for i in range(256):
            await call(client, "read", file_path="b.txt", session=f"s{i}")
        edit = {"file_path": "a.txt", "old_string": "two", "new_string": "2"}
        refused = await client.call_tool("edit", {**edit, "session": "victim"})
        assert error_kind(refused) == "not_read"
        assert "read-state was dropped" in text_of(refused)
        assert "at most 256 sessions" in text_of(refused)
        assert refused.structured_content["error"]["data"]["session_dropped"] is True  # type: ignore[index]
        await call(client, "read", file_path="a.txt", session="victim")
        await call(client, "edit", **edit, session="victim")


async def test_every_answer_about_a_dropped_sessions_read_state_says_so(
    workspace: Path,
) -> None:
    (workspace / "a.txt").write_text("one\ntwo\n")
    (workspace / "b.txt").write_text("b\n")
    args = ["--standalone", "--root", str(workspace)]
    async with stdio_client(args) as client:
        await call(client, "read", file_path="a.txt", session="victim")
        (workspace / "a.txt").write_text("one\nTWO\n")
        (workspace / "c.txt").write_text("c\n")
        for i in range(256):
            await call(client, "read", file_path="b.txt", session=f"s{i}")
        for tool, arguments in [
            ("changes", {}),
            ("attachments", {"types": ["changes"]}),
            ("stats", {}),
            ("read", {"file_path": "b.txt"}),
            ("read_many", {"file_paths": ["c.txt"]}),
            ("forget", {"paths": ["b.txt"]}),
            ("changes", {}),  # still, until it starts afresh
        ]:
            answer = await client.call_tool(tool, {**arguments, "session": "victim"})
            assert not answer.is_error, text_of(answer)
            assert "read-state was dropped" in text_of(answer), (tool, text_of(answer))
            assert "No changes" not in text_of(answer)
        await call(client, "forget", session="victim")  # its own fresh start
        fresh = await client.call_tool("changes", {"session": "victim"})
        assert "read-state was dropped" not in text_of(fresh)


async def test_an_attached_agents_dropped_session_is_told_so_by_changes(workspace: Path) -> None:
    # `changes` of an attached agent is served by the editor's listener (attach/listener.py),
    # not the front end's dispatch: it says so all the same.
    runtime = private_runtime_dir()
    (workspace / "a.txt").write_text("one\ntwo\n")
    (workspace / "b.txt").write_text("b\n")
    lsp, _ = await editor(workspace, runtime)
    try:
        async with stdio_client(["--root", str(workspace)], mcp_env(runtime)) as agent:
            await call(agent, "read", file_path="a.txt", session="victim")
            (workspace / "a.txt").write_text("one\nTWO\n")
            for i in range(256):
                await call(agent, "read", file_path="b.txt", session=f"s{i}")
            for tool in ("changes", "stats", "attachments"):
                answer = await client_text(agent, tool, session="victim")
                assert "read-state was dropped" in answer, (tool, answer)
                assert "No changes" not in answer
    finally:
        await lsp.client.close()


async def client_text(client: Client, tool: str, **arguments: str) -> str:
    answer = await client.call_tool(tool, arguments)
    assert not answer.is_error, text_of(answer)
    return text_of(answer)


async def test_http_clients_of_an_attached_server_are_each_their_own(workspace: Path) -> None:
    # `readkeeper mcp --http` attached to the editor's readkeeper: one connection to it,
    # and each HTTP client's names its own within it.
    runtime = private_runtime_dir()
    path = workspace / "a.txt"
    path.write_text("one\ntwo\n")
    lsp, _ = await editor(workspace, runtime)
    try:
        async with (
            http_server(["--root", str(workspace)], runtime) as server,
            legacy_clients(server) as (first, second),
        ):
            await call(first, "read", file_path="a.txt", session="agent")
            mine = await call(first, "stats", history=True)
            assert mine["mode"] == "attached"
            assert sessions_in(mine) == {"agent"}
            assert sessions_in(await call(second, "stats", history=True)) == set()
            hijack = {"file_path": "a.txt", "old_string": "one", "new_string": "HIJACK"}
            refused = await second.call_tool("edit", {**hijack, "session": "agent"})
            assert error_kind(refused) == "not_read"
            await call(
                first, "edit", file_path="a.txt", old_string="two", new_string="2", session="agent"
            )
    finally:
        await lsp.client.close()
    assert path.read_text() == "one\n2\n"


async def test_the_editors_stats_list_only_the_files_its_own_sessions_read(
    workspace: Path,
) -> None:
    runtime = private_runtime_dir()
    (workspace / "mine.txt").write_text("the editor's\n")
    (workspace / "theirs.txt").write_text("the agent's\n")
    lsp, _ = await editor(workspace, runtime)
    try:
        await lsp.client.request("readkeeper/read", {"file_path": str(workspace / "mine.txt")})
        async with stdio_client(["--root", str(workspace)], mcp_env(runtime)) as agent:
            await call(agent, "read", file_path="theirs.txt", session="agentS")
            assert (await call(agent, "stats"))["mode"] == "attached"
            for asked in ({}, {"session": "agentS"}, {"history": True}):
                stats = await lsp.client.request("readkeeper/stats", asked)
                assert "theirs.txt" not in str(stats), asked
                assert str(workspace / "mine.txt") in stats["total"]["tokens_by_file"]
            assert stats["total"]["reads"] == 2  # a count of every caller's, as documented
    finally:
        await lsp.client.close()
