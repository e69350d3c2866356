"""Read-state sessions of `readkeeper mcp` over streamable HTTP: one per connection
(`Mcp-Session-Id`) for handshake-era clients; 2026-07-28 clients send no session id, so
their calls share one session and their reads are never answered with another caller's
stub; a `session` argument always names its own."""

from __future__ import annotations

from pathlib import Path

from mcp import Client

from mcp_helpers import call, http_server, legacy_clients


async def test_each_http_session_is_its_own_read_state(workspace: Path) -> None:
    (workspace / "a.txt").write_text("a\n")
    async with http_server(["--root", str(workspace)]) as server:
        async with legacy_clients(server) as (first, second):
            assert (await call(first, "read", file_path="a.txt"))["type"] == "text"
            assert (await call(second, "read", file_path="a.txt"))["type"] == "text"
            assert (await call(first, "read", file_path="a.txt"))["type"] == "file_unchanged"

        async with Client(server.url) as modern, Client(server.url) as other:
            assert modern.protocol_version >= "2026"
            assert (await call(modern, "read", file_path="a.txt"))["type"] == "text"
            assert (await call(other, "read", file_path="a.txt"))["type"] == "text"
            named = {"file_path": "a.txt", "session": "agent-7"}
            assert (await call(other, "read", **named))["type"] == "text"
            assert (await call(other, "read", **named))["type"] == "file_unchanged"


async def test_drop_in_callers_without_a_session_id_never_get_anothers_stub(
    workspace: Path,
) -> None:
    (workspace / "a.txt").write_text("a\n")
    args = ["--tools", "filesystem", "--root", str(workspace)]
    async with http_server(args) as server:
        async with Client(server.url) as modern, Client(server.url) as other:
            for client in (modern, other, modern):
                read = await client.call_tool("read_text_file", {"path": "a.txt"})
                assert read.content[0].text == "```\na\n```"  # type: ignore[union-attr]
        async with Client(server.url, mode="legacy") as legacy:
            first = await legacy.call_tool("read_text_file", {"path": "a.txt"})
            again = await legacy.call_tool("read_text_file", {"path": "a.txt"})
            assert first.content[0].text == "```\na\n```"  # type: ignore[union-attr]
            assert again.content[0].text.startswith("file_unchanged")  # type: ignore[union-attr]
