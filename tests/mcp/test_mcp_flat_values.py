"""The nesting bound's sibling: how many values a message holds (message_cap.py,
`MAX_VALUES`), counted outside strings before any parser sees it, at every door (attack
round 13): a 30 MB MCP line whose unknown argument held 10 million empty objects took the
server to 2.65 GB (the SDK's parser made every object before the 10,000-entry list cap or
the unknown-parameter refusal could count), 31 s to answer. Now it is a parse error under
its id, kind `bad_params`, and the next request is served."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from peak_rss import vm_peak_mb
from test_mcp_message_cap import Answers, hello
from test_mcp_nesting import call_line, framing_connection, raw_server

from readkeeper.attach import framing
from readkeeper.attach.listener import Listener
from readkeeper.lsp.messages import RpcError, parse_message
from readkeeper.message_cap import MAX_VALUES, out_of_shape, recover_id

WORDS = f"too many values (over {MAX_VALUES:,}"


def empties(count: int) -> bytes:
    """A JSON array of `count` empty objects."""
    return b"[" + b",".join([b"{}"] * count) + b"]"


def test_a_flat_line_of_millions_of_values_is_refused_before_it_is_parsed(
    workspace: Path,
) -> None:
    (workspace / "a.txt").write_text("hi\n")
    server = raw_server(workspace)
    assert server.stdin is not None
    assert server.stdout is not None
    answers = Answers(server.stdout)
    try:
        server.stdin.write(hello())
        server.stdin.write(call_line(1, b'{"file_path":"a.txt","x":' + empties(5_000_000) + b"}"))
        server.stdin.write(call_line(2, b'{"file_path":"a.txt","force":true}'))
        server.stdin.flush()
        refused = answers.wait(1)
        assert refused["error"]["code"] == -32700, refused
        assert refused["error"]["data"]["kind"] == "bad_params"
        assert WORDS in refused["error"]["message"]
        assert "hi" in str(answers.wait(2)["result"])
        # Parsed, 5 million objects come to ~1.3 GB; refused first, the line's 15 MB and
        # the count over it stay within a few hundred MB.
        assert vm_peak_mb(server.pid) < 500
    finally:
        server.kill()
        server.wait()


def test_an_lsp_body_and_an_attach_frame_are_held_to_the_same_bound(
    listener: Listener,
) -> None:
    body = b'{"jsonrpc":"2.0","id":3,"method":"x","params":{"a":' + empties(MAX_VALUES) + b"}}"
    answer = parse_message(body)
    assert isinstance(answer, RpcError)
    assert (answer.id, answer.kind) == (3, "bad_params")
    assert WORDS in answer.message
    frame = b'{"id":1,"method":"read","params":{"file_path":"a.txt","x":' + empties(MAX_VALUES)
    frame += b"}}"
    with framing_connection(listener) as sock:
        sock.sendall(struct.pack(">I", len(frame)) + frame)
        said = framing.receive(sock)
        assert said is not None
        assert said["error"]["data"]["kind"] == "bad_params", said
        assert WORDS in said["error"]["message"]
        framing.send(sock, {"id": 2, "method": "stats", "params": {}})
        said = framing.receive(sock)
        assert said is not None
        assert said["id"] == 2


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        # {"a":[{},...]} holds n objects, n - 1 commas and 2 containers: 2n + 1 values.
        (b'{"a":' + empties((MAX_VALUES - 1) // 2) + b"}", False),
        (b'{"a":' + empties(MAX_VALUES // 2) + b"}", True),
        (b'{"a":"' + b"{}," * MAX_VALUES + b'"}', False),  # inside a string: text
        (b'{"a":"\\\\\\"' + b"[]," * MAX_VALUES + b'"}', False),  # after escaped \ and "
        (b'{"a":[' + b"1," * MAX_VALUES + b"1]}", True),  # scalars count by their commas
        (b'{"a":"' + b"{}," * MAX_VALUES, False),  # a string never ends: the parser's
    ],
)
def test_the_values_are_counted_outside_strings(text: bytes, refused: bool) -> None:
    assert (out_of_shape(text) is not None) is refused


def test_the_id_of_a_message_of_too_many_values_is_read_without_making_them() -> None:
    before = b'{"jsonrpc":"2.0","id":9,"params":' + empties(MAX_VALUES) + b"}"
    assert recover_id(before) == 9
    after = b'{"jsonrpc":"2.0","params":' + empties(MAX_VALUES) + b',"id":9}'
    assert recover_id(after) is None  # its params are not decoded to reach it
    small = b'{"jsonrpc":"2.0","params":' + empties(10) + b',"id":9'  # cut short
    assert recover_id(small) == 9
