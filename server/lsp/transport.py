"""LSP's base protocol on a byte stream: `Content-Length` framed JSON-RPC, read so that
no input can leave the server alive and deaf.

pygls' reader (`pygls.io_.run_async`) trusts every header: one wrong `Content-Length`
and it waits forever for bytes that never come, or reads the next message as the tail
of this one, and it never answers a message it cannot read. This module replaces it:

- `FrameReader` cuts the stream into frames. It is sans-IO (bytes in, events out), so
  it is tested and fuzzed in-process. A header block must be CRLF-terminated
  `Name: value` lines with one `Content-Length` (0 <= length <= `MAX_BODY`); anything
  else is junk, skipped up to the next `Content-Length` header (resynchronising).
- `Connection` is the asyncio protocol that feeds it from a pipe or a socket, turns
  each frame into a JSON-RPC message or an error reply, hands messages to the
  `Endpoint` (readkeeper's pygls protocol), gives up on a frame the client stopped
  sending in the middle of (`STALL_TIMEOUT_S`), and ends the connection with LSP's
  exit code after `exit`, or with 1 and the reason on stderr when the stream is
  beyond repair (junk longer than any frame, or the end of input mid-frame).

Resynchronising rests on one fact: `Content-Length: <digits>` followed by a raw CR LF
never occurs inside valid JSON (outside strings JSON has no letters but in true, false
and null, and inside a string a raw CR is not allowed). So a frame whose declared body
contains such a header is certainly mis-framed, and the header is where the next
message starts: a too-long length is caught as soon as the next message arrives, with
no timeout, and a too-short one leaves junk that ends at the next header.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import threading
from collections.abc import Callable
from typing import Any, BinaryIO, NamedTuple, Protocol

log = logging.getLogger("readkeeper.lsp.transport")

# The largest body read into memory. A longer frame is skipped (its id, when it is near
# the start, still gets an error reply); junk longer than this cannot be the tail of a
# frame we would have read, so the stream is given up.
MAX_BODY = 64 * 1024 * 1024
MAX_JUNK = MAX_BODY
# A header block longer than this is junk (real ones are under 100 bytes).
MAX_HEADER = 8 * 1024
# Of a frame too large to read, the start kept to find its id.
KEEP_HEAD = 64 * 1024
# A frame left unfinished this long is given up (clients write a frame at once, so
# only a wrong Content-Length on the last message sent leaves one waiting).
STALL_TIMEOUT_S = 3.0

PARSE_ERROR = -32700
INVALID_REQUEST = -32600

MsgId = int | str

# A header that starts a frame (see the module docstring for why it cannot occur inside
# a valid body). Bounded, so a match is never longer than `_OVERLAP`.
_FRAME_START = re.compile(rb"content-length:[ \t]{0,8}\d{1,32}[ \t]{0,8}\r\n", re.IGNORECASE)
_OVERLAP = 96
# A Content-Length header name after other bytes on a line: a frame starts there.
_LENGTH_NAME = re.compile(rb"content-length:", re.IGNORECASE)
# What every client sends; the general parser handles the rest.
_USUAL_HEADER = re.compile(
    rb"Content-Length: (\d{1,9})\r\n(?:Content-Type: [^\r\n]{0,200}\r\n)?\r\n"
)
_TOKEN = rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]"
_HEADER_LINE = re.compile(rb"(%s+):[ \t]*([\t\x20-\x7e\x80-\xff]*?)[ \t]*" % _TOKEN)
# The start of a line that may still become a header once the rest arrives.
_HEADER_PREFIX = re.compile(rb"%s*(?::[\t\x20-\x7e\x80-\xff]*)?\r?" % _TOKEN)
_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


# --- framing ------------------------------------------------------------------------------


class Frame(NamedTuple):
    """A body as its header declared it (not yet known to be JSON)."""

    body: bytes


class BadFrame(NamedTuple):
    """A frame that cannot be read as declared. `body` is what there is of it (its start,
    when it was too large), from which the request id may be recovered."""

    reason: str
    body: bytes
    too_large: bool = False


class Junk(NamedTuple):
    """Bytes that are not part of any frame, skipped up to the next header."""

    reason: str
    size: int


Event = Frame | BadFrame | Junk


class StreamBroken(Exception):
    """The stream cannot be resynchronised: the connection must end."""


class FrameReader:
    """Cuts a byte stream into frames. `feed` returns what the new bytes complete;
    `give_up` ends an unfinished frame (no more bytes are coming for it)."""

    def __init__(self, max_body: int = MAX_BODY, max_junk: int = MAX_JUNK) -> None:
        self._max_body = max_body
        self._max_junk = max_junk
        self._buf = bytearray()
        # "headers", "body" (`_length` bytes), "unknown" (a header block without a usable
        # length: up to the next header or the end of a JSON value), "skip" (a body over
        # `max_body`) or "junk" (up to the next header).
        self._mode = "headers"
        self._length = 0
        self._reason = ""
        self._scanned = 0  # how much of `_buf` is known to hold no frame start
        self._head = bytearray()  # "skip": the start of the body
        self._skipped = 0  # "skip": bytes of the body consumed; "junk": bytes dropped
        self._steps = {
            "headers": self._headers,
            "body": self._body,
            "unknown": self._unknown,
            "skip": self._skip,
            "junk": self._junk,
        }

    @property
    def pending(self) -> bool:
        """In the middle of a frame (or of junk)."""
        return self._mode != "headers" or bool(self._buf)

    def feed(self, data: bytes) -> list[Event]:
        self._buf += data
        events: list[Event] = []
        while self._steps[self._mode](events):
            pass
        return events

    def give_up(self) -> list[Event]:
        """The rest of the frame in progress is not coming: report what there is of it."""
        buf, mode = self._buf, self._mode
        events: list[Event] = []
        if mode == "body":
            reason = f"Content-Length says {self._length} bytes, but only {len(buf)} came"
            events.append(BadFrame(reason, bytes(buf)))
        elif mode == "unknown":
            events.append(BadFrame(self._reason, bytes(buf)))
        elif mode == "skip":
            events.append(self._too_large())
        elif mode == "junk":
            events.append(Junk(self._reason, self._skipped + len(buf)))
        elif buf:
            events.append(Junk("an unfinished header", len(buf)))
        buf.clear()
        self._enter("headers")
        return events

    # --- the modes: each returns True when it made progress ---

    def _headers(self, events: list[Event]) -> bool:
        buf = self._buf
        if not buf:
            return False
        usual = _USUAL_HEADER.match(buf)
        if usual:
            length = int(usual[1])  # before the `del`: the match reads the buffer
            del buf[: usual.end()]
            self._start_body(length)
            return True
        pos, declared, problem = 0, None, ""
        while True:
            eol = buf.find(b"\r\n", pos)
            if eol < 0:
                if len(buf) > MAX_HEADER or not _HEADER_PREFIX.fullmatch(buf, pos):
                    return self._to_junk(pos, "bytes that are not an LSP header")
                return False  # the rest of the line is still coming
            if eol == pos:  # the blank line that ends the block
                del buf[: eol + 2]
                if pos == 0:
                    return True  # a stray blank line between frames: harmless
                if problem or declared is None:
                    self._enter("unknown", problem or "a message without a Content-Length header")
                else:
                    self._start_body(declared)
                return True
            line = buf[pos:eol]
            later = _LENGTH_NAME.search(line, 1)
            if later:  # a frame starts in the middle of the line: what precedes is junk
                start = pos + later.start()
                events.append(Junk("bytes before a Content-Length header", start))
                del buf[:start]
                return True
            header = _HEADER_LINE.fullmatch(line)
            if header is None or eol > MAX_HEADER:
                return self._to_junk(pos, f"not an LSP header line: {bytes(line[:40])!r}")
            if header[1].lower() == b"content-length":
                if declared is not None or problem:
                    # A second Content-Length: the block before it never ended.
                    events.append(Junk("a header block without its blank line", pos))
                    del buf[:pos]
                    return True
                value = header[2]
                if not value.isdigit():
                    problem = f"Content-Length {bytes(value[:40])!r} is not a number of bytes"
                else:
                    # Longer than 18 digits is over any cap (and `int` refuses 4,300).
                    declared = int(value) if len(value) <= 18 else 10**18
            pos = eol + 2

    def _start_body(self, length: int) -> None:
        if length > self._max_body:
            self._head.clear()
            self._skipped = 0
            self._enter("skip")
        else:
            self._enter("body")
        self._length = length

    def _body(self, events: list[Event]) -> bool:
        buf, length = self._buf, self._length
        if len(buf) >= length:
            # A frame that starts before the declared end (with the overlap: it may end
            # after it) means the declared length was wrong.
            start = self._frame_start(0, min(len(buf), length + _OVERLAP))
            if start is not None and start < length:
                events.append(BadFrame(self._stopped(start, length), bytes(buf[:start])))
                del buf[:start]
            else:
                events.append(Frame(bytes(buf[:length])))
                del buf[:length]
            self._enter("headers")
            return True
        # Still coming: a frame starting in what came so far means it never will.
        start = self._frame_start(max(0, self._scanned - _OVERLAP))
        self._scanned = len(buf)
        if start is None:
            return False
        events.append(BadFrame(self._stopped(start, length), bytes(buf[:start])))
        del buf[:start]
        self._enter("headers")
        return True

    def _unknown(self, events: list[Event]) -> bool:
        buf = self._buf
        start = self._frame_start(max(0, self._scanned - _OVERLAP))
        self._scanned = len(buf)
        if start is None and len(buf) <= KEEP_HEAD and buf.endswith(b"}"):
            start = json_end(buf)  # a whole JSON object with no next frame behind it yet
        if start is None:
            if len(buf) > self._max_body:
                return self._to_junk(0, self._reason)
            return False
        events.append(BadFrame(self._reason, bytes(buf[:start])))
        del buf[:start]
        self._enter("headers")
        return True

    def _skip(self, events: list[Event]) -> bool:
        buf = self._buf
        remaining = self._length - self._skipped
        start = self._frame_start(0)
        if start is not None and start < remaining:
            self._consume(start)
        elif len(buf) >= remaining:
            self._consume(remaining)
        else:
            # Keep a tail that may hold the start of a frame header.
            self._consume(max(0, len(buf) - _OVERLAP))
            return False
        events.append(self._too_large())
        self._enter("headers")
        return True

    def _junk(self, events: list[Event]) -> bool:
        buf = self._buf
        start = self._frame_start(self._scanned)
        if start is not None:
            events.append(Junk(self._reason, self._skipped + start))
            del buf[:start]
            self._enter("headers")
            return True
        # No frame starts before the last `_OVERLAP` bytes: drop what precedes them.
        cut = len(buf) - _OVERLAP
        if cut > self._scanned:
            del buf[:cut]
            self._skipped += cut
            self._scanned = 0
        if self._skipped > self._max_junk:
            raise StreamBroken(
                f"{self._skipped} bytes without a Content-Length header ({self._reason}): "
                "the client is not speaking LSP"
            )
        return False

    # --- helpers ---

    def _enter(self, mode: str, reason: str = "") -> None:
        self._mode = mode
        self._reason = reason
        self._scanned = 0

    def _to_junk(self, pos: int, reason: str) -> bool:
        """Junk from `pos`: scan for a frame after it (never at it, or we loop)."""
        del self._buf[:pos]
        self._enter("junk", reason)
        self._skipped = pos
        self._scanned = 1
        return True

    def _frame_start(self, start: int, end: int | None = None) -> int | None:
        """Where a frame header starts in `_buf[start:end]`. The pattern ends in CR LF,
        so bodies without one (most) cost one `find`."""
        buf = self._buf
        stop = len(buf) if end is None else end
        if buf.find(b"\r\n", start, stop) < 0:
            return None
        found = _FRAME_START.search(buf, start, stop)
        return found.start() if found else None

    def _consume(self, size: int) -> None:
        keep = KEEP_HEAD - len(self._head)
        if keep > 0:
            self._head += self._buf[: min(size, keep)]
        del self._buf[:size]
        self._skipped += size

    def _too_large(self) -> BadFrame:
        reason = f"a message of {self._length} bytes, over the {self._max_body}-byte limit"
        return BadFrame(reason, bytes(self._head), too_large=True)

    @staticmethod
    def _stopped(got: int, length: int) -> str:
        return f"Content-Length says {length} bytes, but the message ended after {got}"


def json_end(data: bytes | bytearray) -> int | None:
    """The byte offset just past one whole JSON value (and the whitespace after it) at
    the start of `data`, or None when there is none (yet)."""
    text = bytes(data).decode("utf-8", "surrogateescape")
    try:
        _, end = _DECODER.raw_decode(text, _skip_space(text, 0))
    except (ValueError, RecursionError):
        return None
    return len(text[: _skip_space(text, end)].encode("utf-8", "surrogateescape"))


def _skip_space(text: str, pos: int) -> int:
    space = _SPACE.match(text, pos)  # a regex: a hostile body may be megabytes of spaces
    return space.end() if space else pos


# --- messages -----------------------------------------------------------------------------


class RpcError(NamedTuple):
    """A frame that is not a JSON-RPC message: the error reply it gets."""

    code: int
    message: str
    id: MsgId | None
    kind: str = "bad_params"


def is_id(value: Any) -> bool:
    """LSP's request id: an integer or a string (JSON-RPC's null is not one)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def recover_id(body: bytes) -> MsgId | None:
    """The top-level `id` of a message that does not parse as a whole, when the members
    before it do: so a request cut short, or sent with a wrong length, still gets its one
    reply. Only top-level members count (an `id` inside params is not the request's)."""
    text = body.decode("utf-8", "surrogateescape")
    pos = _skip_space(text, 0)
    if text[pos : pos + 1] != "{":
        return None
    try:
        while True:
            key, pos = _DECODER.raw_decode(text, _skip_space(text, pos + 1))
            pos = _skip_space(text, pos)
            if not isinstance(key, str) or text[pos : pos + 1] != ":":
                return None
            value, pos = _DECODER.raw_decode(text, _skip_space(text, pos + 1))
            if key == "id":
                return value if is_id(value) else None
            pos = _skip_space(text, pos)
            if text[pos : pos + 1] != ",":
                return None
    except (ValueError, RecursionError):
        return None


