"""A refused value is echoed as the JSON the client sent, in every front end: JSON's words
(null, true), integers exact (orjson read one past 64 bits as a float, so MCP's read
echoed 123456789012345678901234567890 as 123456789012345677877719597056), NaN and
Infinity as JSON-RPC parsers write them (Python's repr said None, True, nan, -inf). And a
request's own fields the SDK refuses (`_meta.progressToken`, `cursor`) are `bad_params`
naming the field, as a tool's arguments are (the SDK said "Invalid request parameters",
no field, no kind). Attack rounds 14-15."""

from __future__ import annotations

import math
import socket
from pathlib import Path
from typing import Any

import pytest

from mcp_helpers import exchange
from readkeeper.attach import framing
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import ReadParams, convert

HUGE = 123456789012345678901234567890


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (None, "got null"),
        (True, "got true"),
        (False, "got false"),
        (math.nan, "got NaN"),
        (math.inf, "got Infinity"),
        (-math.inf, "got -Infinity"),
        (HUGE, f"got {HUGE}"),
        ("x", 'got "x"'),
        (2.5, "got 2.5"),
        ([1, None], "got [1, null]"),
        ({"a": True}, 'got {"a": true}'),
    ],
)
def test_a_refused_value_is_echoed_as_json(value: Any, said: str) -> None:
    # An offset of null is no offset (the default); a file_path of "x" is a path.
    for params in ({"file_path": "a.txt", "offset": value}, {"file_path": value}):
        if (None in params.values() and "offset" in params) or params["file_path"] == "x":
            continue
        with pytest.raises(ReadkeeperError) as refused:
            convert.structure(params, ReadParams)
        assert said + "." in refused.value.message, refused.value.message


def test_a_huge_integer_crosses_the_attach_socket_exactly() -> None:
    left, right = socket.socketpair()
    with left, right:
        framing.send(left, {"params": {"arguments": {"offset": HUGE, "n": -(2**70)}}})
        got = framing.receive(right)
    assert got == {"params": {"arguments": {"offset": HUGE, "n": -(2**70)}}}


def _call(msg_id: int, tool: str, arguments: str, meta: str = "") -> bytes:
    params = f'{{"name":"{tool}","arguments":{arguments}{meta}}}'
    return f'{{"jsonrpc":"2.0","id":{msg_id},"method":"tools/call","params":{params}}}\n'.encode()


def _exchange(workspace: Path, lines: list[bytes]) -> dict[Any, dict[str, Any]]:
    (workspace / "a.txt").write_text("hi\n")
    return exchange(workspace, lines)


def _words(answer: dict[str, Any]) -> str:
    if "error" in answer:
        return str(answer["error"]["message"])
    return "".join(part.get("text", "") for part in answer["result"]["content"])


def test_mcp_echoes_what_was_sent(workspace: Path) -> None:
    by_id = _exchange(
        workspace,
        [
            _call(1, "read", f'{{"file_path":"a.txt","offset":{HUGE}}}'),
            _call(2, "grep", '{"pattern":"hi","context":-Infinity}'),
            _call(3, "read", '{"file_path":"a.txt","limit":NaN}'),
            _call(4, "read", '{"file_path":"a.txt","offset":true}'),
            _call(5, "read_many", '{"file_paths":["a.txt"],"budget_tokens":Infinity}'),
            _call(6, "read", '{"file_path":"a.txt","offset":"x"}'),
        ],
    )
    assert f"got {HUGE}." in _words(by_id[1]), by_id[1]
    assert "got -Infinity." in _words(by_id[2]), by_id[2]
    assert "got NaN." in _words(by_id[3]), by_id[3]
    assert "got true." in _words(by_id[4]), by_id[4]
    assert "got Infinity." in _words(by_id[5]), by_id[5]
    assert 'got "x".' in _words(by_id[6]), by_id[6]


@pytest.mark.parametrize(
    ("line", "field", "said"),
    [
        (
            _call(7, "read", '{"file_path":"a.txt"}', ',"_meta":{"progressToken":NaN}'),
            "progressToken",
            "NaN",
        ),
        (
            _call(7, "read", '{"file_path":"a.txt"}', ',"_meta":{"progressToken":1e400}'),
            "progressToken",
            "Infinity",
        ),
        (
            _call(7, "grep", '{"pattern":"hi"}', ',"_meta":{"progressToken":[1]}'),
            "progressToken",
            "[1]",
        ),
        (
            b'{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":1e400}}\n',
            "cursor",
            "Infinity",
        ),
        (
            b'{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":5}}\n',
            "cursor",
            "5",
        ),
    ],
)
def test_a_request_field_the_sdk_refuses_is_named(
    workspace: Path, line: bytes, field: str, said: str
) -> None:
    answer = _exchange(workspace, [line])[7]
    error = answer.get("error")
    assert error is not None, answer
    assert error["code"] == -32602
    assert error["data"]["kind"] == "bad_params", error
    assert error["data"]["field"].endswith(field), error
    assert field in error["message"]
    assert f"got {said}" in error["message"], error


@pytest.mark.parametrize(
    ("method", "said"),
    [("notifications/cancelled", "without an id"), ("teleport", "tools/list names the tools")],
)
def test_a_method_the_server_lacks_is_said_with_a_kind(
    workspace: Path, method: str, said: str
) -> None:
    line = f'{{"jsonrpc":"2.0","id":8,"method":"{method}","params":{{"requestId":3}}}}\n'
    error = _exchange(workspace, [line.encode()])[8]["error"]
    assert error["code"] == -32601
    assert error["data"]["kind"] == "unsupported", error
    assert said in error["message"], error
