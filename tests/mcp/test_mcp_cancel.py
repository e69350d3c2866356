"""A cancelled tool call is answered honestly over MCP: with what it did.

The SDK, given `notifications/cancelled`, drops the answer of the call, while the
call's work (a write, an edit, a move) runs to its end on a worker thread all the same:
the file changed and the client was never told, and the call held its place until the
end of input (the server then waited `END_GRACE_S` for an answer that never came). The
stdio front end keeps the notification from the SDK, so every call is answered.

The call and its cancel are sent in one write, so the cancel is read before the call's
work could be done: the moment is made, not timed.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path
from typing import IO, Any

import pytest
import warm_server

from mcp_helpers import mcp_env, private_runtime_dir

VERSIONS = ("2025-11-25", "2026-07-28")
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


class Mcp:
    """`readkeeper mcp --standalone` on raw stdio lines."""

    def __init__(self, workspace: Path, version: str, *args: str) -> None:
        self.version = version
        self.proc = subprocess.Popen(
            warm_server.command("mcp", *args, "--standalone", "--root", str(workspace)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=mcp_env(private_runtime_dir()),
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        assert self.proc.stdout is not None
        threading.Thread(target=self._pump, args=(self.proc.stdout,), daemon=True).start()
        if version == "2026-07-28":
            self.request("discover", "server/discover", {})
        else:
            info = {"name": "raw", "version": "0"}
            params = {"protocolVersion": version, "capabilities": {}, "clientInfo": info}
            self.request("init", "initialize", params)
            self.send([{"jsonrpc": "2.0", "method": "notifications/initialized"}])

    def _pump(self, stdout: IO[bytes]) -> None:
        for line in stdout:
            self.lines.put(line)
        self.lines.put(b"")  # the end of output

    def send(self, messages: list[dict[str, Any]]) -> None:
        """`messages` in one write."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        self.proc.stdin.flush()

    def call(self, msg_id: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        params: dict[str, Any] = {"name": tool, "arguments": arguments}
        if self.version == "2026-07-28":
            params["_meta"] = META
        return {"jsonrpc": "2.0", "id": msg_id, "method": "tools/call", "params": params}

    def request(self, msg_id: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if self.version == "2026-07-28":
            params = {**params, "_meta": META}
        self.send([{"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}])
        answer = self.answer(msg_id)
        assert answer is not None, f"no answer to {method}"
        return answer

    def answer(self, msg_id: str) -> dict[str, Any] | None:
        """The answer to `msg_id`; None when output ends without one."""
        while line := self.lines.get(timeout=60):
            message: dict[str, Any] = json.loads(line)
            if message.get("id") == msg_id and "method" not in message:
                return message
        return None

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        finally:
            self.proc.kill()


@pytest.fixture(params=VERSIONS)
def version(request: pytest.FixtureRequest) -> str:
    value: str = request.param
    return value


def tree(workspace: Path) -> dict[str, str | None]:
    return {p.name: p.read_text() if p.is_file() else None for p in sorted(workspace.iterdir())}


def cancel(msg_id: str) -> dict[str, Any]:
    params = {"requestId": msg_id, "reason": "the user pressed stop"}
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}


def _calls(workspace: Path) -> dict[str, tuple[str, dict[str, Any]]]:
    a = str(workspace / "a.txt")
    return {
        "edit": ("edit", {"file_path": a, "old_string": "one", "new_string": "ONE"}),
        "edit batch": (
            "edit",
            {"file_path": a, "edits": [{"old_string": "one", "new_string": "1"}]},
        ),
        "write": ("write", {"file_path": a, "content": "new\n"}),
        "undo": ("undo", {}),
        "edit_file": ("edit_file", {"path": a, "edits": [{"oldText": "one", "newText": "ONE"}]}),
        "write_file": ("write_file", {"path": a, "content": "new\n"}),
        "move_file": ("move_file", {"source": a, "destination": str(workspace / "b.txt")}),
        "create_directory": ("create_directory", {"path": str(workspace / "made")}),
    }


DROP_IN = ("edit_file", "write_file", "move_file", "create_directory")


@pytest.mark.parametrize("name", ["edit", "edit batch", "write", "undo", *DROP_IN])
def test_a_cancelled_call_is_answered_with_what_it_did(
    workspace: Path, version: str, name: str
) -> None:
    a = workspace / "a.txt"
    a.write_text("zero\n")
    server = Mcp(workspace, version, *(["--tools", "filesystem"] if name in DROP_IN else []))
    try:
        read, write = ("read_text_file", "write_file") if name in DROP_IN else ("read", "write")
        key = "path" if name in DROP_IN else "file_path"
        assert "result" in server.request(
            "r", "tools/call", {"name": read, "arguments": {key: str(a)}}
        )
        wrote = {"name": write, "arguments": {key: str(a), "content": "one\ntwo\n"}}
        assert "result" in server.request("w", "tools/call", wrote)
        before = tree(workspace)
        tool, arguments = _calls(workspace)[name]
        server.send([server.call("c", tool, arguments), cancel("c")])
        answer = server.answer("c")
        assert answer is not None, "the call was never answered"
        result = answer["result"]
        changed = tree(workspace) != before
        assert changed != bool(result.get("isError")), (answer, tree(workspace))
    finally:
        server.close()


def test_a_cancelled_call_holds_no_place_at_the_end_of_input(workspace: Path, version: str) -> None:
    """The last call cancelled and stdin closed: its answer still comes, and then the
    end of output (the server leaves once every call is answered)."""
    a = workspace / "a.txt"
    a.write_text("zero\n")
    server = Mcp(workspace, version)
    try:
        assert "result" in server.request(
            "r", "tools/call", {"name": "read", "arguments": {"file_path": str(a)}}
        )
        write = server.call("c", "write", {"file_path": str(a), "content": "new\n"})
        server.send([write, cancel("c")])
        assert server.proc.stdin is not None
        server.proc.stdin.close()
        answer = server.answer("c")
        assert answer is not None, "the call was never answered"
        assert not answer["result"].get("isError"), answer
        assert a.read_text() == "new\n"
    finally:
        server.proc.kill()
        server.proc.wait()
