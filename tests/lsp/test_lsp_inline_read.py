"""Quick reads answered on the server's event loop (`ReadkeeperProtocol._read_inline`)
send the very bytes pygls' handler sends for the same read, and every request still
gets exactly one reply.

A read is served inline when `calls.quick` says so: a text file by its lines, its name
saying neither image, PDF nor notebook, once the token table is loaded. So the handler's
reply comes from the same read through a symlink named `.png` (the name sends it to
the handler, the target is the same text file, so the result is the same), or, for a
refusal, from the same request sent before the token table has loaded.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from raw_lsp import RawServer

from conftest import start_session
from helpers import BUTTONS, Prompted, refused_reads, text_with_png_twin
from readkeeper import calls
from readkeeper.core import Readkeeper

TEXT = "def café():\n    return '漢字 and 🙂'\n\nprint(café())\n" + "x = 1\n" * 40
READ = "readkeeper/read"


@pytest.fixture
def raw(workspace: Path) -> Iterator[RawServer]:
    server = RawServer()
    server.initialize(workspace)
    yield server
    server.close()


def token_table(raw: RawServer) -> str:
    state: str = raw.request("stats", "readkeeper/stats", {})["result"]["token_table"]
    return state


def load_token_table(raw: RawServer, path: Path) -> None:
    reply = raw.request("load", READ, {"file_path": str(path), "estimate": True})
    assert reply["result"]["type"] == "estimate", reply  # an estimate counts exactly
    assert token_table(raw) == "loaded"


def test_quick_reads_are_text_reads_once_the_token_table_is_loaded(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)])  # the token table not loaded yet
    read = {"file_path": "src/app.py", "offset": 3}
    assert not calls.quick(core, READ, read)  # the first count loads the table
    core.tokens.warm_up()
    assert calls.quick(core, READ, read)
    assert calls.quick(core, "read", read)  # the MCP tool's name
    assert not calls.quick(core, READ, [read])  # params that are not an object
    assert not calls.quick(core, READ, None)
    assert not calls.quick(core, READ, {"file_path": "shot.png"})
    assert not calls.quick(core, "readkeeper/edit", read)
    # A file too large to hold is read by scanning it: a range of it on the loop up to
    # a size, a whole read (its first page, and every line counted) never.
    (workspace / "held.log").write_bytes(b"x\n" * (core.settings.max_size_bytes // 2))
    (workspace / "big.log").write_bytes(b"x\n" * (core.settings.max_size_bytes // 2 + 1))
    (workspace / "huge.log").write_bytes(b"x\n" * (calls.QUICK_SCAN_BYTES // 2 + 1))
    assert calls.quick(core, READ, {"file_path": "held.log"})
    assert not calls.quick(core, READ, {"file_path": "big.log"})
    assert calls.quick(core, READ, {"file_path": "big.log", "offset": 9})
    assert calls.quick(core, READ, {"file_path": "big.log", "limit": 9})
    assert calls.quick(core, READ, {"file_path": "big.log", "offset": 9, "limit": None})
    (workspace / "big.log").write_bytes(b"x\n" * (calls.QUICK_SCAN_BYTES // 2))
    assert calls.quick(core, READ, {"file_path": "big.log", "offset": 9})
    assert not calls.quick(core, READ, {"file_path": str(workspace / "huge.log"), "offset": 9})
    assert not calls.quick(core, READ, {"file_path": "huge.log", "limit": 9})


@pytest.mark.parametrize("msg_id", [7, "read-7"])
def test_inline_replies_are_the_bytes_the_handler_sends(
    raw: RawServer, workspace: Path, msg_id: int | str
) -> None:
    text = text_with_png_twin(workspace, TEXT)
    load_token_table(raw, text)

    def same_reply(params: dict[str, Any], kind: str) -> None:
        replies = []
        for name in ("café.png", "café.py"):  # the handler's, then the inline one
            reply = raw.request(msg_id, READ, {"file_path": name, **params})
            assert reply["result"]["type"] == kind, reply
            replies.append(raw.frame_of(msg_id))
        assert replies[0] == replies[1]

    same_reply({"force": True}, "text")
    same_reply({}, "file_unchanged")  # both names are one file: its read-state
    same_reply({"offset": 2, "limit": 2, "force": True}, "text")
    same_reply({"offset": 2, "limit": 2}, "file_unchanged")
    same_reply({"estimate": True}, "estimate")
    frame = raw.frame_of(msg_id)
    header, _, body = frame.partition(b"\r\n\r\n")
    assert header.startswith(b"Content-Length: %d\r\n" % len(body))  # bytes, not characters


def test_inline_refusals_are_the_replies_the_handler_sends(raw: RawServer, workspace: Path) -> None:
    refused = refused_reads(workspace, TEXT)

    def replies() -> list[bytes]:
        frames = []
        for kind, params in refused.items():
            error = raw.request(kind, READ, params)["error"]
            assert error["data"]["kind"] == kind, error
            frames.append(raw.frame_of(kind))
        return frames

    assert token_table(raw) == "unloaded"  # the handler answers them all
    by_handler = replies()
    assert token_table(raw) == "unloaded"
    load_token_table(raw, workspace / "module.py")
    assert replies() == by_handler
    assert b"suggestions" in by_handler[0]


def test_an_inline_fault_is_the_internal_error_the_handler_sends(workspace: Path) -> None:
    inject = (
        "import readkeeper.core as core\n"
        "read = core.Readkeeper.read\n"
        "def broken(self, params):\n"
        "    if 'boom' in params.file_path: raise RuntimeError('injected fault')\n"
        "    return read(self, params)\n"
        "core.Readkeeper.read = broken\n"
        "from readkeeper.cli import main\n"
        "raise SystemExit(main(['serve']))\n"
    )
    server = RawServer(sys.executable, "-c", inject)
    try:
        server.initialize(workspace)
        (workspace / "ok.txt").write_text("still serving\n")
        load_token_table(server, workspace / "ok.txt")
        by_handler = server.request(2, READ, {"file_path": "boom.png"})["error"]
        assert by_handler["data"]["kind"] == "internal"
        frame = server.frame_of(2)
        assert server.request(2, READ, {"file_path": "boom.txt"})["error"] == by_handler
        assert server.frame_of(2) == frame
        reply = server.request(3, READ, {"file_path": "ok.txt"})
        assert reply["result"]["file"]["content"] == "     1\tstill serving"
    finally:
        server.close()
    assert server.stderr.count("RuntimeError: injected fault") >= 2  # each logged


async def test_a_read_outside_the_workspace_still_asks_the_user(
    workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("outside the roots\n")
    (workspace / "a.txt").write_text("inside\n")
    client = Prompted("Allow once")
    session = await start_session(workspace, client=client)
    try:
        await session.read("a.txt", estimate=True)  # loads the token table
        stats = await session.client.request("readkeeper/stats", {"session": ""})
        assert stats["token_table"] == "loaded"
        file = (await session.read(outside))["file"]
        assert file["content"] == "     1\toutside the roots"
        assert client.buttons() == [BUTTONS]
        stats = await session.client.request("readkeeper/stats", {"session": ""})
        # The refusal on the event loop was handed to the handler, not read again.
        assert stats["session"]["errors"] == {"outside_workspace": 1}
        await session.read(outside, force=True)  # the grant was used up...
        assert client.buttons() == [BUTTONS, BUTTONS]  # ...so the user is asked again
    finally:
        await client.close()


def test_every_read_is_answered_exactly_once(raw: RawServer, workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\ntwo\n")
    load_token_table(raw, workspace / "a.txt")
    cases: list[tuple[Any, Any, str | None]] = [
        (0, {"file_path": "a.txt"}, "text"),
        ("", {"file_path": "a.txt"}, "file_unchanged"),
        (2**53, {"file_path": "a.txt", "force": True}, "text"),
        (-1, {"file_path": "a.txt", "offset": 2}, "text"),
        ("list", ["a.txt"], None),  # params that are not an object
        ("none", None, None),
        ("number", {"file_path": 42}, None),
        # A parameter read does not have is refused, not ignored (attack 18, finding 5).
        ("extra field", {"file_path": "a.txt", "colour": "red", "force": True}, None),
    ]
    before = len(raw.seen_responses)
    for msg_id, params, _ in cases:
        raw.send({"id": msg_id, "method": READ, "params": params})
    # A read sent as a notification is not answered; a batch is not a message: each
    # request in it is refused under its own id.
    raw.notify(READ, {"file_path": "a.txt", "force": True})
    raw.send_bytes(json.dumps([{"jsonrpc": "2.0", "id": "batch", "method": READ}]).encode())
    expected = {json.dumps(msg_id) for msg_id, _, _ in cases} | {'"batch"'}
    # Inline replies go out at once, the handler's a little later: in any order.
    while len(raw.seen_responses) - before < len(expected):
        raw.response()
    raw.request("last", READ, {"file_path": "last.png"})  # by the handler: after the rest
    replies = {json.dumps(m["id"]): m for m in raw.seen_responses[before:-1]}
    assert len(replies) == len(raw.seen_responses[before:-1])  # none twice
    assert set(replies) == expected
    for msg_id, _, kind in cases:
        reply = replies[json.dumps(msg_id)]
        if kind is None:
            assert reply["error"]["data"]["kind"] == "bad_params", reply
        else:
            assert reply["result"]["type"] == kind, reply
    assert replies['"batch"']["error"]["code"] == -32600  # the batch: not a message


def test_an_inline_read_is_over_before_its_cancel_is_read(raw: RawServer, workspace: Path) -> None:
    """Which path served a read shows here: a read and its `$/cancelRequest` sent in one
    write are read together, so the handler's read is cancelled before it starts, while
    the inline one has been answered already (it is sub-millisecond: not worth a way to
    cancel it)."""
    (workspace / "a.txt").write_text("one\ntwo\n")
    (workspace / "a.png").symlink_to(workspace / "a.txt")
    load_token_table(raw, workspace / "a.txt")

    def read_then_cancel(msg_id: str, name: str) -> dict[str, Any]:
        read = {"jsonrpc": "2.0", "id": msg_id, "method": READ, "params": {"file_path": name}}
        cancel = {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": msg_id}}
        raw.send_raw(b"".join(framed(message) for message in (read, cancel)))
        reply: dict[str, Any] = raw.response(msg_id)
        return reply

    assert read_then_cancel("by handler", "a.png")["error"]["data"]["kind"] == "cancelled"
    assert read_then_cancel("inline", "a.txt")["result"]["type"] == "text"


def framed(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_a_file_name_that_is_not_utf8_is_answered(raw: RawServer, workspace: Path) -> None:
    """orjson refuses the lone surrogate that stands for its byte: that reply is written
    by the standard library, the byte as the escape text readkeeper names it with (never
    JSON's own lone-surrogate escape, which strict decoders refuse); that text, sent
    back, names the file, and so does the name itself."""
    (workspace / "ok.txt").write_text("ok\n")
    load_token_table(raw, workspace / "ok.txt")
    name = os.fsdecode(b"caf\xe9.txt")  # "caf\udce9.txt"
    (workspace / name).write_text("latin-1 name\n")
    shown = str(workspace / "caf\\udce9.txt")  # the escape, as text
    for id_, asked in ((2, name), (3, "caf\\udce9.txt")):
        reply = raw.request(id_, READ, {"file_path": asked, "force": True})
        assert reply["result"]["file"]["file_path"] == shown, reply
        assert reply["result"]["file"]["content"] == "     1\tlatin-1 name"
        assert b'caf\\\\udce9.txt"' in raw.frame_of(id_)