def parse_message(body: bytes) -> dict[str, Any] | RpcError:
    """A frame's body as a JSON-RPC 2.0 message, or the error reply it gets."""
    try:
        data = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError as exc:
        reason = f"the message is not UTF-8 (byte {exc.start})"
        return RpcError(PARSE_ERROR, f"Parse error: {reason}", recover_id(body))
    except RecursionError:
        reason = "the message is nested too deeply"
        return RpcError(PARSE_ERROR, f"Parse error: {reason}", recover_id(body))
    except ValueError as exc:
        return RpcError(PARSE_ERROR, f"Parse error: {exc}", recover_id(body))
    if not isinstance(data, dict):
        return RpcError(INVALID_REQUEST, "Invalid request: a message is a JSON object", None)
    has_id = "id" in data
    reply_to = data["id"] if has_id and is_id(data["id"]) else None
    if data.get("jsonrpc") != "2.0":
        return RpcError(INVALID_REQUEST, 'Invalid request: "jsonrpc" must be "2.0"', reply_to)
    if "method" in data:
        if not isinstance(data["method"], str):
            return RpcError(INVALID_REQUEST, 'Invalid request: "method" is not a string', reply_to)
        if has_id and reply_to is None:
            return RpcError(
                INVALID_REQUEST, 'Invalid request: "id" is not an integer or string', None
            )
        if not isinstance(data.get("params"), dict | list | None):
            return RpcError(
                INVALID_REQUEST, 'Invalid request: "params" is not an object or array', reply_to
            )
        return data
    if has_id and ("result" in data) != ("error" in data):
        return data  # a response to one of our requests
    return RpcError(
        INVALID_REQUEST,
        'Invalid request: no "method" (a request) and no "result" or "error" (a response)',
        reply_to,
    )


