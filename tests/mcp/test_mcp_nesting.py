"""One bound on how deeply a message nests, at every front end's door (message_cap.py),
checked before any parser or walker sees it (attack round 12, a27/a28): over MCP stdio
a `tools/call` whose `file_path` nested 1,000 deep, a deep unknown argument, a deep
`_meta` or a `ping` with deep params were never answered (the SDK's parser gives up
past about 200 levels and drops the line), and a deep `force` was answered `internal`
(RecursionError). Now each is a parse error under its id, kind `bad_params`, as over
LSP, on the attach socket and in the core's own params check."""

from __future__ import annotations

import json
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest
import warm_server
from mcp import MCPError
from test_mcp_message_cap import Answers, hello

from mcp_helpers import mcp_env, private_runtime_dir, stdio_client
from readkeeper import calls
from readkeeper.attach import framing
from readkeeper.attach.listener import Listener
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.message_cap import MAX_NESTING, too_deep


def nested(depth: int) -> bytes:
    """JSON arrays nested `depth` levels."""
    return b"[" * depth + b"]" * depth


def call_line(msg_id: int, arguments: bytes, meta: bytes = b"") -> bytes:
    params = b'{"name":"read","arguments":' + arguments + meta + b"}"
    return b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}\n' % (msg_id, params)


DEEP = nested(1000)
# Each line the MCP SDK dropped unanswered, or answered `internal` (a27_deepjson2.py).
LINES = {
    "file_path_1000_deep": call_line(1, b'{"file_path":' + DEEP + b"}"),
    "unknown_argument_1000_deep": call_line(2, b'{"file_path":"a.txt","x":' + DEEP + b"}"),
    "unknown_argument_past_the_bound": call_line(
        3, b'{"file_path":"a.txt","x":' + nested(MAX_NESTING) + b"}"
    ),
    "force_1000_deep": call_line(4, b'{"file_path":"a.txt","force":' + DEEP + b"}"),
    "objects_1000_deep": call_line(
        5, b'{"file_path":"a.txt","x":' + b'{"a":' * 1000 + b"1" + b"}" * 1000 + b"}"
    ),
    "meta_1000_deep": call_line(6, b'{"file_path":"a.txt"}', b',"_meta":{"z":' + DEEP + b"}"),
    "ping_1000_deep": b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"z":' + DEEP + b"}}\n",
    "id_after_the_params": b'{"jsonrpc":"2.0","method":"ping","params":{"z":'
    + nested(90)
    + b'},"id":8}\n',
}


