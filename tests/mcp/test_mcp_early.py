"""The handshake answered before the SDK is loaded (`readkeeper.mcp.early`, issue 34).

The answers are the SDK's own, made by `readkeeper.mcp.handshake` and checked current
here; `early.py` answers from them without importing the SDK, only plain requests, and
hands everything it read to the SDK, whose answers to the requests already answered
are dropped: every request gets exactly one reply, in every protocol version, and the
connection goes on as if the SDK had answered the handshake itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_helpers import READKEEPER, mcp_env, private_runtime_dir
from readkeeper.mcp import handshake, handshake_answers
from readkeeper.mcp.early import EarlyAnswers

LEGACY = handshake_answers.HANDSHAKE_VERSIONS
MODERN = "2026-07-28"
INFO = {"name": "some-client", "version": "9.9"}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": INFO,
    "io.modelcontextprotocol/clientCapabilities": {"roots": {}},
}


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def result_of(key: str) -> bytes:
    return handshake_answers.RESULTS[f"readkeeper|{key}"].encode()


def test_the_early_answers_are_the_sdks_current_ones() -> None:
    """Made again from the SDK, they are the ones committed: a change of a tool, its
    schema, the instructions, readkeeper's version or the SDK shows here first."""
    made = handshake.generate(mcp_env(private_runtime_dir()))
    assert made["HANDSHAKE_VERSIONS"] == handshake_answers.HANDSHAKE_VERSIONS
    assert made["LATEST_HANDSHAKE"] == handshake_answers.LATEST_HANDSHAKE
    assert made["RESULTS"] == handshake_answers.RESULTS, "run `python -m readkeeper.mcp.handshake`"


