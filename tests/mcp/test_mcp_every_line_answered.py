"""Every line a client sends over MCP stdio is answered (attack rounds 21-22): a line the
SDK's reader refuses (a raw carriage return or other control character in a string, text
that is not JSON, JSON that is not a JSON-RPC message) was dropped unanswered, and the
client waited for good. Now the door answers it as the LSP front end answers such a
body: a parse error (-32700) or an invalid request (-32600), under the request's id when
it can be read, else null; blank lines (a lone carriage return between messages, a
`\\r\\n` ending) are no messages and are skipped; and the next line is served."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from test_mcp_message_cap import hello, serve

from mcp_helpers import exchange as stdio_exchange
from readkeeper.mcp.malformed import refusal


def call(msg_id: int, path: bytes) -> bytes:
    arguments = b'{"file_path":"' + path + b'"}'
    params = b'{"name":"read","arguments":' + arguments + b"}"
    return b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}' % (msg_id, params)


# Each line the SDK dropped unanswered, with the code it gets and the id it is answered under.
REFUSED: list[tuple[bytes, int, int | None]] = [
    (call(10, b"a\rb") + b"\n", -32700, 10),  # a raw carriage return in a string
    (call(11, b"a\x01b") + b"\n", -32700, 11),
    (call(12, b"a\x00b") + b"\n", -32700, 12),
    (call(13, b"a\tb") + b"\n", -32700, 13),
    (call(14, b"a\x1fb") + b"\n", -32700, 14),
    (call(15, b"a\nb")[:60] + b"\n", -32700, 15),  # a raw newline cuts the line
    (b'{"jsonrpc":"2.0","id":16,"method":"ping"} trailing\n', -32700, 16),
    (b'{"jsonrpc":"2.0","id":17}\n', -32600, 17),
    (b'{"jsonrpc":"2.0","id":18,"method":5}\n', -32600, 18),
    (b'{"jsonrpc":"1.0","id":19,"method":"ping"}\n', -32600, 19),
    (b'{"jsonrpc":"2.0","id":20,"method":"ping","params":[]}\n', -32600, 20),
    (b'{"jsonrpc":"2.0","id":21,"method":"ping","params":"x"}\n', -32600, 21),
    (b"{bad json\n", -32700, None),
    (b"[1,2]\n", -32600, None),
    # A batch: each request in it answered under its id (it was one error under null).
    (b'[{"jsonrpc":"2.0","id":23,"method":"ping"},{"jsonrpc":"2.0","method":"x"}]\n', -32600, 23),
    (b'"x"\n', -32600, None),
    (b'{"jsonrpc":"2.0","id":22.5,"method":"ping"}\n', -32600, None),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}\n', -32600, None),
    (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}\n', -32600, None),
    # Numbers no JSON holds, which the SDK's parser reads (attack round 23: they killed
    # the server, re-read by a parser that refuses them).
    (b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}\n', -32600, None),
    (b'{"jsonrpc":"2.0","id":Infinity,"method":"ping"}\n', -32600, None),
    (b'{"jsonrpc":"2.0","id":-Infinity,"method":"ping"}\n', -32600, None),
    (b'{"jsonrpc":"2.0","id":1e400,"method":"ping"}\n', -32600, None),
    (b'{"id":NaN,"jsonrpc":"2.0","method":"ping"}\n', -32600, None),
]
# Lines served as they are: JSON white space around a message, escapes, U+2028/U+2029.
SERVED = [
    b"\r" + call(30, b"a.txt") + b"\r\n",
    b"\r\n",  # a lone \r between messages: a blank line, skipped
    b" \t\r\n",
    b"\n",
    call(31, b"a\\rb") + b"\n",
    call(32, "a\u2028b\u2029".encode()) + b"\n",
]


def _exchange(workspace: Path, tmp_path: Path, stdin_kind: str) -> list[dict[str, Any]]:
    (workspace / "a.txt").write_text("hi\n")
    lines = [hello()]
    for line, _, _ in REFUSED:
        lines.append(line)
    lines.extend(SERVED)
    lines.append(b'{"jsonrpc":"2.0","id":99,"method":"ping"}\n')
    if stdin_kind == "pipe":
        server = serve(workspace)
        assert server.stdin is not None
        server.stdin.write(b"".join(lines))
        server.stdin.close()  # the server answers every line read, then ends
    else:
        requests = tmp_path / "requests.jsonl"
        requests.write_bytes(b"".join(lines))
        with requests.open("rb") as stdin:
            server = serve(workspace, stdin)
    assert server.stdout is not None
    try:
        answers = [json.loads(raw) for raw in server.stdout]
        assert server.wait() == 0
    finally:
        server.kill()
        server.wait()
    return answers


@pytest.mark.parametrize("stdin_kind", ["pipe", "file"])
def test_every_line_the_sdk_refuses_is_answered_and_the_next_served(
    workspace: Path, tmp_path: Path, stdin_kind: str
) -> None:
    answers = _exchange(workspace, tmp_path, stdin_kind)
    by_id = {answer.get("id"): answer for answer in answers}
    for line, code, msg_id in REFUSED:
        if msg_id is None:
            continue
        assert msg_id in by_id, line
        assert by_id[msg_id]["error"]["code"] == code, (line, by_id[msg_id])
        assert by_id[msg_id]["error"]["data"]["kind"] == "bad_params"
    unnamed = [answer for answer in answers if answer.get("id") is None]
    assert len(unnamed) == sum(1 for _, _, msg_id in REFUSED if msg_id is None)
    assert sorted(answer["error"]["code"] for answer in unnamed) == sorted(
        code for _, code, msg_id in REFUSED if msg_id is None
    )
    assert "hi" in json.dumps(by_id[30]["result"])
    for msg_id in (31, 32):
        assert "not_found" in json.dumps(by_id[msg_id]["result"]), by_id[msg_id]
    assert by_id[99]["result"] == {}
    # One answer a line: the blank lines got none, and nothing was answered twice.
    assert len(answers) == 1 + len(REFUSED) + 3 + 1


def test_a_raw_control_character_is_named_in_the_refusal() -> None:
    reply = refusal(call(10, b"a\rb") + b"\n")
    assert reply is not None
    error = json.loads(reply)["error"]
    assert "control character" in error["message"], error
    assert refusal(call(10, b"a\\rb") + b"\n") is None
    assert refusal(b"\r\n") is None


def test_an_http_body_the_sdk_refuses_is_answered_under_its_id(workspace: Path) -> None:
    # The SDK answered these 400 under a null id, and a request whose id is `true` or
    # 2.5 202 (taken for a notification): the same rule as stdio, before its parser.
    from mcp_raw_http import exchange
    from test_mcp_http_shape import http_session, raw_post

    with http_session(workspace) as (address, head):
        for line, code, msg_id in REFUSED[:12] + REFUSED[-3:]:
            status, _, answer = exchange(address, raw_post(head, line.rstrip(b"\n")))
            assert status == 400, (line, answer)
            error = json.loads(answer)
            assert (error["id"], error["error"]["code"]) == (msg_id, code), (line, error)
            assert error["error"]["data"]["kind"] == "bad_params"


@pytest.mark.parametrize(
    ("tools", "name", "field"),
    [(None, "read_many", "file_paths"), ("filesystem", "read_multiple_files", "paths")],
)
def test_a_lone_surrogate_in_one_batch_entry_is_refused_alone(
    workspace: Path, tools: str | None, name: str, field: str
) -> None:
    # The SDK's parser drops a line holding a lone surrogate escape whole: the door sent
    # the whole call back refused (attack round 23), where one bad entry fails alone.
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "b.txt").write_text("beta\n")
    entries = b'["a.txt","x\\ud800y.txt","b.txt","\\udcff"]'
    arguments = b'{"%s":%s}' % (field.encode(), entries)
    params = b'{"name":"%s","arguments":%s}' % (name.encode(), arguments)
    request = b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":%s}' % params
    extra = ["--tools", tools] if tools else []
    answers = stdio_exchange(workspace, [request + b"\n"], *extra)
    result = answers[5]["result"]
    shown = json.dumps(result)
    assert "alpha" in shown, shown
    assert "beta" in shown, shown
    assert "lone UTF-16 surrogate" in shown, shown
    assert f"{field}[1]" in shown or "file_paths[1]" in shown, shown


def test_over_http_a_lone_surrogate_is_refused_as_on_stdio(workspace: Path) -> None:
    # Attack round 24: the HTTP door said "not a JSON-RPC 2.0 message" for the whole
    # call, naming nothing, where stdio refuses the batch's entry alone and names a field.
    from mcp_raw_http import exchange
    from test_mcp_http_shape import http_session, raw_post

    (workspace / "a.txt").write_text("alpha\n")
    batch = b'{"name":"read_many","arguments":{"file_paths":["a.txt","x\\ud800y"]}}'
    single = b'{"name":"forget","arguments":{"paths":["a.txt","x\\udc00"]}}'
    with http_session(workspace) as (address, head):
        body = b'{"jsonrpc":"2.0","id":40,"method":"tools/call","params":%s}' % batch
        status, _, answer = exchange(address, raw_post(head, body))
        assert status == 200, answer
        assert b"alpha" in answer
        assert b"file_paths[1]" in answer
        assert b"lone UTF-16 surrogate" in answer
        body = b'{"jsonrpc":"2.0","id":41,"method":"tools/call","params":%s}' % single
        status, _, answer = exchange(address, raw_post(head, body))
        error = json.loads(answer)
        assert (status, error["id"], error["error"]["data"]["field"]) == (400, 41, "paths[1]")


def test_a_batch_entry_is_mended_whatever_numbers_sit_beside_it() -> None:
    # Attack round 24: a NaN elsewhere in the line left the entry unmended, so the whole
    # call was refused naming file_paths[1] rather than the number's own field.
    from readkeeper.mcp.unpaired import mend

    line = (
        b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_many",'
        b'"arguments":{"file_paths":["a.txt","x\\ud800"],"budget_tokens":NaN}}}\n'
    )
    mended = json.loads(mend(line))
    arguments = mended["params"]["arguments"]
    assert arguments["file_paths"][0] == "a.txt"
    assert arguments["file_paths"][1].startswith("\x00lone surrogate:")
    assert math.isnan(arguments["budget_tokens"])  # as it came, for the core to refuse


def test_each_request_of_a_batch_is_answered_under_its_id() -> None:
    line = b'[{"jsonrpc":"2.0","id":"b1","method":"ping"},{"jsonrpc":"2.0","id":2,"method":"x"}]'
    answered = refusal(line)
    assert answered is not None
    replies = [json.loads(one) for one in answered.splitlines()]
    assert [reply["id"] for reply in replies] == ["b1", 2]
    assert all(reply["error"]["code"] == -32600 for reply in replies)
    assert "send each request as a message of its own" in replies[0]["error"]["message"]


def test_over_http_a_batch_is_answered_with_a_reply_for_each_request(workspace: Path) -> None:
    from mcp_raw_http import exchange
    from test_mcp_http_shape import http_session, raw_post

    body = b'[{"jsonrpc":"2.0","id":"h1","method":"ping"},{"jsonrpc":"2.0","id":5,"method":"x"}]'
    with http_session(workspace) as (address, head):
        status, _, answer = exchange(address, raw_post(head, body))
    replies = json.loads(answer)  # JSON-RPC's array of replies to a batch
    assert status == 400
    assert [reply["id"] for reply in replies] == ["h1", 5]
    assert all(reply["error"]["code"] == -32600 for reply in replies)