# --- the connection -----------------------------------------------------------------------


class Endpoint(Protocol):
    """What handles the messages (readkeeper's pygls protocol)."""

    # Set once `exit` was handled: the connection ends with this code.
    exit_code: int | None

    def receive(self, message: dict[str, Any]) -> None:
        """Handle one well-formed JSON-RPC message."""

    def send_error(self, msg_id: MsgId | None, code: int, message: str, kind: str) -> None:
        """Send an error reply (`msg_id` None: JSON-RPC's null id)."""

    def ended(self) -> int:
        """The exit code for a client that went away without `exit`."""


class Connection(asyncio.Protocol):
    """One client's stream: frames to messages, and the end of the connection."""

    def __init__(
        self,
        endpoint: Endpoint,
        done: asyncio.Future[int],
        on_connect: Callable[[asyncio.WriteTransport], None] | None = None,
        stall_timeout: float = STALL_TIMEOUT_S,
    ) -> None:
        self._endpoint = endpoint
        self._done = done
        self._on_connect = on_connect
        self._stall_timeout = stall_timeout
        self._reader = FrameReader()
        self._transport: asyncio.BaseTransport | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._last_data = 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport
        if self._on_connect is not None and isinstance(transport, asyncio.WriteTransport):
            self._on_connect(transport)  # a socket: replies go back the same way

    def data_received(self, data: bytes) -> None:
        if self._done.done():
            return
        try:
            events = self._reader.feed(data)
        except StreamBroken as exc:
            self._finish(1, str(exc))
            return
        self._handle(events)
        if self._reader.pending and not self._done.done():
            self._last_data = asyncio.get_running_loop().time()
            if self._timer is None:
                self._timer = asyncio.get_running_loop().call_later(
                    self._stall_timeout, self._stalled
                )

    def eof_received(self) -> bool:
        if not self._done.done():
            if self._reader.pending:
                self._handle(self._reader.give_up())
                self._finish(1, "the client closed its end in the middle of a message")
            else:
                self._finish(self._endpoint.ended(), None)
        return False  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._done.done():
            self._finish(self._endpoint.ended(), f"the connection was lost: {exc}" if exc else None)

    def _stalled(self) -> None:
        self._timer = None
        if self._done.done() or not self._reader.pending:
            return
        loop = asyncio.get_running_loop()
        waited = loop.time() - self._last_data
        if waited < self._stall_timeout:  # bytes came since: wait the rest
            self._timer = loop.call_later(self._stall_timeout - waited, self._stalled)
            return
        log.warning("No bytes for %.0f s in the middle of a message: giving up on it", waited)
        self._handle(self._reader.give_up())

    def _handle(self, events: list[Event]) -> None:
        endpoint = self._endpoint
        try:
            for event in events:
                if isinstance(event, Frame):
                    message = parse_message(event.body)
                    if isinstance(message, RpcError):
                        log.warning("Unreadable message: %s", message.message)
                        endpoint.send_error(message.id, message.code, message.message, message.kind)
                    else:
                        endpoint.receive(message)
                        if endpoint.exit_code is not None:
                            self._finish(endpoint.exit_code, None)
                            return
                elif isinstance(event, BadFrame):
                    self._bad_frame(event)
                else:
                    log.warning("Skipped %d bytes: %s", event.size, event.reason)
        except BrokenPipeError:
            self._finish(1, "the client closed its end (broken pipe)")

    def _bad_frame(self, event: BadFrame) -> None:
        msg_id = recover_id(event.body)
        log.warning(
            "Bad message (%s)%s", event.reason, f", id {msg_id!r}" if msg_id is not None else ""
        )
        if msg_id is None:
            return  # no request to answer: the log says what happened
        if event.too_large:
            self._endpoint.send_error(
                msg_id, INVALID_REQUEST, f"Invalid request: {event.reason}", "too_large"
            )
        else:
            self._endpoint.send_error(
                msg_id, PARSE_ERROR, f"Parse error: {event.reason}", "bad_params"
            )

    def _finish(self, code: int, reason: str | None) -> None:
        if reason:
            log.error("Closing the connection: %s", reason)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._done.done():
            self._done.set_result(code)


