"""Attach mode end to end: a real `readkeeper serve` (the editor's server, driven over
LSP) and `readkeeper mcp` attached to it through its socket, with the SDK's client.
The terminal agent sees the editor's unsaved buffers, its edits are refused under
them, and a read made through one front end makes the other's edit stale.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import warm_server
from lsprotocol import types

from conftest import Session, start_session
from helpers import eventually
from mcp_helpers import call, error_kind, mcp_env, private_runtime_dir, stdio_client, text_of
from readkeeper.attach import discovery
from readkeeper.client import ReadkeeperClient


async def editor(
    workspace: Path, runtime: Path, settings: dict[str, Any] | None = None, **kwargs: Any
) -> tuple[Session, int]:
    """The editor's server for `workspace`, once it has published its socket; its pid."""
    session = await start_session(
        workspace, settings=settings, env={"XDG_RUNTIME_DIR": str(runtime)}, **kwargs
    )
    found = discovery_file(runtime, workspace)
    await eventually(found.exists, f"the editor's server to publish {found}")
    server = session.client._server
    assert server is not None
    return session, warm_server.real_pid(server.pid)


def discovery_file(runtime: Path, root: Path) -> Path:
    return Path(discovery.discovery_path(str(runtime / "readkeeper"), str(root)))


async def test_an_attached_read_sees_the_unsaved_buffer_and_its_edit_is_refused(
    workspace: Path,
) -> None:
    runtime = private_runtime_dir()
    path = workspace / "open.py"
    path.write_text("x = 1\n")
    lsp, pid = await editor(workspace, runtime)
    try:
        lsp.open_document(path, "x = 1\ny = 2  # typed, not saved\n", version=3)
        async with stdio_client(["--root", str(workspace)], mcp_env(runtime)) as client:
            stats = await call(client, "stats")
            assert stats["mode"] == "attached"
            assert stats["pid"] == pid

            read = await client.call_tool("read", {"file_path": "open.py"})
            assert not read.is_error, text_of(read)
            assert read.structured_content is not None
            assert read.structured_content["file"]["unsaved"] is True
            assert read.structured_content["file"]["buffer_version"] == 3
            assert "y = 2  # typed, not saved" in text_of(read)
            assert "UNSAVED" in text_of(read)

            refused = await client.call_tool(
                "edit", {"file_path": "open.py", "old_string": "x = 1", "new_string": "x = 2"}
            )
            assert error_kind(refused) == "dirty_buffer"
            assert path.read_text() == "x = 1\n"
    finally:
        await lsp.client.close()


async def test_an_attached_read_then_an_external_change_makes_the_edit_stale(
    workspace: Path,
) -> None:
    runtime = private_runtime_dir()
    path = workspace / "shared.py"
    path.write_text("MODE = 'a'\nOTHER = 1\n")
    lsp, _ = await editor(workspace, runtime)
    try:
        async with stdio_client(["--root", str(workspace)], mcp_env(runtime)) as client:
            await call(client, "read", file_path=str(path), session="agent")
            path.write_text("MODE = 'b'\nOTHER = 1\n")  # another program
            stale = await client.call_tool(
                "edit",
                {
                    "file_path": str(path),
                    "old_string": "MODE = 'a'",
                    "new_string": "MODE = 'c'",
                    "session": "agent",
                },
            )
            assert error_kind(stale) == "stale"
            assert "+MODE = 'b'" in text_of(stale)
            stats = await call(client, "stats", session="agent")
            assert stats["session"]["stale_edits_caught"] == 1
        # The editor's session of that name is another (state/sessions.py).
        stats = await lsp.client.request("readkeeper/stats", {"session": "agent"})
        assert stats["session"]["stale_edits_caught"] == 0
        assert stats["total"]["stale_edits_caught"] == 1
    finally:
        await lsp.client.close()


