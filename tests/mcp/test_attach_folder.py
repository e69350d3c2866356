"""The attach folder against other local users and dead servers: without
XDG_RUNTIME_DIR it is `<tmp>/readkeeper-<uid>`, a name anyone can make first; a folder
made by someone else (or open to others) is refused loudly, in the editor and in the
agent's tool results, never used and never silently given up on. Dead servers'
entries are swept by the next start, and a stopped server removes its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from conftest import start_session
from helpers import eventually
from mcp_helpers import call, error_kind, mcp_env, private_runtime_dir, stdio_client, text_of
from readkeeper.attach import discovery
from readkeeper.attach.listener import Listener
from readkeeper.core import Readkeeper

NOBODY = 65534


def env_without_runtime_dir(tmp: Path) -> dict[str, str]:
    """An environment whose attach folder is `<tmp>/readkeeper-<uid>`."""
    env = mcp_env(private_runtime_dir(), TMPDIR=str(tmp))
    del env["XDG_RUNTIME_DIR"]
    return env


def planted(tmp: Path, owner: int | None) -> Path:
    """The attach folder as another user makes it first: theirs (as root, the test can
    give it away), else open to everyone (what they would make it to let us in)."""
    folder = tmp / f"readkeeper-{os.geteuid()}"
    folder.mkdir(mode=0o777)
    os.chmod(folder, 0o777)
    if owner is not None:
        os.chown(folder, owner, owner)
        os.chmod(folder, 0o700)
    return folder


@pytest.mark.parametrize(
    "owner",
    [
        None,
        pytest.param(
            NOBODY,
            marks=pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder away needs root"),
        ),
    ],
)
async def test_a_planted_attach_folder_is_refused_loudly_and_the_agent_is_told(
    workspace: Path, owner: int | None
) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="rkt-"))
    os.chmod(tmp, 0o1777)  # like /tmp
    folder = planted(tmp, owner)
    path = workspace / "open.py"
    path.write_text("x = 1\n")
    env = env_without_runtime_dir(tmp)
    lsp = await start_session(workspace, env={"TMPDIR": str(tmp), "XDG_RUNTIME_DIR": ""})
    try:

        def warnings() -> list[str]:
            return [m.message for m in lsp.client.shown_messages if "cannot attach" in m.message]

        await eventually(warnings, "the editor to warn its user")
        shown = warnings()
        assert str(folder) in shown[0]
        assert "unsaved" in shown[0]
        if owner is None:
            assert os.listdir(folder) == []  # nothing published in a folder open to all
        lsp.open_document(path, "x = 1\ny = 2  # typed, not saved\n", version=3)
        async with stdio_client(["--root", str(workspace)], env) as client:
            first = await client.call_tool("read", {"file_path": "open.py"})
            assert not first.is_error, text_of(first)
            assert "Unsaved changes in the editor are not visible to you" in text_of(first)
            assert str(folder) in text_of(first)
            edit = await client.call_tool(
                "edit", {"file_path": "open.py", "old_string": "x = 1", "new_string": "x = 2"}
            )
            assert "not visible to you" in text_of(edit)
            assert isinstance(edit.structured_content, dict)
            assert "not_attached" in edit.structured_content
            again = await client.call_tool("read", {"file_path": "open.py", "force": True})
            assert "not visible to you" not in text_of(again)  # told once, on reads
            stats = await call(client, "stats")
            assert stats["mode"] == "standalone"
    finally:
        await lsp.client.close()


async def test_without_a_runtime_dir_the_tmp_folder_is_made_private_and_used(
    workspace: Path,
) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="rkt-"))
    os.chmod(tmp, 0o1777)
    path = workspace / "open.py"
    path.write_text("x = 1\n")
    lsp = await start_session(workspace, env={"TMPDIR": str(tmp), "XDG_RUNTIME_DIR": ""})
    try:
        folder = tmp / f"readkeeper-{os.geteuid()}"
        found = Path(discovery.discovery_path(str(folder), str(workspace)))
        await eventually(found.exists, "the editor's server to publish its socket")
        assert os.stat(folder).st_mode & 0o777 == 0o700
        lsp.open_document(path, "x = 1\ny = 2\n", version=2)
        async with stdio_client(["--root", str(workspace)], env_without_runtime_dir(tmp)) as mcp:
            assert (await call(mcp, "stats"))["mode"] == "attached"
            refused = await mcp.call_tool(
                "edit", {"file_path": "open.py", "old_string": "x = 1", "new_string": "x = 2"}
            )
            assert error_kind(refused) in ("dirty_buffer", "not_read")
        assert path.read_text() == "x = 1\n"
    finally:
        await lsp.client.close()


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(done.stdout)


def test_the_next_start_sweeps_dead_servers_entries(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = private_runtime_dir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    folder = Path(discovery.runtime_dir())
    dead = dead_pid()
    for n in range(300):
        key = f"{n:024x}"
        entry = {"socket": str(folder / f"{dead}.sock"), "pid": dead, "root": f"/gone/{n}"}
        (folder / f"{key}.json").write_text(json.dumps(entry))
        (folder / f"{key}.json.{dead}.tmp").write_text("{")
    (folder / f"{dead}.sock").write_text("")
    alive = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    try:
        live_entry = {"socket": str(folder / f"{alive.pid}.sock"), "pid": alive.pid, "root": "/x"}
        (folder / "live.json").write_text(json.dumps(live_entry))
        served = Listener(core)
        assert served.start([str(workspace)])
        try:
            left = sorted(os.listdir(folder))
            ours = {Path(served.socket_path).name, Path(served._published[0]).name}
            assert set(left) == ours | {"live.json"}
        finally:
            served.close()
    finally:
        alive.communicate(b"")


@contextlib.asynccontextmanager
async def published_server(workspace: Path) -> AsyncIterator[tuple[Any, Path]]:
    """The editor's server, started and its socket published: its process and the
    folder of its socket and discovery file."""
    runtime = private_runtime_dir()
    # Its own process (not forked warm): the tests signal its threads.
    lsp = await start_session(workspace, env={"XDG_RUNTIME_DIR": str(runtime)}, real=True)
    server = lsp.client._server
    assert server is not None
    found = Path(discovery.discovery_path(str(runtime / "readkeeper"), str(workspace)))
    try:
        await eventually(found.exists, "the editor's server to publish its socket")
        yield server, runtime / "readkeeper"
    finally:
        with contextlib.suppress(RuntimeError):  # stopped already, when the test passed
            await lsp.client.close()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_a_stopped_server_removes_its_socket_and_discovery_file(
    workspace: Path, signum: int
) -> None:
    async with published_server(workspace) as (server, folder):
        server.send_signal(signum)
        await server.wait()
        assert os.listdir(folder) == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_a_signal_given_to_another_thread_stops_the_server(
    workspace: Path, signum: int
) -> None:
    """The kernel gives a process's signal to any of its threads: one given to a thread
    other than the main one left the main thread asleep in the event loop, the server
    running (a CI run hung on SIGINT). Sent to a worker thread on purpose (tgkill)."""
    import ctypes
    import platform

    tgkill = {"x86_64": 234, "aarch64": 131}.get(platform.machine())
    if tgkill is None:
        pytest.skip(f"tgkill's syscall number on {platform.machine()} is not known here")
    async with published_server(workspace) as (server, folder):
        others = [int(t) for t in os.listdir(f"/proc/{server.pid}/task") if int(t) != server.pid]
        assert others, "the server runs threads besides its main one"
        libc = ctypes.CDLL(None, use_errno=True)
        assert libc.syscall(tgkill, server.pid, others[0], signum) == 0
        await asyncio.wait_for(server.wait(), 30)
        assert os.listdir(folder) == []