def raw_server(workspace: Path) -> subprocess.Popen[bytes]:
    """`readkeeper mcp` on `workspace`, spoken to in raw JSON-RPC lines (what the SDK's
    client cannot send); the caller kills it."""
    return subprocess.Popen(
        warm_server.command("mcp", "--standalone", "--root", str(workspace)),
        env=mcp_env(private_runtime_dir()),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


def test_every_deep_line_is_answered_under_its_id_and_the_next_served(workspace: Path) -> None:
    (workspace / "a.txt").write_text("hi\n")
    server = raw_server(workspace)
    assert server.stdin is not None
    assert server.stdout is not None
    answers = Answers(server.stdout)
    try:
        server.stdin.write(hello() + b"".join(LINES.values()))
        # At the bound exactly: served (the unknown argument is refused by name).
        server.stdin.write(
            call_line(20, b'{"file_path":"a.txt","x":' + nested(MAX_NESTING - 3) + b"}")
        )
        server.stdin.write(call_line(21, b'{"file_path":"a.txt","force":true}'))
        server.stdin.flush()
        for msg_id in range(1, 9):
            reply = answers.wait(msg_id)
            assert reply["error"]["code"] == -32700, reply
            assert reply["error"]["data"]["kind"] == "bad_params"
            assert f"nested too deeply (over {MAX_NESTING} levels" in reply["error"]["message"]
        at_the_bound = answers.wait(20)["result"]
        assert at_the_bound["isError"] is True
        assert "no parameter x" in at_the_bound["content"][0]["text"]
        assert "hi" in json.dumps(answers.wait(21)["result"])
    finally:
        server.kill()
        server.wait()


async def test_an_attached_agent_gets_the_same_answer(workspace: Path) -> None:
    from test_mcp_attach import editor

    (workspace / "a.txt").write_text("hi\n")
    runtime = private_runtime_dir()
    lsp, _ = await editor(workspace, runtime)
    try:
        async with stdio_client(["--root", str(workspace)], mcp_env(runtime)) as client:
            arguments: Any = "a.txt"
            for _ in range(100):
                arguments = [arguments]
            with pytest.raises(MCPError) as refused:
                await client.call_tool("read", {"file_path": "a.txt", "force": arguments})
            assert "nested too deeply" in str(refused.value)
            read = await client.call_tool("read", {"file_path": "a.txt"})
            assert not read.is_error
    finally:
        await lsp.client.close()


def test_a_deep_frame_on_the_attach_socket_is_bad_params_never_internal(
    listener: Listener,
) -> None:
    # 900 levels: orjson reads it (its limit is 1,024), the recursive walks after did not.
    body = b'{"id":1,"method":"read","params":{"file_path":"a.txt","force":' + nested(900) + b"}}"
    with framing_connection(listener) as sock:
        sock.sendall(struct.pack(">I", len(body)) + body)
        answer = framing.receive(sock)
        assert answer is not None
        assert answer["error"]["data"]["kind"] == "bad_params", answer
        assert "nested too deeply" in answer["error"]["message"]
        framing.send(sock, {"id": 2, "method": "stats", "params": {}})
        answer = framing.receive(sock)
        assert answer is not None
        assert answer["id"] == 2


def framing_connection(listener: Listener) -> Any:
    from test_attach_security import raw_connection

    return raw_connection(listener)


def test_the_core_refuses_deep_params_from_any_front_end_naming_the_field(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("hi\n")
    deep: Any = True
    for _ in range(5000):  # past Python's recursion limit: the CLI, or a caller of calls
        deep = [deep]
    for field in ("force", "file_path", "x"):
        with pytest.raises(ReadkeeperError) as refused:
            calls.call(core, "read", {"file_path": "a.txt", field: deep})
        assert refused.value.kind == "bad_params"
        assert refused.value.data["field"] == field
        assert f"more than {MAX_NESTING} levels deep" in refused.value.message


@pytest.mark.parametrize(
    ("text", "deep"),
    [
        (b'{"a":' + nested(MAX_NESTING - 1) + b"}", False),
        (b'{"a":' + nested(MAX_NESTING) + b"}", True),
        (b'{"a":"' + b"[" * 500 + b'"}', False),  # brackets in a string
        (b'{"a":"\\\\\\"' + b"[" * 500 + b'"}', False),  # after escaped \ and "
        (b'{"a":' + b"[" * 500, False),  # not JSON: the parser's to say
        (b'{"a":' + b"]" * 500 + b"[" * 500 + b"}", False),
        (b'{"a":' + b"[{}," * 80 + b"1" + b"]" * 80 + b"}", True),
        (b'{"a":[' + b"[]," * 500 + b"[]]}", False),  # wide, not deep
    ],
)
def test_the_bound_counts_arrays_and_objects_outside_strings(text: bytes, deep: bool) -> None:
    assert too_deep(text) is deep


def test_an_http_body_is_held_to_the_same_bound(workspace: Path) -> None:
    # Each bound at its edge over HTTP: test_mcp_http_shape.py.
    from mcp_raw_http import exchange
    from test_mcp_http_shape import http_session, raw_post

    (workspace / "a.txt").write_text("hi\n")
    with http_session(workspace) as (address, head):
        # 100 deep: under the SDK's own parser's limit, which took these.
        status, _, body = exchange(
            address,
            raw_post(
                head,
                call_line(5, b'{"file_path":"a.txt","force":' + nested(100) + b"}").rstrip(b"\n"),
            ),
        )
        assert status == 400
        error = json.loads(body)
        assert error["id"] == 5
        assert error["error"]["code"] == -32700
        assert error["error"]["data"]["kind"] == "bad_params"
        assert "nested too deeply" in error["error"]["message"]


def test_a_deep_first_request_is_refused_under_its_own_id_not_answered_early(
    workspace: Path,
) -> None:
    # The handshake answered while the SDK loads (early.py) took a deep initialize as
    # plain: answered it, then the door refused its copy under an id the client never sent.
    capabilities = b'{"experimental":{"x":' + nested(100) + b"}}"
    info = b'"clientInfo":{"name":"raw","version":"0"}'
    deep = b'{"protocolVersion":"2025-06-18","capabilities":%s,%s}' % (capabilities, info)
    plain = b'{"protocolVersion":"2025-06-18","capabilities":{},%s}' % info
    server = raw_server(workspace)
    assert server.stdin is not None
    assert server.stdout is not None
    try:
        for msg_id, params in ((0, deep), (1, plain)):
            request = b'{"jsonrpc":"2.0","id":%d,"method":"initialize","params":%s}\n'
            server.stdin.write(request % (msg_id, params))
        server.stdin.flush()
        first, second = json.loads(server.stdout.readline()), json.loads(server.stdout.readline())
        assert (first["id"], first["error"]["code"]) == (0, -32700), first
        assert second["id"] == 1
        assert second["result"]["serverInfo"]["name"] == "readkeeper"
    finally:
        server.kill()
        server.wait()


def test_the_words_for_nesting_met_past_the_recursion_limit_name_no_options() -> None:
    """What a file's nested content reads as, said as what it is, not as options named
    as words ("offset and limit": tests/test_ways_on.py)."""
    from readkeeper.errors import too_deep as refused_too_deep

    said = refused_too_deep("read").message
    assert said.startswith("read met something nested too deeply to follow"), said
    assert said.endswith("; a file's nested content reads as a range of lines."), said