async def test_attached_agents_share_the_editors_watcher_but_not_each_others_reads(
    workspace: Path,
) -> None:
    runtime = private_runtime_dir()
    path = workspace / "watched.txt"
    path.write_text("one\n")
    lsp, _ = await editor(workspace, runtime, settings={"watch_debounce_ms": 20})
    try:
        args, env = ["--root", str(workspace)], mcp_env(runtime)
        async with stdio_client(args, env) as first, stdio_client(args, env) as second:
            assert (await call(first, "read", file_path="watched.txt"))["type"] == "text"
            # A connection is its own session: the other agent's read is no stub.
            assert (await call(second, "read", file_path="watched.txt"))["type"] == "text"
            path.write_text("one\ntwo\n")

            async def noticed() -> bool:
                changes = (await call(first, "changes"))["changes"]
                return any(change["file_path"] == str(path) for change in changes)

            await eventually(noticed, "the editor's watcher to report watched.txt")
    finally:
        await lsp.client.close()


async def test_an_attached_edit_of_an_open_buffer_goes_through_the_editor(
    workspace: Path,
) -> None:
    runtime = private_runtime_dir()
    client = ReadkeeperClient()
    applied: list[types.ApplyWorkspaceEditParams] = []

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def on_apply(ls: Any, params: types.ApplyWorkspaceEditParams) -> Any:
        applied.append(params)
        # The editor changes its buffer and tells the server, then answers.
        ls.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=path.as_uri(), version=8),
                content_changes=[
                    types.TextDocumentContentChangeWholeDocument(text="value = 9\nextra = 2\n")
                ],
            )
        )
        return types.ApplyWorkspaceEditResult(applied=True)

    path = workspace / "buffer.py"
    path.write_text("value = 1\n")
    lsp, _ = await editor(workspace, runtime, {"edit_open_buffers": "apply"}, client=client)
    try:
        lsp.open_document(path, "value = 1\nextra = 2\n", version=7)
        async with stdio_client(["--root", str(workspace)], mcp_env(runtime)) as mcp:
            await call(mcp, "read", file_path="buffer.py")
            edited = await call(
                mcp, "edit", file_path="buffer.py", old_string="value = 1", new_string="value = 9"
            )
            assert edited["applied_to"] == "buffer"
        assert len(applied) == 1
        assert path.read_text() == "value = 1\n"  # the disk is the person's to save
    finally:
        await lsp.client.close()


async def test_without_an_editor_server_mcp_runs_standalone_and_cleans_stale_files(
    workspace: Path,
) -> None:
    runtime = private_runtime_dir()
    lsp, _ = await editor(workspace, runtime)
    found = discovery_file(runtime, workspace)
    await lsp.client.close()
    await eventually(lambda: not found.exists(), "the server to remove its discovery file")

    # A discovery file left by a server that died without cleaning up.
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    dead_pid = int(dead.stdout)
    socket_path = runtime / "readkeeper" / f"{dead_pid}.sock"
    entry = {"socket": str(socket_path), "pid": dead_pid, "root": str(workspace)}
    found.write_text(json.dumps(entry))

    async with stdio_client(["--root", str(workspace)], mcp_env(runtime)) as client:
        assert (await call(client, "stats"))["mode"] == "standalone"
    assert not found.exists()


async def test_after_the_editor_restarts_the_next_call_attaches_to_its_new_server(
    workspace: Path,
) -> None:
    runtime = private_runtime_dir()
    (workspace / "f.txt").write_text("f\n")
    lsp, first_pid = await editor(workspace, runtime)
    async with stdio_client(["--root", str(workspace)], mcp_env(runtime)) as client:
        try:
            assert (await call(client, "stats"))["pid"] == first_pid
        finally:
            await lsp.client.close()
        found = discovery_file(runtime, workspace)
        await eventually(lambda: not found.exists(), "the old server to remove its file")
        gone = await client.call_tool("read", {"file_path": "f.txt"})
        assert error_kind(gone) == "internal"
        assert "call again" in text_of(gone)
        detached = await client.call_tool("read", {"file_path": "f.txt"})
        assert "Reopen the folder in the editor" in text_of(detached)

        lsp, second_pid = await editor(workspace, runtime)
        try:
            stats = await call(client, "stats")
            assert stats["mode"] == "attached"
            assert stats["pid"] == second_pid
            assert (await call(client, "read", file_path="f.txt"))["type"] == "text"
        finally:
            await lsp.client.close()