async def serve_stream(endpoint: Endpoint, stdin: BinaryIO) -> int:
    """Serve `endpoint` on `stdin` until `exit` or the end of input; the exit code."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[int] = loop.create_future()
    connection = Connection(endpoint, done)
    try:
        # Read on the event loop itself: no thread hop per message.
        transport, _ = await loop.connect_read_pipe(lambda: connection, stdin)
    except ValueError:  # a regular file: no event-loop reads, so a thread feeds the loop
        threading.Thread(
            target=_pump, args=(stdin.fileno(), connection, loop), name="stdin", daemon=True
        ).start()
        return await done
    try:
        return await done
    finally:
        transport.close()


def _pump(fd: int, connection: Connection, loop: asyncio.AbstractEventLoop) -> None:
    try:
        while chunk := os.read(fd, 65536):
            loop.call_soon_threadsafe(connection.data_received, chunk)
        loop.call_soon_threadsafe(connection.eof_received)
    except (OSError, RuntimeError):  # the loop closed first: nothing left to feed
        pass


async def serve_tcp(
    endpoint: Endpoint, host: str, port: int, on_connect: Callable[[asyncio.WriteTransport], None]
) -> int:
    """Serve `endpoint` to the first client on `host:port`, until it ends."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[int] = loop.create_future()
    server = await loop.create_server(lambda: Connection(endpoint, done, on_connect), host, port)
    async with server:
        log.info("Listening on %s:%s", host, port)
        return await done
