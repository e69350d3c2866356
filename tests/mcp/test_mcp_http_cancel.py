"""A cancelled tool call over `readkeeper mcp --http` is answered with what it did.

The SDK's dispatcher cancels the call's task on `notifications/cancelled` and its
2025-era HTTP transport answers -32800 "Request cancelled", while the call's work (a
write, a move) runs on a worker thread to its end: the file changed, the client was
told it did not. readkeeper takes the request out of every cancel before the SDK
reads it (mcp/http_cancels.py), so every call runs and is answered.

The moment is made, not timed: no `--root`, so the call's first step is to ask the
client for its roots (roots/list, on the session's event stream); the test sends the
cancel, and only then the roots, so the cancel reaches the dispatcher while the call
is in flight. Raw HTTP, so nothing but the test decides what is sent when.
"""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from mcp_helpers import HttpServer, mcp_env, private_runtime_dir
from readkeeper.mcp.http_cancels import without_cancels

VERSION = "2025-11-25"


class Client:
    """One MCP session over raw HTTP, its client able to give roots."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.host, self.port, self.path = parts.hostname or "", parts.port or 0, parts.path
        self.session = ""
        hello = {
            "protocolVersion": VERSION,
            "capabilities": {"roots": {"listChanged": False}},
            "clientInfo": {"name": "raw", "version": "0"},
        }
        response = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello})
        self.session = response.getheader("mcp-session-id") or ""
        assert self.session, response.status
        assert next(events(response))["id"] == 0
        assert self.notify({"jsonrpc": "2.0", "method": "notifications/initialized"}) == 202

    def post(self, body: Any) -> http.client.HTTPResponse:
        """Send `body` on a connection of its own; the answer, unread."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": VERSION,
        }
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        conn.request("POST", self.path, json.dumps(body).encode(), headers)
        return conn.getresponse()

    def listen(self) -> http.client.HTTPResponse:
        """The session's event stream, where the server's own requests (roots/list) go."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
        headers = {
            "Accept": "text/event-stream",
            "MCP-Protocol-Version": VERSION,
            "Mcp-Session-Id": self.session,
        }
        conn.request("GET", self.path, headers=headers)
        return conn.getresponse()

    def notify(self, body: Any) -> int:
        response = self.post(body)
        response.read()
        return response.status


def events(response: http.client.HTTPResponse) -> Any:
    """The JSON-RPC messages of an event stream (or of a JSON answer), as they come."""
    if response.getheader("content-type", "").startswith("application/json"):
        yield json.loads(response.read())
        return
    data: list[str] = []
    while line := response.readline():
        text = line.decode().rstrip("\r\n")
        if text.startswith("data:"):
            data.append(text[5:].strip())
        elif not text and data:
            joined = "".join(data)
            data = []
            if joined:
                yield json.loads(joined)


def call(msg_id: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": tool, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": msg_id, "method": "tools/call", "params": params}


def cancel(msg_id: str) -> dict[str, Any]:
    params = {"requestId": msg_id, "reason": "the user pressed stop"}
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}


def tree(workspace: Path) -> dict[str, str | None]:
    return {p.name: p.read_text() if p.is_file() else None for p in sorted(workspace.iterdir())}


def _calls(workspace: Path) -> dict[str, tuple[str, dict[str, Any], bool]]:
    """Each call, its arguments, and whether it changes the workspace when it runs."""
    a, b = str(workspace / "a.txt"), str(workspace / "b.txt")
    return {
        "write": ("write", {"file_path": b, "content": "new\n"}, True),
        "edit": ("edit", {"file_path": a, "old_string": "one", "new_string": "ONE"}, False),
        "undo": ("undo", {}, False),
        "write_file": ("write_file", {"path": b, "content": "new\n"}, True),
        "move_file": ("move_file", {"source": a, "destination": b}, True),
        "edit_file": (
            "edit_file",
            {"path": a, "edits": [{"oldText": "one", "newText": "1"}]},
            False,
        ),
    }


DROP_IN = ("write_file", "move_file", "edit_file")


@pytest.mark.parametrize("name", ["write", "edit", "undo", *DROP_IN])
def test_a_cancelled_call_over_http_is_answered_with_what_it_did(
    workspace: Path, name: str
) -> None:
    (workspace / "a.txt").write_text("one\ntwo\n")
    tools = ["--tools", "filesystem"] if name in DROP_IN else []
    server = HttpServer(["--standalone", *tools], mcp_env(private_runtime_dir()))
    try:
        client = Client(server.url)
        before = tree(workspace)
        tool, arguments, runs = _calls(workspace)[name]
        server_asks = events(client.listen())
        stream = events(client.post(call("c", tool, arguments)))
        asked = next(server_asks)
        assert asked.get("method") == "roots/list", asked
        # The cancel first, then the roots: the call is in flight when the cancel comes.
        assert client.notify(cancel("c")) == 202
        roots = {"roots": [{"uri": workspace.as_uri(), "name": "work"}]}
        assert client.notify({"jsonrpc": "2.0", "id": asked["id"], "result": roots}) == 202
        answer = next(m for m in stream if m.get("id") == "c" and "method" not in m)
        assert "result" in answer, f"answered {answer}, not with what the call did"
        changed = tree(workspace) != before
        assert changed != bool(answer["result"].get("isError")), (answer, tree(workspace))
        if runs:
            assert changed, answer
    finally:
        server.stop()


def test_a_cancel_in_a_batch_names_no_request() -> None:
    batch = [call("c", "write", {}), cancel("c"), {"jsonrpc": "2.0", "method": "x"}]
    kept = json.loads(without_cancels(json.dumps(batch).encode()))
    assert kept[0] == batch[0]
    assert kept[2] == batch[2]
    assert kept[1] == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"reason": "the user pressed stop"},
    }


def test_a_cancel_is_read_as_the_sdk_reads_it() -> None:
    """What orjson refuses and the SDK's parser takes (NaN) is still
    read here: no cancel reaches the SDK in a form this step could not read."""
    body = (
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c","x":NaN}}'
    )
    kept = json.loads(without_cancels(body))
    assert "requestId" not in kept["params"]


def test_a_body_without_cancels_is_passed_on_as_it_came() -> None:
    for body in (json.dumps(call("c", "read", {})).encode(), b"not json", b"[1, 2]"):
        assert without_cancels(body) is body
