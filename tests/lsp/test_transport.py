"""The frame reader and message checks, in-process: every way a frame can be wrong ends
in an event, and a well-formed frame after any of them is read intact."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from readkeeper.lsp.framing import BadFrame, Event, Frame, FrameReader, Junk, StreamBroken
from readkeeper.lsp.messages import RpcError, parse_message
from readkeeper.lsp.transport import Connection
from readkeeper.message_cap import recover_id

REQUEST = b'{"jsonrpc":"2.0","id":7,"method":"readkeeper/stats","params":{}}'
GOOD = b'{"jsonrpc":"2.0","id":8,"method":"readkeeper/read","params":{"file_path":"a"}}'


def framed(body: bytes, header: bytes = b"") -> bytes:
    return b"Content-Length: %d\r\n%s\r\n" % (len(body), header) + body


def feed_all(
    data: bytes, chunks: list[int] | None = None, reader: FrameReader | None = None
) -> list[Event]:
    """`data` fed in pieces of the given sizes (the rest in one piece)."""
    reader = reader or FrameReader()
    events: list[Event] = []
    pos = 0
    for size in chunks or []:
        events += reader.feed(data[pos : pos + size])
        pos += size
    events += reader.feed(data[pos:])
    return events


def frames(events: list[Event]) -> list[bytes]:
    return [e.body for e in events if isinstance(e, Frame)]


# --- good frames --------------------------------------------------------------------------


def test_usual_frames_with_and_without_content_type() -> None:
    data = framed(REQUEST) + framed(
        GOOD, b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
    )
    assert feed_all(data) == [Frame(REQUEST), Frame(GOOD)]


def test_headers_in_any_order_and_case() -> None:
    data = b"content-type: x\r\ncontent-length:  %d \r\n\r\n" % len(GOOD) + GOOD
    assert feed_all(data) == [Frame(GOOD)]


def test_a_stray_blank_line_between_frames_is_harmless() -> None:
    assert feed_all(framed(REQUEST) + b"\r\n" + framed(GOOD)) == [Frame(REQUEST), Frame(GOOD)]


@given(st.lists(st.integers(min_value=0, max_value=40), max_size=30))
def test_any_chunking_reads_the_same_frames(chunks: list[int]) -> None:
    data = framed(REQUEST) + framed(GOOD) + framed(b"{}")
    reader = FrameReader()
    assert frames(feed_all(data, chunks, reader)) == [REQUEST, GOOD, b"{}"]
    assert not reader.pending


# --- bad frames ---------------------------------------------------------------------------


def test_too_short_reads_a_bad_body_then_skips_the_rest_to_the_next_frame() -> None:
    events = feed_all(b"Content-Length: 20\r\n\r\n" + REQUEST + framed(GOOD))
    assert events[0] == Frame(REQUEST[:20])
    assert isinstance(events[1], Junk)
    assert events[1].size == len(REQUEST) - 20
    assert events[2:] == [Frame(GOOD)]


def test_too_long_ends_where_the_next_frame_starts_without_waiting() -> None:
    reader = FrameReader()
    events = reader.feed(b"Content-Length: 900\r\n\r\n" + REQUEST + framed(GOOD))
    assert isinstance(events[0], BadFrame)
    assert events[0].body == REQUEST
    assert "900" in events[0].reason
    assert events[1:] == [Frame(GOOD)]
    assert not reader.pending


def test_too_long_that_the_next_frame_completes_is_still_cut_at_its_header() -> None:
    claimed = len(REQUEST) + 30  # ends inside the next frame's header or body
    events = feed_all(b"Content-Length: %d\r\n\r\n" % claimed + REQUEST + framed(GOOD))
    assert [type(e) for e in events] == [BadFrame, Frame]
    assert events[1] == Frame(GOOD)


def test_too_long_with_nothing_after_waits_then_gives_up() -> None:
    reader = FrameReader()
    assert reader.feed(b"Content-Length: 900\r\n\r\n" + REQUEST) == []
    assert reader.pending
    (event,) = reader.give_up()
    assert isinstance(event, BadFrame)
    assert recover_id(event.body) == 7
    assert not reader.pending


@pytest.mark.parametrize("length", [b"1000000000000", b"%d" % 2**70, b"9" * 5000])
def test_over_the_limit_is_skipped_and_its_start_kept(length: bytes) -> None:
    events = feed_all(b"Content-Length: " + length + b"\r\n\r\n" + REQUEST + framed(GOOD))
    assert isinstance(events[0], BadFrame)
    assert events[0].too_large
    assert recover_id(events[0].body) == 7
    assert events[1:] == [Frame(GOOD)]


def test_over_the_limit_with_an_honest_length_is_skipped_exactly() -> None:
    reader = FrameReader(max_body=100)
    body = b'{"id": 3, "pad": "' + b"x" * 500 + b'"}'
    events = feed_all(framed(body) + framed(b"{}"), [10, 7, 300, 1], reader)
    assert isinstance(events[0], BadFrame)
    assert recover_id(events[0].body) == 3
    assert events[1:] == [Frame(b"{}")]


@pytest.mark.parametrize(
    "header",
    [b"Content-Length: -5", b"Content-Length: 5x", b"Content-Length: ", b"Content-Type: text/json"],
)
def test_no_usable_length_takes_the_json_value_that_follows(header: bytes) -> None:
    reader = FrameReader()
    (event,) = reader.feed(header + b"\r\n\r\n" + REQUEST)
    assert isinstance(event, BadFrame)
    assert event.body == REQUEST
    assert reader.feed(framed(GOOD)) == [Frame(GOOD)]


@pytest.mark.parametrize(
    "header",
    [b"Content-Length: %d\n\n", b"Content-Length: %d\r\n\n", b"X: 1\nContent-Length: %d\r\n\r\n"],
)
def test_lf_only_headers_are_a_bad_frame_whose_body_is_kept(header: bytes) -> None:
    """The body's id is answered (LSP's header lines end in CR LF: it is not read)."""
    events = feed_all(header % len(REQUEST) + REQUEST + framed(GOOD))
    assert [type(e) for e in events] == [BadFrame, Frame]
    assert isinstance(events[0], BadFrame)
    assert events[0].body == REQUEST
    assert "LF alone" in events[0].reason
    assert events[1] == Frame(GOOD)


def test_a_control_character_in_the_length_is_a_bad_frame_whose_body_is_kept() -> None:
    events = feed_all(b"Content-Length: 4\x00\r\n\r\n" + REQUEST + framed(GOOD))
    assert events == [
        BadFrame("Content-Length b'4\\x00' is not a number of bytes", REQUEST),
        Frame(GOOD),
    ]


@pytest.mark.parametrize("extra", [b"X-Junk\r\n", b"X-Junk\r\nnot a header either\r\n"])
@pytest.mark.parametrize("chunks", [None, [1] * 120])
def test_a_block_with_its_length_is_read_by_it_whatever_lines_follow(
    extra: bytes, chunks: list[int] | None
) -> None:
    """Attack round 17: a line without a colon after Content-Length made the whole frame
    junk, so its id was never answered."""
    events = feed_all(framed(REQUEST, extra) + framed(GOOD), chunks)
    assert events == [Frame(REQUEST), Frame(GOOD)]


@pytest.mark.parametrize("size", [9_000, 70_000])
@pytest.mark.parametrize("first", [False, True])
@pytest.mark.parametrize("chunks", [None, [4096] * 20])
def test_a_header_block_past_the_cap_is_a_bad_frame_whose_body_is_kept(
    size: int, first: bool, chunks: list[int] | None
) -> None:
    """An extra header with a long value: the block is over MAX_HEADER, dropped up to its
    blank line (not held), and the body after it answered under its id. Before the
    Content-Length, the long line gives way to the frame that header starts."""
    long = b"X: " + b"a" * size + b"\r\n"
    length = b"Content-Length: %d\r\n" % len(REQUEST)
    block = long + length if first else length + long
    events = feed_all(block + b"\r\n" + REQUEST + framed(GOOD), chunks)
    if first:
        assert [type(e) for e in events] == [Junk, Frame, Frame], events
        assert events[1:] == [Frame(REQUEST), Frame(GOOD)]
        return
    assert [type(e) for e in events] == [BadFrame, Frame], events
    assert isinstance(events[0], BadFrame)
    assert events[0].body == REQUEST
    assert "header block over" in events[0].reason
    assert events[1] == Frame(GOOD)


def test_a_long_header_block_that_never_ends_gives_way_to_the_next_frame() -> None:
    events = feed_all(b"Content-Length: 5\r\nX: " + b"a" * 20_000 + b"\r\n" + framed(GOOD))
    assert events[-1] == Frame(GOOD)
    assert all(not isinstance(e, Frame) for e in events[:-1])


def test_a_long_header_block_is_bounded() -> None:
    reader = FrameReader(max_body=1000, max_junk=20_000)
    reader.feed(b"Content-Length: 5\r\nX: " + b"a" * 15_000)
    with pytest.raises(StreamBroken):
        reader.feed(b"a" * 10_000)


@pytest.mark.parametrize(
    "junk", [b"hello\r\n", b"\x00\xff", b"{}", b"Content-Length: 5", b"X: 1\r\n"]
)
def test_junk_before_a_frame_is_skipped(junk: bytes) -> None:
    events = feed_all(junk + framed(GOOD))
    assert events[-1] == Frame(GOOD)
    assert all(not isinstance(e, Frame) for e in events[:-1])


def test_a_header_block_that_never_ended_gives_way_to_the_next() -> None:
    events = feed_all(b"Content-Length: 10\r\n" + framed(GOOD))
    assert events[-1] == Frame(GOOD)


def test_junk_longer_than_any_frame_breaks_the_stream() -> None:
    reader = FrameReader(max_body=1000, max_junk=1000)
    reader.feed(b"garbage\r\n" + b"not a header, " * 70)  # under the limit: still hoping
    with pytest.raises(StreamBroken, match="without a Content-Length header"):
        reader.feed(b"not a header, " * 10)


def test_junk_memory_stays_bounded() -> None:
    reader = FrameReader()
    reader.feed(b"garbage\r\n")
    for _ in range(1000):
        reader.feed(b"x" * 1000)
    assert len(reader._buf) < 200


# --- any prefix, then two good frames -----------------------------------------------------

fragments = st.sampled_from(
    [
        b"Content-Length: ", b"content-length:", b"Content-Type: x", b"\r\n", b"\n", b"\r",
        b"0", b"5", b"20", b"-1", b"999", b"1000000000000", b"{", b"}", b'"id":', b"3",
        b'{"jsonrpc":"2.0","id":5,"method":"x"}', b"[", b"]", b"\xff", b" ", b":", b"junk",
    ]
)  # fmt: skip


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    prefix=st.lists(st.one_of(fragments, st.binary(max_size=12)), max_size=14).map(b"".join),
    chunks=st.lists(st.integers(min_value=1, max_value=64), max_size=8),
)
def test_after_any_prefix_the_second_of_two_good_frames_is_read(
    prefix: bytes, chunks: list[int]
) -> None:
    reader = FrameReader()
    events = feed_all(prefix + framed(REQUEST) + framed(GOOD), chunks, reader)
    assert events[-1] == Frame(GOOD)
    assert not reader.pending


# --- messages -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":7,"method":"m","params":{', 7),
        (b'{"id":"abc","method":', "abc"),
        (b'{"jsonrpc":"2.0","params":{"id":3},"method":"m"', None),  # not the request's
        (b'{"params":' + b"[" * 100_000, None),
        (b'{"jsonrpc":"2.0","id":7,"params":' + b"[" * 100_000, 7),
        (b'{"id":true}', None),
        (b'{"id":1.5}', None),
        (b"\xff\xfe", None),
        (b"[7]", None),
    ],
)
def test_recover_id(body: bytes, expected: Any) -> None:
    assert recover_id(body) == expected


@pytest.mark.parametrize(
    ("message", "code", "reply_to"),
    [
        (b"", -32700, None),
        (b"{", -32700, None),
        (b'{"jsonrpc":"2.0","id":4,"method":"m","params":{"p":"\xff"}}', -32700, 4),
        (
            b'{"jsonrpc":"2.0","id":4,"method":"m","params":'
            + b"[" * 100_000
            + b"]" * 100_000
            + b"}",
            -32700,
            4,
        ),
        (b"[1,2]", -32600, None),
        (b"null", -32600, None),
        (b'{"jsonrpc":"1.0","id":4,"method":"m"}', -32600, 4),
        (b'{"id":4,"method":"m"}', -32600, 4),
        (b'{"jsonrpc":"2.0","id":4}', -32600, 4),
        (b'{"jsonrpc":"2.0"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":4,"method":5}', -32600, 4),
        (b'{"jsonrpc":"2.0","id":[4],"method":"m"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":4,"method":"m","params":5}', -32600, 4),
        (b'{"jsonrpc":"2.0","id":4,"result":1,"error":{}}', -32600, 4),
    ],
)
def test_what_is_not_a_message_gets_an_error_reply(
    message: bytes, code: int, reply_to: Any
) -> None:
    parsed = parse_message(message)
    assert isinstance(parsed, RpcError)
    assert (parsed.code, parsed.id) == (code, reply_to)


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 1, "method": "m", "params": {}},
        {"jsonrpc": "2.0", "id": "x", "method": "m"},
        {"jsonrpc": "2.0", "method": "n", "params": None},
        {"jsonrpc": "2.0", "id": 1, "result": None},
        {"jsonrpc": "2.0", "id": None, "error": {"code": 1, "message": "m"}},
    ],
)
def test_messages(message: dict[str, Any]) -> None:
    assert parse_message(json.dumps(message).encode()) == message


# --- the connection -----------------------------------------------------------------------


class FakeEndpoint:
    def __init__(self) -> None:
        self.exit_code: int | None = None
        self.received: list[dict[str, Any]] = []
        self.errors: list[tuple[Any, int, str]] = []

    def receive(self, message: dict[str, Any]) -> None:
        self.received.append(message)
        if message.get("method") == "exit":
            self.exit_code = 0

    def send_error(self, msg_id: Any, code: int, message: str, kind: str) -> None:
        self.errors.append((msg_id, code, kind))

    def ended(self) -> int:
        return 1


async def test_connection_gives_up_on_a_stalled_frame_and_answers_its_id() -> None:
    endpoint = FakeEndpoint()
    done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    connection = Connection(endpoint, done, stall_timeout=0.05)
    connection.data_received(b"Content-Length: 900\r\n\r\n" + REQUEST)
    assert endpoint.errors == []
    async with asyncio.timeout(5):
        while not endpoint.errors:
            await asyncio.sleep(0.01)
    assert endpoint.errors == [(7, -32700, "bad_params")]
    connection.data_received(framed(GOOD))
    assert endpoint.received == [json.loads(GOOD)]


async def test_connection_ends_at_exit_and_ignores_what_follows() -> None:
    endpoint = FakeEndpoint()
    done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    connection = Connection(endpoint, done)
    connection.data_received(framed(b'{"jsonrpc":"2.0","method":"exit"}') + framed(GOOD))
    assert done.result() == 0
    assert len(endpoint.received) == 1


async def test_connection_end_of_input_mid_frame_is_an_error_exit() -> None:
    endpoint = FakeEndpoint()
    done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    connection = Connection(endpoint, done)
    connection.data_received(b"Content-Length: 100\r\n\r\n{")
    connection.eof_received()
    assert done.result() == 1
