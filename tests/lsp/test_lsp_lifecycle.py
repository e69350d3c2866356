"""LSP's lifecycle, as the spec says: requests before `initialize` and after `shutdown`
are refused with an answer, `exit` ends the process with LSP's exit code, and the
workspace roots are fixed at the first `initialize` (never `/` or the home folder)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import warm_server
from raw_lsp import WAIT_S, RawServer

from helpers import wait_until
from mcp_helpers import private_runtime_dir
from readkeeper.attach import discovery

CONSOLE_SCRIPT = Path(sys.executable).with_name("readkeeper")


@pytest.fixture
def raw(workspace: Path) -> Iterator[RawServer]:
    server = RawServer()
    server.initialize(workspace)
    (workspace / "ok.txt").write_text("inside\n")
    yield server
    server.close()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file outside the workspace (its sibling folder)."""
    folder = tmp_path / "outside"
    folder.mkdir()
    secret = folder / "secret.txt"
    secret.write_text("not for the agent\n")
    return secret


def read(raw: RawServer, id_: int, path: str | Path) -> dict[str, Any]:
    return raw.request(id_, "readkeeper/read", {"file_path": str(path), "force": True})


def kind(reply: dict[str, Any]) -> str | None:
    return reply.get("error", {}).get("data", {}).get("kind")


def wait_for_shown_message(raw: RawServer, fragment: str) -> str:
    """The window/showMessage that contains `fragment` (server messages arrive in their
    own time: poll with a deadline, with a request to read them in between)."""
    deadline = time.monotonic() + WAIT_S
    probe = 1000
    while time.monotonic() < deadline:
        for message in raw.shown_messages():
            if fragment in message:
                return message
        probe += 1
        raw.request(probe, "readkeeper/stats", {})
    raise AssertionError(f"no window/showMessage with {fragment!r}: {raw.shown_messages()}")


# --- shutdown and exit --------------------------------------------------------------------


def test_requests_after_shutdown_are_invalid_and_exit_then_ends_with_0(raw: RawServer) -> None:
    assert raw.request(2, "shutdown", None) == {"jsonrpc": "2.0", "id": 2, "result": None}
    for id_, method in [(3, "readkeeper/stats"), (4, "readkeeper/read"), (5, "shutdown")]:
        reply = raw.request(id_, method, {"file_path": "ok.txt"})
        assert reply["error"]["code"] == -32600, reply
        assert kind(reply) == "bad_params"
        assert "shut down" in reply["error"]["message"]
    raw.notify("exit")
    assert raw.wait_exit() == 0


def test_exit_without_shutdown_ends_with_1(raw: RawServer) -> None:
    raw.notify("exit")
    assert raw.wait_exit() == 1


@pytest.mark.parametrize("command", ["module", "console_script"])
def test_exit_codes_through_each_entry_point(workspace: Path, command: str) -> None:
    argv = [sys.executable, "-m", "readkeeper"] if command == "module" else [str(CONSOLE_SCRIPT)]
    server = RawServer(*argv, "serve")
    try:
        server.initialize(workspace)
        server.request(2, "shutdown", None)
        server.notify("exit")
        assert server.wait_exit() == 0
    finally:
        server.close()


def test_end_of_input_after_shutdown_ends_with_0(raw: RawServer) -> None:
    raw.request(2, "shutdown", None)
    assert raw.process.stdin is not None
    raw.process.stdin.close()
    assert raw.wait_exit() == 0


def test_requests_before_initialize_get_server_not_initialized(workspace: Path) -> None:
    server = RawServer()
    try:
        reply = server.request(1, "readkeeper/stats", {})
        assert reply["error"]["code"] == -32002
        assert kind(reply) == "bad_params"
        server.initialize(workspace)
        assert "result" in server.request(2, "readkeeper/stats", {})
    finally:
        server.close()


# --- the roots are fixed at the first initialize ------------------------------------------


def test_a_second_initialize_is_refused_and_changes_nothing(raw: RawServer, outside: Path) -> None:
    assert kind(read(raw, 2, outside)) == "outside_workspace"
    reply = raw.request(
        3, "initialize", {"processId": None, "rootUri": "file:///", "capabilities": {}}
    )
    assert reply["error"]["code"] == -32600
    assert kind(reply) == "bad_params"
    assert "already initialized" in reply["error"]["message"]
    assert kind(read(raw, 4, outside)) == "outside_workspace"
    assert kind(read(raw, 5, "/etc/passwd")) == "outside_workspace"
    assert read(raw, 6, "ok.txt")["result"]["file"]["content"] == "     1\tinside"


def test_a_first_initialize_at_the_filesystem_root_runs_without_a_root(
    workspace: Path, outside: Path
) -> None:
    server = RawServer()
    try:
        server.initialize(
            None, rootUri="file:///", workspaceFolders=[{"uri": "file:///", "name": "/"}]
        )
        wait_for_shown_message(server, "not a workspace root")
        assert kind(read(server, 2, outside)) == "outside_workspace"
        assert kind(read(server, 3, "/etc/passwd")) == "outside_workspace"
    finally:
        server.close()


