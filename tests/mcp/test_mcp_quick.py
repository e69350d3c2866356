"""Quick reads answered from their stdin line (`readkeeper.mcp.quick`) send the very
bytes the SDK's handler sends for the same read (in the oldest and the newest version
reached by the initialize handshake, and in 2026-07-28, which has none), and every
request still gets exactly one reply.

`calls.quick` sends a read to the SDK when its file's name says image, PDF or
notebook, so the SDK's reply comes from the same read through a symlink named `.png`
(the target is the same text file, so the result is the same); for a refusal, from
the same request with a `_meta` entry the quick path leaves to the SDK. The `stats` tool counts the
reads answered from the line (`quick_reads`), so a test can tell which way a reply came.
"""

from __future__ import annotations

import json
import queue
import re
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from helpers import refused_reads, text_with_png_twin
from mcp_helpers import READKEEPER, mcp_env, private_runtime_dir

TEXT = "def café():\n    return '漢字 and 🙂'\n\nprint(café())\n" + "x = 1\n" * 40
LEGACY = ("2024-11-05", "2025-11-25")
MODERN = "2026-07-28"


class RawMcp:
    """`readkeeper mcp --standalone` over stdio, one JSON line per message, replies
    kept as the bytes the server wrote."""

    def __init__(self, workspace: Path, version: str) -> None:
        self.version = version
        self.stderr = (workspace.parent / "mcp-stderr.log").open("w+b")
        self.proc = subprocess.Popen(
            [*READKEEPER, "mcp", "--standalone", "--root", str(workspace)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=mcp_env(private_runtime_dir()),
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.replies: dict[str, list[bytes]] = {}
        self.last = b""  # the reply line `request` returned last, as written
        assert self.proc.stdout is not None
        threading.Thread(target=self._pump, args=(self.proc.stdout,), daemon=True).start()
        if version == MODERN:
            self.request("discover", "server/discover", {})
        else:
            info = {"name": "raw", "version": "0"}
            params = {"protocolVersion": version, "capabilities": {}, "clientInfo": info}
            reply = self.request("init", "initialize", params)
            assert reply["result"]["protocolVersion"] == version
            self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _pump(self, stdout: IO[bytes]) -> None:
        for line in stdout:
            self.lines.put(line)

    def send(self, message: dict[str, Any]) -> None:
        self.send_line(json.dumps(message).encode())

    def send_line(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def message(self, msg_id: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """A request as this version's client sends it."""
        if self.version == MODERN:
            meta = {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {},
            }
            params = {**params, "_meta": meta}
        return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}

    def request(self, msg_id: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.send(self.message(msg_id, method, params))
        return json.loads(self.reply_line(msg_id))

    def reply_line(self, msg_id: Any) -> bytes:
        """The next reply to `msg_id`, as written (waiting for it)."""
        key = json.dumps(msg_id)
        while not self.replies.get(key):
            line = self.lines.get(timeout=30)
            reply = json.loads(line)
            self.replies.setdefault(json.dumps(reply.get("id")), []).append(line)
        self.last = self.replies[key].pop(0)
        return self.last

    def read(self, msg_id: Any, **arguments: Any) -> dict[str, Any]:
        reply = self.request(msg_id, "tools/call", {"name": "read", "arguments": arguments})
        result: dict[str, Any] = reply["result"]
        return result

    def quick_reads(self, kind: str = "quick_reads") -> int:
        reply = self.request("stats", "tools/call", {"name": "stats", "arguments": {}})
        count: int = reply["result"]["structuredContent"][kind]
        return count

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        finally:
            self.proc.kill()
            self.stderr.close()


@pytest.fixture(params=[*LEGACY, MODERN])
def raw(request: pytest.FixtureRequest, workspace: Path) -> Iterator[RawMcp]:
    server = RawMcp(workspace, request.param)
    yield server
    server.close()


def load_token_table(raw: RawMcp, path: Path) -> None:
    """An estimate counts exactly: the first one loads the token table (by the SDK)."""
    assert raw.read("load", file_path=str(path), estimate=True)["structuredContent"]["type"] == (
        "estimate"
    )


def _one_name(reply: bytes) -> bytes:
    """A reply with the .png twin's name as the .py one's: a way on names the call as it
    was made (`the read tool with {"file_path": "café.png", ...}`)."""
    for spelled in ("café".encode(), b"caf\\u00e9"):
        reply = reply.replace(spelled + b".png", spelled + b".py")
    return reply


@pytest.mark.parametrize("msg_id", [7, "read-7"])
def test_quick_replies_are_the_bytes_the_sdk_sends(
    raw: RawMcp, workspace: Path, msg_id: int | str
) -> None:
    text = text_with_png_twin(workspace, TEXT)
    load_token_table(raw, text)
    quick = raw.quick_reads()

    def same_reply(arguments: dict[str, Any], kind: str) -> None:
        replies = []
        for name in ("café.png", "café.py"):  # the SDK's, then the quick one
            result = raw.read(msg_id, file_path=name, **arguments)
            assert result["structuredContent"]["type"] == kind, result
            replies.append(raw.last)
        assert _one_name(replies[0]) == replies[1]

    same_reply({"force": True}, "text")
    same_reply({}, "file_unchanged")  # both names are one file: its read-state
    same_reply({"offset": 2, "limit": 2, "force": True}, "text")
    same_reply({"offset": 2, "limit": 2}, "file_unchanged")
    same_reply({"estimate": True}, "estimate")
    assert raw.quick_reads() == quick + 5  # every .py read came the quick way


def test_quick_refusals_are_the_replies_the_sdk_sends(raw: RawMcp, workspace: Path) -> None:
    refused = refused_reads(workspace, TEXT)

    def replies(via_sdk: bool) -> list[bytes]:
        lines = []
        for kind, arguments in refused.items():
            message = raw.message(kind, "tools/call", {"name": "read", "arguments": arguments})
            if via_sdk:  # a `_meta` entry the quick path does not know: the SDK's
                meta = {**message["params"].get("_meta", {}), "example.com/via": "sdk"}
                message["params"] = {**message["params"], "_meta": meta}
            raw.send(message)
            result = json.loads(raw.reply_line(kind))["result"]
            assert result["isError"] is True
            assert result["structuredContent"]["error"]["data"]["kind"] == kind, result
            lines.append(raw.last)
        return lines

    load_token_table(raw, workspace / "module.py")
    quick = raw.quick_reads()
    by_sdk = replies(via_sdk=True)
    assert raw.quick_reads() == quick
    assert replies(via_sdk=False) == by_sdk
    assert raw.quick_reads() == quick + len(refused)
    assert b"suggestions" in by_sdk[0]


def test_only_plain_read_calls_are_taken_and_each_is_answered_once(
    raw: RawMcp, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("one\ntwo\n")
    load_token_table(raw, workspace / "a.txt")
    read = {"name": "read", "arguments": {"file_path": "a.txt", "force": True}}
    plain = raw.message("plain", "tools/call", read)
    others = {
        # Fields the quick path does not know: the SDK decides what they mean.
        "extra field": {**plain, "params": {**plain["params"], "task": {"ttl": 1000}}},
        "other meta": {**plain, "params": {**plain["params"], "_meta": {"custom/x": 1}}},
        "another version": {
            **plain,
            "params": {
                **plain["params"],
                "_meta": {"io.modelcontextprotocol/protocolVersion": "2025-06-18"},
            },
        },
        "not a read": raw.message("not a read", "tools/call", {"name": "stats", "arguments": {}}),
        # A line longer than a read's call ever is (a write's) is left to the SDK unparsed.
        "long line": raw.message(
            "long line",
            "tools/call",
            {"name": "read", "arguments": {**read["arguments"], "note": "x" * 70_000}},
        ),
        "a float id": {**plain, "id": 1.5},
    }
    before = raw.quick_reads()
    for msg_id, message in others.items():
        raw.send({**message, "id": message["id"] if msg_id == "a float id" else msg_id})
    raw.send({**plain, "id": "quick"})
    raw.send_line(b'{"jsonrpc": "2.0", "id": "broken", "method": "tools/call", "params": {')
    raw.send({**plain, "id": "quick again"})
    for msg_id in ["quick", "quick again", *(k for k in others if k != "a float id")]:
        reply = json.loads(raw.reply_line(msg_id))
        assert "result" in reply or "error" in reply, reply
    assert raw.quick_reads() == before + 2
    # The SDK dropped these two unanswered: the door answers each, once (malformed.py).
    assert json.loads(raw.reply_line("broken"))["error"]["code"] == -32700
    assert json.loads(raw.reply_line(None))["error"]["code"] == -32600  # the float id
    raw.request("last", "tools/call", {"name": "stats", "arguments": {}})
    # No reply left over: none came twice.
    assert all(not lines for lines in raw.replies.values()), raw.replies


NESTED_JS = "function f(){" * 18_000 + "}" * 18_000


def test_a_quick_read_that_turns_costly_leaves_the_event_loop(workspace: Path) -> None:
    # A text file within the caps looks quick, but this one turns into an outline (a
    # parse and a walk): sent back to back with a 3-line read, the small read's reply
    # must come first, and the outline must still come (from a worker thread).
    (workspace / "notes.txt").write_text("one\ntwo\nthree\nfour\n")
    (workspace / "deep.js").write_text(NESTED_JS)
    raw = RawMcp(workspace, LEGACY[-1])
    try:
        load_token_table(raw, workspace / "notes.txt")
        quick = raw.quick_reads()
        small = {"file_path": "notes.txt", "limit": 3, "force": True}
        raw.send(
            raw.message(
                "hostile", "tools/call", {"name": "read", "arguments": {"file_path": "deep.js"}}
            )
        )
        raw.send(raw.message("small", "tools/call", {"name": "read", "arguments": small}))
        first = json.loads(raw.lines.get(timeout=60))
        second = json.loads(raw.lines.get(timeout=60))
        assert [first["id"], second["id"]] == ["small", "hostile"]
        assert first["result"]["structuredContent"]["file"]["num_lines"] == 3
        assert second["result"]["structuredContent"]["type"] == "outline"
        assert raw.quick_reads() == quick + 1  # the small one; the outline, to a thread
        assert raw.quick_reads("thread_reads") == 1
    finally:
        raw.close()


BIG_MODULE = "".join(
    f"class Shape{i}:\n    def area(self, side):\n        return side * {i} + {i}\n\n\n"
    for i in range(900)
)


@pytest.mark.parametrize("version", [*LEGACY, MODERN])
def test_a_read_found_costly_on_the_loop_is_served_from_its_line_with_the_sdks_reply(
    workspace: Path, version: str
) -> None:
    # An outline read is taken from its line, found costly on the loop, and served on a
    # worker thread without going through the SDK: the reply is the SDK's, byte for
    # byte (each name read by a new server: both are first reads).
    path = text_with_png_twin(workspace, BIG_MODULE)
    replies = []
    for name in ("café.png", "café.py"):  # the SDK's, then the one from the line
        raw = RawMcp(workspace, version)
        try:
            load_token_table(raw, path)
            result = raw.read(7, file_path=name)
            assert result["structuredContent"]["type"] == "outline", result
            replies.append(raw.last)
            assert raw.quick_reads("thread_reads") == (name == "café.py")
        finally:
            raw.close()
    assert _one_name(replies[0]) == replies[1]


def test_a_lone_surrogate_escape_is_answered_bad_params(raw: RawMcp, workspace: Path) -> None:
    """Valid JSON the SDK's parser refuses (it would drop the line unanswered): answered
    here, naming the field, and the connection serves the next request."""
    (workspace / "a.txt").write_text("hi\n")
    message = raw.message(7, "tools/call", {"name": "read", "arguments": {"file_path": "X"}})
    raw.send_line(json.dumps(message).replace('"X"', '"\\udc80"').encode())
    reply = json.loads(raw.reply_line(7))
    assert reply["error"]["data"]["kind"] == "bad_params"
    assert reply["error"]["data"]["field"] == "file_path"
    assert "surrogate" in reply["error"]["message"]
    # A pair is a character, not a lone half: served as usual (not found).
    paired = raw.message(8, "tools/call", {"name": "read", "arguments": {"file_path": "X"}})
    raw.send_line(json.dumps(paired).replace('"X"', '"\\ud83d\\ude42.txt"').encode())
    assert "error" not in json.loads(raw.reply_line(8))
    assert "hi" in json.dumps(raw.read(9, file_path=str(workspace / "a.txt")))
    # An entry of a list that is no batch read's: the whole call, the entry named.
    forget = raw.message(10, "tools/call", {"name": "forget", "arguments": {"paths": ["a", "X"]}})
    raw.send_line(json.dumps(forget).replace('"X"', '"\\ud800"').encode())
    assert json.loads(raw.reply_line(10))["error"]["data"]["field"] == "paths[1]"


def test_quick_edits_are_the_replies_the_sdk_sends(raw: RawMcp, workspace: Path) -> None:
    """A plain `edit` is served from its line on a worker thread (quick.py's `later`):
    its reply, and its refusal's, are the SDK's for the same edit of a twin file."""
    for name in ("sdk.py", "line.py"):
        (workspace / name).write_text(TEXT)
        raw.read(name, file_path=name)
    load_token_table(raw, workspace / "sdk.py")

    def reply(name: str, msg_id: str, **arguments: Any) -> bytes:
        message = raw.message(
            msg_id, "tools/call", {"name": "edit", "arguments": {"file_path": name, **arguments}}
        )
        if name == "sdk.py":  # a `_meta` entry the quick path does not know: the SDK's
            meta = {**message["params"].get("_meta", {}), "example.com/via": "sdk"}
            message["params"] = {**message["params"], "_meta": meta}
        raw.send(message)
        line = raw.reply_line(msg_id).replace(b"sdk.py", b"line.py")
        return re.sub(rb'"mtime_ns":\d+', b'"mtime_ns":0', line)  # each file's own

    def stats() -> dict[str, int]:
        result = raw.request("stats", "tools/call", {"name": "stats", "arguments": {}})
        return result["result"]["structuredContent"]

    before = stats()
    changed = {"old_string": "x = 1\nx = 1\nx = 1\n" * 13, "new_string": "y = 2\n"}
    for arguments in (
        {"old_string": "return", "new_string": "yield"},
        changed,
        {"old_string": "not in the file", "new_string": "z"},
    ):
        by_sdk = reply("sdk.py", "edit", **arguments)
        assert reply("line.py", "edit", **arguments) == by_sdk
    assert b'"isError":true' in by_sdk
    assert (workspace / "sdk.py").read_bytes() == (workspace / "line.py").read_bytes()
    after = stats()
    assert (after["quick_edits"], after["quick_reads"]) == (
        before["quick_edits"] + 3,
        before["quick_reads"],
    )


def test_a_quick_edit_is_answered_before_the_server_ends(workspace: Path) -> None:
    """An edit served on a worker thread is in flight like one the SDK holds: stdin
    closed right after it, its reply still comes, and the file is changed once."""
    (workspace / "a.py").write_text("one = 1\n")
    raw = RawMcp(workspace, LEGACY[-1])
    try:
        raw.read("first", file_path="a.py")
        arguments = {"file_path": "a.py", "old_string": "one = 1", "new_string": "two = 2"}
        raw.send(raw.message("edit", "tools/call", {"name": "edit", "arguments": arguments}))
        assert raw.proc.stdin is not None
        raw.proc.stdin.close()
        reply = json.loads(raw.reply_line("edit"))
        assert reply["result"]["isError"] is False
        assert raw.proc.wait(timeout=30) == 0
        assert (workspace / "a.py").read_text() == "two = 2\n"
    finally:
        raw.proc.kill()
        raw.stderr.close()


def test_many_reads_found_costly_at_once_are_each_answered_once(workspace: Path) -> None:
    # Sent back to back, more than the requests in flight stdin is read for: each is
    # served on a worker thread from its line, answered once, none lost.
    (workspace / "big.py").write_text(BIG_MODULE)
    raw = RawMcp(workspace, LEGACY[-1])
    try:
        load_token_table(raw, workspace / "big.py")
        calls = 150  # over MAX_IN_FLIGHT (64): stdin waits for answers
        for number in range(calls):
            arguments = {"file_path": "big.py", "session": f"agent-{number}"}
            raw.send(raw.message(number, "tools/call", {"name": "read", "arguments": arguments}))
        for number in range(calls):
            reply = json.loads(raw.reply_line(number))
            assert reply["result"]["structuredContent"]["type"] == "outline", reply
        assert raw.quick_reads("thread_reads") == calls
        assert all(not lines for lines in raw.replies.values()), raw.replies
    finally:
        raw.close()
