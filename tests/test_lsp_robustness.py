"""The server survives what a buggy client or a bug of its own throws at it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


class RawServer:
    """The real server on raw stdio, so tests can send bytes no client library would."""

    def __init__(self, *command: str) -> None:
        self.process = subprocess.Popen(
            command or [sys.executable, "-m", "readkeeper", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def send_bytes(self, body: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(json.dumps({"jsonrpc": "2.0", **message}).encode())

    def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        length = 0
        while (line := self.process.stdout.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        message: dict[str, Any] = json.loads(self.process.stdout.read(length))
        return message

    def response(self) -> dict[str, Any]:
        """The next response (skipping the server's own notifications and requests)."""
        while True:
            message = self.receive()
            if "method" not in message:
                return message

    def request(self, id_: int, method: str, params: Any) -> dict[str, Any]:
        self.send({"id": id_, "method": method, "params": params})
        return self.response()

    def initialize(self, root: Path) -> None:
        reply = self.request(
            1,
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "capabilities": {},
            },
        )
        assert "result" in reply
        self.send({"method": "initialized", "params": {}})

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture
def raw(workspace: Path) -> Any:
    server = RawServer()
    server.initialize(workspace)
    (workspace / "ok.txt").write_text("still serving\n")
    yield server
    server.close()


def assert_still_serving(raw: RawServer, id_: int) -> None:
    reply = raw.request(id_, "readkeeper/read", {"file_path": "ok.txt", "force": True})
    assert reply["result"]["file"]["content"] == "     1\tstill serving"


def test_malformed_json_is_answered_with_a_parse_error(raw: RawServer) -> None:
    raw.send_bytes(b'{"jsonrpc": "2.0", "id": 7, "method": "readkeeper/read", "params": {')
    reply = raw.response()
    assert reply["id"] is None
    assert reply["error"]["code"] == -32700
    assert_still_serving(raw, 8)


def test_json_that_is_not_a_message_is_an_invalid_request(raw: RawServer) -> None:
    raw.send_bytes(b"[1, 2, 3]")
    reply = raw.response()
    assert reply["id"] is None
    assert reply["error"]["code"] == -32600
    assert_still_serving(raw, 9)


def test_unknown_method(raw: RawServer) -> None:
    reply = raw.request(3, "readkeeper/teleport", {})
    assert reply["id"] == 3
    assert reply["error"]["code"] == -32601
    assert_still_serving(raw, 4)


def test_lsp_request_with_params_of_the_wrong_shape(raw: RawServer) -> None:
    reply = raw.request(5, "textDocument/hover", {"textDocument": 12})
    assert reply["id"] == 5
    assert "error" in reply
    assert_still_serving(raw, 6)


def test_an_exception_inside_a_handler_is_an_error_reply(workspace: Path) -> None:
    # The real server, with one fault injected into the core: a bug of our own.
    inject = (
        "import readkeeper.core as core\n"
        "def broken(self, params): raise RuntimeError('injected fault')\n"
        "core.Readkeeper.stats_for = broken\n"
        "from readkeeper.cli import main\n"
        "main(['serve'])\n"
    )
    server = RawServer(sys.executable, "-c", inject)
    try:
        server.initialize(workspace)
        (workspace / "ok.txt").write_text("still serving\n")
        reply = server.request(2, "readkeeper/stats", {})
        assert reply["error"]["code"] == -32603
        assert "injected fault" in reply["error"]["message"]
        assert_still_serving(server, 3)
    finally:
        server.close()