def test_folder_changes_never_add_the_root_or_home(
    tmp_path: Path, workspace: Path, outside: Path
) -> None:
    home = tmp_path / "home"
    (home / "proj").mkdir(parents=True)
    (home / "notes.txt").write_text("private\n")
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "more.txt").write_text("added folder\n")
    server = RawServer(env={"HOME": str(home)})
    try:
        server.initialize(workspace)
        added = [
            {"uri": "file:///", "name": "root"},
            {"uri": home.as_uri(), "name": "home"},
            {"uri": tmp_path.as_uri(), "name": "above home"},
            {"uri": extra.as_uri(), "name": "extra"},
        ]
        server.notify(
            "workspace/didChangeWorkspaceFolders", {"event": {"added": added, "removed": []}}
        )
        shown = wait_for_shown_message(server, str(home))
        assert "not a workspace root" in shown
        wait_for_shown_message(server, "/ is not a workspace root")
        assert read(server, 2, extra / "more.txt")["result"]["file"]["content"].endswith(
            "added folder"
        )
        assert kind(read(server, 3, home / "notes.txt")) == "outside_workspace"
        assert kind(read(server, 4, outside)) == "outside_workspace"
        assert kind(read(server, 5, "/etc/passwd")) == "outside_workspace"

        removed = [{"uri": extra.as_uri(), "name": "extra"}]
        server.notify(
            "workspace/didChangeWorkspaceFolders", {"event": {"added": [], "removed": removed}}
        )
        assert kind(read(server, 6, extra / "more.txt")) == "outside_workspace"
    finally:
        server.close()
    assert "home" in server.stderr  # the refusal is in the log too


# --- start-up -----------------------------------------------------------------------------


# What a server needs only once `initialize` is answered: loaded on a thread at
# `initialized` (`ReadkeeperServer.load`), not before the answer.
LOADED_AFTER_INITIALIZE = (
    "readkeeper.read.pipeline",
    "readkeeper.watch.changes",
    "readkeeper.watch.watcher",
    "readkeeper.attach.listener",
    "readkeeper.read.readers.worker",
    "readkeeper.protocol.documents",
)


def imported(server: RawServer) -> set[str]:
    """The modules the server imported so far, from `-X importtime`'s lines on stderr."""
    lines = server.stderr.splitlines()
    return {line.rpartition("|")[2].strip() for line in lines if line.startswith("import time:")}


def test_initialize_is_answered_before_the_read_pipeline_and_the_watcher_load(
    workspace: Path,
) -> None:
    """An editor waits for `initialize` before anything else of the server starts: the
    answer does not wait for the modules of reading, watching and attaching. They load
    at `initialized`, with no read needed, and then serve as before."""
    (workspace / "ok.txt").write_text("inside\n")
    server = RawServer(env={"PYTHONPROFILEIMPORTTIME": "1"})
    try:
        params = {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}}
        assert "result" in server.request(1, "initialize", params)
        assert "result" in server.request(2, "readkeeper/stats", {})
        before = imported(server)
        assert "readkeeper.lsp.app" in before  # the check sees the server's imports
        assert before.isdisjoint(LOADED_AFTER_INITIALIZE)
        server.notify("initialized", {})
        wait_until(
            lambda: imported(server).issuperset(LOADED_AFTER_INITIALIZE),
            "the modules to load after `initialized`, without a read",
        )
        assert read(server, 3, workspace / "ok.txt")["result"]["file"]["content"].endswith("inside")
    finally:
        server.close()


def test_a_shutdown_while_the_modules_load_starts_no_attach_socket(workspace: Path) -> None:
    """`initialized` starts the attach socket and the watcher once their modules have
    loaded: a `shutdown` answered meanwhile has the last word (pygls cancels the
    `initialized` handler still running), and nothing is published for agents to attach
    to a server that is going away."""
    runtime = private_runtime_dir()
    published = Path(discovery.discovery_path(str(runtime / "readkeeper"), str(workspace)))
    server = RawServer(env={"XDG_RUNTIME_DIR": str(runtime)})
    try:
        server.initialize(workspace)  # and `initialized`, at once
        assert "result" in server.request(2, "shutdown", None)
        time.sleep(1.0)  # far longer than the modules take to load
        assert not published.exists()
        stats = server.request(3, "readkeeper/stats", {})
        assert "error" in stats  # shut down: only exit is accepted
        server.notify("exit")
        assert server.wait_exit() == 0
        # The handler cancelled mid-step ends quietly (no CancelledError into the loop).
        assert "Traceback" not in server.stderr, server.stderr
    finally:
        server.close()
    assert not published.exists()


def token_table_loaded(raw: RawServer) -> bool:
    """Whether the server process has a counter's native module (the token table)
    mapped: rs-bpe's, or tiktoken's where it counts (read/bpe_count.py)."""
    maps = Path(f"/proc/{warm_server.real_pid(raw.process.pid)}/maps").read_text()
    return "rs_bpe" in maps or "_tiktoken" in maps


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/<pid>/maps")
def test_the_token_table_loads_with_the_first_read_not_at_start_up(
    raw: RawServer, workspace: Path
) -> None:
    """The table is about 40 MB of the idle server and holds the GIL for over 100 ms as
    it loads: a server that no agent reads through never loads it. The first read loads
    it (counted meanwhile by the table's index when the cache holds one), exactly."""
    raw.request(2, "readkeeper/stats", {})  # `initialized` has been handled
    time.sleep(0.5)  # long enough for a load started at `initialized` to show
    assert not token_table_loaded(raw)
    first = read(raw, 3, workspace / "ok.txt")["result"]
    assert first["type"] == "text"
    assert "tokens_upper_bound" not in first["file"]
    wait_until(lambda: token_table_loaded(raw), "the token table to load after the first read")
