"""A `forget` covers every call sent before it over `readkeeper mcp` (stdio), as over LSP
(tests/lsp/test_lsp_forget_order.py): the SDK serves each call as a task of its own, so
a forget pipelined right behind a grep ran before the grep had recorded what it showed,
said `forgotten: 0`, and the grep's thirty files were then in the read-state. The
forget now waits for the calls before it, and what comes after it for the forget.

The moment is made, not timed: the lines go in one write, so the server reads them
together. Raw JSON-RPC lines, so nothing but the test decides what is sent when.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import warm_server

from mcp_helpers import mcp_env, private_runtime_dir


def call(msg_id: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": tool, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": msg_id, "method": "tools/call", "params": params}


class Lines:
    """`readkeeper mcp` over raw stdio lines."""

    def __init__(self, workspace: Path) -> None:
        self.process = subprocess.Popen(
            warm_server.command("mcp", "--root", str(workspace), "--standalone"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=mcp_env(private_runtime_dir()),
        )

    def send(self, *messages: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        self.process.stdin.flush()

    def answers(self, count: int) -> dict[str, Any]:
        """The next `count` answers, by id."""
        assert self.process.stdout is not None
        got: dict[str, Any] = {}
        while len(got) < count:
            line = self.process.stdout.readline()
            assert line, "the server closed its output"
            message = json.loads(line)
            if "id" in message and "method" not in message:
                got[message["id"]] = message
        return got

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)


def result(answer: dict[str, Any]) -> dict[str, Any]:
    structured: dict[str, Any] = answer["result"]["structuredContent"]
    return structured


def test_a_forget_right_behind_a_grep_forgets_what_the_grep_showed(workspace: Path) -> None:
    for n in range(30):
        (workspace / f"f{n}.txt").write_text(f"alpha {n}\nbeta {n}\n")
    server = Lines(workspace)
    try:
        hello = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        }
        server.send({"jsonrpc": "2.0", "id": "i", "method": "initialize", "params": hello})
        server.answers(1)
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        server.send(call("w", "stats", {}))  # the backend is chosen: quick calls are taken
        server.answers(1)
        edit = {"file_path": "f0.txt", "old_string": "alpha 0", "new_string": "ALPHA 0"}
        server.send(
            call("g", "grep", {"pattern": "alpha"}),
            call("f", "forget", {}),
            call("e", "edit", edit),
            call("s", "stats", {}),
        )
        got = server.answers(4)
        assert len(result(got["g"])["matches"]) == 30, got["g"]
        assert result(got["f"])["forgotten"] == 30, got["f"]
        assert got["e"]["result"]["isError"], got["e"]
        assert "kind: not_read" in got["e"]["result"]["content"][0]["text"], got["e"]
        assert result(got["s"])["files_in_read_state"] == 0, got["s"]
        assert (workspace / "f0.txt").read_text() == "alpha 0\nbeta 0\n"
    finally:
        server.close()
