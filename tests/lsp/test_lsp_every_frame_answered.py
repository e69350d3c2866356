"""Every LSP frame that carries an id is answered, whatever is wrong with it: a
notification's method sent as a request (`$/cancelRequest` with an id), a header block
with LF-only line ends or a control character in its length, a body whose id is not
an id. Bytes that are no header block at all (junk) carry no request: they are skipped
with the reason logged, and junk longer than any frame closes the connection with the
reason (tests/lsp/test_lsp_robustness.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from raw_lsp import RawServer

REQUEST = b'{"jsonrpc":"2.0","id":7,"method":"readkeeper/stats","params":{}}'


@pytest.fixture(scope="module")
def raw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawServer]:
    root = tmp_path_factory.mktemp("frames").resolve()
    server = RawServer()
    server.initialize(root)
    yield server
    server.close()


def answers_to(raw: RawServer, id_: object, next_id: int) -> list[dict[str, object]]:
    """The replies to `id_` once a later request was answered (the frames are read in
    order, so any reply still due is in by then)."""
    raw.seen_responses.clear()
    assert "result" in raw.request(next_id, "readkeeper/stats", {})
    return [r for r in raw.seen_responses if r.get("id") == id_]


@pytest.mark.parametrize(
    "method",
    [
        "$/cancelRequest",
        "$/setTrace",
        "$/progress",
        "initialized",
        "exit",
        "readkeeper/didChangeDiagnostics",  # was answered result null, params refused
    ],
)
def test_a_notification_sent_as_a_request_is_answered(raw: RawServer, method: str) -> None:
    raw.send({"id": 70, "method": method, "params": {"id": 3}})
    (reply,) = answers_to(raw, 70, 71)
    error = reply["error"]
    assert isinstance(error, dict)
    assert error["code"] == -32601, reply  # LSP: a `$/` request is MethodNotFound
    assert error["data"]["kind"] == "unsupported"
    assert f"{method} is a notification" in error["message"]
    assert "without an id" in error["message"]
    assert raw.alive  # `exit` sent as a request did not end the server


@pytest.mark.parametrize(
    "header",
    [
        b"Content-Length: %d\n\n",  # LF-only line ends
        b"Content-Length: %d\r\n\n",
        b"Content-Length: %d\x00\r\n\r\n",  # a NUL after the length
        b"Content-Length: %d\n",  # LF after the length, CR LF blank line
    ],
    ids=["lf_only", "crlf_then_lf", "nul_in_length", "lf_then_crlf"],
)
def test_a_header_block_readkeeper_cannot_take_still_answers_its_id(
    raw: RawServer, header: bytes
) -> None:
    if header.endswith(b"%d\n"):
        header += b"\r\n"
    raw.send_raw(header % len(REQUEST) + REQUEST)
    (reply,) = answers_to(raw, 7, 72)
    error = reply["error"]
    assert isinstance(error, dict)
    assert error["code"] == -32700, reply
    assert error["data"]["kind"] == "bad_params"


@pytest.mark.parametrize("extra", [b"X-Junk\r\n", b"Content-Type: x\r\nX-Junk\r\n"])
def test_a_header_line_without_a_colon_after_the_length_is_passed_over(
    raw: RawServer, extra: bytes
) -> None:
    # Attack round 17: the frame was skipped as junk after a 3 s wait, its id unanswered.
    raw.send_raw(b"Content-Length: %d\r\n%s\r\n" % (len(REQUEST), extra) + REQUEST)
    (reply,) = answers_to(raw, 7, 74)
    assert "result" in reply, reply


@pytest.mark.parametrize("size", [9_000, 70_000])
def test_a_header_block_past_the_cap_still_answers_its_id(raw: RawServer, size: int) -> None:
    long = b"X: " + b"v" * size + b"\r\n"
    raw.send_raw(b"Content-Length: %d\r\n%s\r\n" % (len(REQUEST), long) + REQUEST)
    (reply,) = answers_to(raw, 7, 75)
    error = reply["error"]
    assert isinstance(error, dict)
    assert error["code"] == -32700, reply
    assert "header block over" in error["message"]


def test_each_request_of_a_batch_is_answered_under_its_id(raw: RawServer) -> None:
    body = b'[{"jsonrpc":"2.0","id":"b1","method":"readkeeper/stats"},' + REQUEST + b"]"
    raw.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    raw.seen_responses.clear()
    assert "result" in raw.request(76, "readkeeper/stats", {})
    replies = {r.get("id"): r for r in raw.seen_responses if r.get("id") in ("b1", 7)}
    assert set(replies) == {"b1", 7}, raw.seen_responses
    for reply in replies.values():
        error = reply["error"]
        assert isinstance(error, dict)
        assert error["code"] == -32600
        assert "a message of its own" in error["message"]


def test_a_body_cut_short_whose_id_is_not_an_id_is_answered_with_a_null_id(
    raw: RawServer,
) -> None:
    body = b'{"jsonrpc":"2.0","id":Infinity,"method":"foo/x"}'
    raw.send_raw(b"Content-Length: %d\r\n\r\n" % (len(body) + 1) + body)
    (reply,) = answers_to(raw, None, 73)
    error = reply["error"]
    assert isinstance(error, dict)
    assert error["code"] == -32700, reply
    assert "Content-Length" in error["message"]


def test_a_nul_length_with_a_body_that_is_no_object_is_answered(raw: RawServer) -> None:
    raw.send_raw(b"Content-Length: 4\x00\r\n\r\nnull")
    (reply,) = answers_to(raw, None, 74)
    assert reply["error"]["code"] == -32700, reply  # type: ignore[index]


def test_junk_is_skipped_with_its_reason_logged(tmp_path: Path) -> None:
    server = RawServer()
    try:
        server.initialize(tmp_path.resolve())
        server.send_raw(b"hello there\r\n")
        assert answers_to(server, None, 75) == []
        server.send({"method": "exit"})
        server.wait_exit()
        assert "Skipped 13 bytes" in server.stderr
    finally:
        server.close()


@pytest.mark.parametrize(
    ("params", "said"),
    [
        ({"file_path": None}, "got null."),
        ({"file_path": "a.txt", "offset": True}, "got true."),
        (
            {"file_path": "a.txt", "offset": 123456789012345678901234567890},
            "got 123456789012345678901234567890.",
        ),
        ({"file_path": "a.txt", "limit": float("-inf")}, "got -Infinity."),
    ],
)
def test_a_refused_value_is_echoed_as_the_json_sent(
    raw: RawServer, params: dict[str, object], said: str
) -> None:
    reply = raw.request(76, "readkeeper/read", params)
    assert said in reply["error"]["message"], reply
