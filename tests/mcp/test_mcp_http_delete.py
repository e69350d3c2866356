"""A session ended (DELETE) while a call runs over `readkeeper mcp --http`: the call is
answered with what it did, then the session ends.

The SDK's 2025-era transport, on DELETE, closes the streams of the calls in flight: a
call whose work ran on (a write on a worker thread) was answered 500 "Session
terminated" or not at all, though the file changed. readkeeper holds a session's
DELETE until the calls it has in flight are answered (mcp/http_cancels.py).

The moment is made, not timed (as in test_mcp_http_cancel.py): no `--root`, so the
call first asks the client for its roots; the test sends the DELETE, and only then
the roots, so the DELETE comes while the call is in flight.
"""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any

import pytest
from test_mcp_http_cancel import VERSION, Client, _calls, call, events, tree

from mcp_helpers import HttpServer, mcp_env, private_runtime_dir


def send_delete(client: Client) -> http.client.HTTPConnection:
    """Send the session's DELETE; its answer is left unread on the connection."""
    conn = http.client.HTTPConnection(client.host, client.port, timeout=120)
    headers = {"MCP-Protocol-Version": VERSION, "Mcp-Session-Id": client.session}
    conn.request("DELETE", client.path, headers=headers)
    return conn


@pytest.mark.parametrize("name", ["write", "edit"])
def test_a_call_running_when_its_session_is_ended_is_answered_with_what_it_did(
    workspace: Path, name: str
) -> None:
    (workspace / "a.txt").write_text("one\ntwo\n")
    server = HttpServer(["--standalone"], mcp_env(private_runtime_dir()))
    try:
        client = Client(server.url)
        before = tree(workspace)
        tool, arguments, runs = _calls(workspace)[name]
        server_asks = events(client.listen())
        stream = events(client.post(call("c", tool, arguments)))
        asked = next(server_asks)
        assert asked.get("method") == "roots/list", asked
        ending = send_delete(client)
        roots = {"roots": [{"uri": workspace.as_uri(), "name": "work"}]}
        assert client.notify({"jsonrpc": "2.0", "id": asked["id"], "result": roots}) == 202
        answers: list[Any] = [m for m in stream if m.get("id") == "c" and "method" not in m]
        assert answers, f"the call was not answered; the workspace is now {tree(workspace)}"
        answer = answers[0]
        assert "result" in answer, f"answered {answer}, not with what the call did"
        changed = tree(workspace) != before
        assert changed != bool(answer["result"].get("isError")), (answer, tree(workspace))
        if runs:
            assert changed, answer
        ended = ending.getresponse()
        ended.read()
        assert ended.status == 200
        # The session is over: a call in it now is refused, as the SDK refuses it.
        late = client.post(call("d", "stats", {}))
        refused = json.loads(late.read())
        assert late.status == 404
        # Told as every ended session is: its own id, a kind, the call that works next.
        assert refused["id"] == "d"
        assert refused["error"]["data"] == {"kind": "bad_params", "reason": "session_ended"}
        assert "initialize" in refused["error"]["message"]
    finally:
        server.stop()