def handshake_lines(version: str, first_id: Any = 1) -> list[dict[str, Any]]:
    if version == MODERN:
        params = {"_meta": MODERN_META}
        return [
            {"jsonrpc": "2.0", "id": first_id, "method": "server/discover", "params": params},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": params},
        ]
    hello = {"protocolVersion": version, "capabilities": {"roots": {}}, "clientInfo": INFO}
    return [
        {"jsonrpc": "2.0", "id": first_id, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
    ]


def serve(workspace: Path, stdin: bytes) -> tuple[list[dict[str, Any]], list[bytes], str]:
    """Replies (parsed, and as written) of `readkeeper mcp` to `stdin`, and its stderr."""
    done = subprocess.run(
        [*READKEEPER, "mcp", "--standalone", "--root", str(workspace)],
        input=stdin,
        capture_output=True,
        env=mcp_env(private_runtime_dir()),
        timeout=120,
        check=False,
    )
    lines = done.stdout.splitlines()
    return [json.loads(raw) for raw in lines], lines, done.stderr.decode(errors="replace")


@pytest.mark.parametrize("version", [*LEGACY, MODERN])
def test_every_request_gets_one_reply_and_the_connection_goes_on(
    workspace: Path, version: str
) -> None:
    (workspace / "a.py").write_text("print('hi')\n")
    messages = handshake_lines(version)
    meta = {"_meta": MODERN_META} if version == MODERN else {}
    read = {"name": "read", "arguments": {"file_path": str(workspace / "a.py")}, **meta}
    # The client reuses the handshake's id: it was answered.
    messages.append({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": read})
    replies, raw, stderr = serve(workspace, b"".join(map(line, messages)))
    assert sorted(r["id"] for r in replies) == [1, 1, 2], stderr
    first_key = f"server/discover|{MODERN}" if version == MODERN else f"initialize|{version}"
    tools_key = f"tools/list|{version}"
    assert raw[0] == b'{"jsonrpc":"2.0","id":1,"result":' + result_of(first_key) + b"}"
    assert raw[1] == b'{"jsonrpc":"2.0","id":2,"result":' + result_of(tools_key) + b"}"
    assert "print('hi')" in json.dumps(replies[2]["result"])
    assert "out of date" not in stderr


def test_an_unknown_version_gets_the_latest_as_the_sdk_gives_it(workspace: Path) -> None:
    messages = handshake_lines("1999-01-01", first_id="init-1")
    replies, _, stderr = serve(workspace, b"".join(map(line, messages)))
    assert [r["id"] for r in replies] == ["init-1", 2]
    assert replies[0]["result"]["protocolVersion"] == handshake_answers.LATEST_HANDSHAKE
    assert "out of date" not in stderr


def test_the_early_answers_need_no_sdk() -> None:
    """Answered in a process that has imported early.py and nothing of the SDK."""
    script = """
import json, os, sys
from readkeeper.mcp.early import EarlyAnswers
r_in, w_in = os.pipe(); r_out, w_out = os.pipe()
early = EarlyAnswers(stdin=r_in, stdout=w_out)
early._thread.start()
info = {"name": "c", "version": "1"}
hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": info}
request = {"jsonrpc": "2.0", "id": 5, "method": "initialize", "params": hello}
os.write(w_in, json.dumps(request).encode() + b"\\n")
reply = os.read(r_out, 1 << 20)
early.handover()
sdk = ("mcp", "mcp_types", "pydantic", "anyio")
heavy = sorted(m for m in sys.modules if m.split(".")[0] in sdk)
print(json.dumps({"reply": json.loads(reply), "heavy": heavy}))
"""
    command = [sys.executable, "-c", script]
    done = subprocess.run(command, capture_output=True, timeout=60, check=True)
    found = json.loads(done.stdout)
    assert found["heavy"] == []
    assert found["reply"]["id"] == 5
    assert found["reply"]["result"]["protocolVersion"] == "2025-06-18"


PLAIN = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": INFO}


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {**PLAIN, "extra": 1}},
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {**PLAIN, "capabilities": 3}},
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {**PLAIN, "clientInfo": {}}},
        {"jsonrpc": "2.0", "id": True, "method": "initialize", "params": PLAIN},
        {"jsonrpc": "2.0", "id": 'a"b', "method": "initialize", "params": PLAIN},
        {"jsonrpc": "2.0", "id": 1.5, "method": "initialize", "params": PLAIN},
        {"jsonrpc": "1.0", "id": 1, "method": "initialize", "params": PLAIN},
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": PLAIN, "more": 1},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},  # no handshake
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "read"}},
    ],
)
def test_a_request_that_is_not_plain_is_left_to_the_sdk_with_all_after_it(
    message: dict[str, Any],
) -> None:
    r_in, w_in = os.pipe()
    r_out, w_out = os.pipe()
    early = EarlyAnswers(stdin=r_in, stdout=w_out)
    early._thread.start()
    later = handshake_lines("2025-06-18")
    sent = line(message) + b"".join(map(line, later)) + b'{"partial'
    os.write(w_in, sent)
    os.close(w_in)  # the end of input: the thread has read everything once it stops
    early._thread.join(30)
    assert early.handover() == sent
    os.close(w_out)
    assert os.read(r_out, 1 << 16) == b""
    for fd in (r_in, r_out):
        os.close(fd)


def test_answered_requests_are_handed_on_under_ids_of_ours() -> None:
    r_in, w_in = os.pipe()
    r_out, w_out = os.pipe()
    early = EarlyAnswers(stdin=r_in, stdout=w_out)
    early._thread.start()
    messages = handshake_lines("2025-11-25")
    after = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "x"}}
    os.write(w_in, b"".join(map(line, [*messages, after])))
    os.close(w_in)
    early._thread.join(30)
    handed = [json.loads(raw) for raw in early.handover().splitlines()]
    assert [m.get("method") for m in handed] == [m.get("method") for m in [*messages, after]]
    ours = [handed[0]["id"], handed[2]["id"]]
    assert sorted(ours) == sorted(early.expected)
    assert all(isinstance(i, str) and i.startswith("readkeeper-early-") for i in ours)
    assert handed[0]["params"] == messages[0]["params"]
    assert handed[3] == after
    os.close(w_out)
    replies = [json.loads(raw) for raw in os.read(r_out, 1 << 20).splitlines()]
    assert [r["id"] for r in replies] == [1, 2]
    for fd in (r_in, r_out):
        os.close(fd)
