"""Stdin and stdout for the SDK's stdio transport, served by the event loop itself: the
SDK's `anyio.wrap_file` sends each line read, write and flush to a worker thread (three
hops per tool call, a third of a small read's cost). When both are pipes (as an MCP
client starts a server), asyncio's pipe transports serve them on the loop; anything else
(a terminal, a file) goes through worker threads as the SDK does (`file_streams`).

A client that stops reading its answers cannot make the server grow: once
`MAX_WAITING_OUTPUT` bytes of answers wait for the pipe, or `MAX_IN_FLIGHT` requests
handed to the SDK are not answered yet, stdin is not read until the client reads
again (without this the SDK takes every line at once, a task and an answer each).

As the SDK does, descriptors 0 and 1 are moved aside while serving (0 to /dev/null, 1
to stderr): no stray output lands in the protocol stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import re
import stat
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import orjson

from ..message_cap import MAX_MESSAGE_BYTES
from ..state import later
from . import line_cap, malformed, unpaired
from .early import EarlyAnswers
from .forget_order import Barrier

log = logging.getLogger("readkeeper")

# A line is one JSON-RPC message, at most the one cap of every front end (line_cap.py).
_LINE_LIMIT = MAX_MESSAGE_BYTES
# Answers waiting for a client that does not read them, before stdin is left unread.
MAX_WAITING_OUTPUT = 64 << 20
# Requests the SDK holds (running, or their answer made and not yet written).
MAX_IN_FLIGHT = 64
# At the end of input, how long the requests read so far may take to be answered; the
# bytes read from stdin ahead of the line being served (a longer line is read whole).
END_GRACE_S, READ_AHEAD = 30.0, 1 << 20
# The SDK writes an answer's `jsonrpc` and `id` first: read the id without parsing the
# whole answer (a read's is about 100 KB).
_ANSWER_ID = re.compile(rb'\{"jsonrpc":"2\.0","id":("(?:[^"\\]|\\.)*"|-?\d+),"(?:result|error)"')


class PipeWriter:
    """Stdout as the SDK writes it: `write`, then `flush` (which waits only while
    `MAX_WAITING_OUTPUT` bytes wait for the pipe), and the count of requests not yet
    answered, which `room` waits on."""

    def __init__(self, writer: asyncio.StreamWriter, early: dict[str, bytes] | None = None) -> None:
        self._writer = writer
        self.in_flight: set[Any] = set()  # ids of requests handed to the SDK
        self.unanswered: set[Any] = set()  # ids of every request the SDK will answer
        self._answered = asyncio.Event()
        self.barrier = Barrier()  # a forget after every call before it (forget_order.py)
        # Requests answered before the SDK loaded (early.py), by the id the SDK was
        # given for them: its answers to them are not sent again.
        self.early = early or {}

    async def write(self, text: str) -> None:
        """Queue `text` on stdout (an answer settles its request)."""
        data = text.encode("utf-8")
        if self.early and self._answered_early(data):
            return
        self._writer.write(data)
        if self.in_flight or self.unanswered:
            self._settle(data)

    def _answered_early(self, data: bytes) -> bool:
        """Whether `data` is the SDK's answer to a request answered early (dropped; a
        result other than the one sent is logged: handshake.py is out of date)."""
        match = _ANSWER_ID.match(data, 0, 200)
        if match is None:
            return False
        answered = orjson.loads(match.group(1))
        sent = self.early.pop(answered, None) if isinstance(answered, str) else None
        if sent is None:
            return False
        self._settle(data)
        head = b'{"jsonrpc":"2.0","id":' + match.group(1) + b',"result":'
        if data.rstrip(b"\n") != head + sent + b"}":
            log.error(
                "The SDK answered a request answered early otherwise: the early answers "
                "are out of date (python -m readkeeper.mcp.handshake). The SDK's: %s",
                data[:2000],
            )
        return True

    def _settle(self, data: bytes) -> None:
        match = _ANSWER_ID.match(data, 0, 200)
        if match is None:
            return  # a request or notification of the server's own
        later.answered()
        answered = orjson.loads(match.group(1))
        self.in_flight.discard(answered)
        self.unanswered.discard(answered)
        self._answered.set()
        self.barrier.answered(answered)

    def asked(self, line: bytes) -> bool:
        """Count a tool call handed to the SDK (answered exactly once: a line it would
        refuse never reaches it, malformed.py answers it at the door);
        False for `notifications/cancelled`, kept from the SDK: it drops the answer of a
        cancelled call whose work (a write) runs to its end all the same, so each call
        is answered with what it did, as MCP lets a server that cannot cancel do."""
        message = _parsed(line)
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            return True
        msg_id = message.get("id")
        if isinstance(msg_id, (str, int)) and not isinstance(msg_id, bool):
            self.unanswered.add(msg_id)  # a line the SDK takes (malformed.py checked)
            self.barrier.asked(message, msg_id)
            if message["method"] == "tools/call":
                self.in_flight.add(msg_id)
        elif message["method"] == "notifications/cancelled":
            return False
        return True

    def full(self) -> bool:
        """Whether enough answers wait, or enough requests run, to stop reading."""
        transport = self._writer.transport
        waiting = transport.get_write_buffer_size()
        busy = waiting >= MAX_WAITING_OUTPUT or len(self.in_flight) >= MAX_IN_FLIGHT
        return busy or self.barrier.up

    async def room(self) -> None:
        """Wait until the client has read enough, and the SDK answered enough, to read on."""
        while self.full():
            if self._writer.transport.get_write_buffer_size() >= MAX_WAITING_OUTPUT:
                await self._writer.drain()
            else:
                self._answered.clear()
                await self._answered.wait()

    async def all_answered(self, seconds: float = END_GRACE_S) -> None:
        """At the end of input: wait (at most `seconds`) for every request's answer."""
        deadline = asyncio.get_running_loop().time() + seconds
        while self.unanswered:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                return
            self._answered.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._answered.wait(), left)

    async def send(self, line: bytes) -> None:
        """Write a whole reply line, waiting while the pipe is full."""
        self._writer.write(line)
        await self._writer.drain()

    async def flush(self) -> None:
        """Wait while `MAX_WAITING_OUTPUT` bytes wait for a client behind reading."""
        await self._writer.drain()


class FileWriter(PipeWriter):
    """Stdout when it is not a pipe (a terminal, a file): written by a worker thread,
    which blocks while a terminal is not read. A request stays in flight until its
    answer is written, so `room` waits on the client's reading too."""

    def __init__(self, out: anyio.AsyncFile[bytes]) -> None:
        self._out = out
        self.in_flight = set()
        self.unanswered = set()
        self._answered = asyncio.Event()
        self.barrier = Barrier()

    async def write(self, text: str) -> None:
        """Write `text` (an answer settles its request once written)."""
        data = text.encode("utf-8")
        await self._out.write(data)
        if self.in_flight or self.unanswered:
            self._settle(data)

    async def flush(self) -> None:
        """Flush the file."""
        await self._out.flush()

    def full(self) -> bool:
        """Whether enough requests wait for their answers to be written (or a forget)."""
        return len(self.in_flight) >= MAX_IN_FLIGHT or self.barrier.up

    async def room(self) -> None:
        """Wait until enough answers are written to read on."""
        while self.full():
            self._answered.clear()
            await self._answered.wait()


class FileLines:
    """Stdin as the SDK iterates it when it is not a pipe: the next line is read only
    while fewer than `MAX_IN_FLIGHT` requests wait for their answers."""

    def __init__(self, lines: Any, writer: FileWriter) -> None:
        self._lines = lines  # a binary file object
        self._writer = writer

    def __aiter__(self) -> FileLines:
        return self

    async def __anext__(self) -> str:
        while True:
            await self._writer.room()
            line = await self._readline()
            if not line:
                await self._writer.all_answered()
                raise StopAsyncIteration
            if malformed.blank(line):
                continue  # no message (a lone \r between two): nothing to answer
            line, refused = screened(line)
            refused = refused or malformed.refusal(line)
            if refused is None:
                if self._writer.asked(line):
                    await self._writer.barrier.earlier(self._writer.unanswered)
                    return line.decode("utf-8", "replace")
                continue
            await self._writer.write(refused.decode())

    async def _readline(self) -> bytes:
        """The next line, read on a daemon thread of its own. A worker thread (the SDK's
        way) cannot be left behind: Ctrl-C at a terminal would wait for the line being
        typed before the server could stop, and the exit for that thread after it."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[bytes] = loop.create_future()

        def settle(line: bytes | None, error: BaseException | None) -> None:
            if done.done():
                return  # given up on (the server is stopping)
            if error is not None:
                done.set_exception(error)
            else:
                done.set_result(line or b"")

        def read() -> None:
            try:
                line, error = self._lines.readline(), None
            except Exception as exc:
                line, error = None, exc
            with contextlib.suppress(RuntimeError):  # the loop closed first
                loop.call_soon_threadsafe(settle, line, error)

        threading.Thread(target=read, name="mcp-stdin", daemon=True).start()
        return await done


def screened(line: bytes) -> tuple[bytes, bytes | None]:
    """`line` as the SDK may take it, and the answer of the door when it may not: over
    the size cap (`line_cap`), or holding a lone surrogate escape the SDK's parser
    refuses (`unpaired`: in a batch read's entry it goes on, to be refused alone)."""
    refused = line_cap.refusal(line)
    if refused is not None:
        return line, refused
    line = unpaired.mend(line)
    return line, unpaired.refusal(line)


class PipeLines:
    """Stdin as the SDK iterates it, a line at a time; quick.py's lines never reach it:
    `answer` replies to a quick read here, `later` serves an edit on a worker thread."""

    def __init__(self, reader: asyncio.StreamReader, writer: PipeWriter, wire: Wire) -> None:
        self._reader = reader
        self._writer = writer
        self._wire = wire
        self._taken = 0  # bytes of the lines served so far
        self.answer: Callable[[bytes], bytes | None] | None = None
        self.later: Callable[[bytes, PipeWriter], bool] | None = None

    def __aiter__(self) -> PipeLines:
        return self

    async def __anext__(self) -> str:
        while True:
            if self._writer.full():
                self._wire.hold()  # the answers wait: so do the requests, in their pipe
                await self._writer.room()
            self._wire.read_on()  # the next line may still be on its way
            line = await line_cap.readline(self._reader)
            self._taken += line.size if isinstance(line, line_cap.Oversized) else len(line)
            if self._wire.fed - self._taken > READ_AHEAD:
                self._wire.hold()  # the client runs ahead: let its pipe fill instead
            if not line:
                await self._writer.all_answered()
                raise StopAsyncIteration
            if malformed.blank(line):
                continue  # no message (a lone \r between two): nothing to answer
            line, reply = screened(line)
            reply = reply or self._answer(line)
            if reply is None and (self.later is None or not self.later(line, self._writer)):
                reply = malformed.refusal(line)  # one the SDK would drop unanswered
                if reply is None and self._writer.asked(line):
                    await self._writer.barrier.earlier(self._writer.unanswered)
                    return line.decode("utf-8", "replace")
            if reply is not None:
                await self._writer.send(reply)

    def _answer(self, line: bytes) -> bytes | None:
        if self.answer is None:
            return None
        try:
            return self.answer(line)
        except Exception:  # before the call was served: the SDK serves it instead
            log.exception("Answering a line on the loop failed; the SDK takes it")
            return None


class Wire(asyncio.StreamReaderProtocol):
    """Stdin's protocol: counts the bytes it fed the reader, and holds the pipe (stops
    reading it) when asked, until the next line is wanted."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        super().__init__(reader)
        self.fed = 0
        self._held = False
        self._pipe: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Keep the pipe's transport, to hold it."""
        self._pipe = transport
        super().connection_made(transport)

    def data_received(self, data: bytes) -> None:
        """Feed the reader, counting."""
        self.fed += len(data)
        super().data_received(data)

    def hold(self) -> None:
        """Stop reading the pipe."""
        if not self._held and isinstance(self._pipe, asyncio.ReadTransport):
            self._held = True
            self._pipe.pause_reading()

    def read_on(self) -> None:
        """Read the pipe again."""
        if self._held and isinstance(self._pipe, asyncio.ReadTransport):
            self._held = False
            self._pipe.resume_reading()


def _parsed(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        pass
    # What orjson refuses and the SDK's parser takes (NaN, Infinity, 1e400 in the
    # arguments): the line is a request all the same, counted so that the end of input
    # waits for its answer (uncounted, a refusal of `"limit": NaN` sent last was
    # answered "Connection closed").
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None  # the SDK answers it (or not) as it sees fit: nothing counted


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@contextlib.asynccontextmanager
async def pipe_streams(
    early: EarlyAnswers | None = None,
) -> AsyncIterator[tuple[PipeLines, PipeWriter] | None]:
    """Stdin and stdout served on the loop, or None when they are not both pipes. Each
    step is undone on the way out, also when a later one fails: descriptors closed, 0
    and 1 restored, and their blocking mode as it was (the pipe transports make the
    shared file descriptions non-blocking). What `early` read is read first."""
    read_early = early.handover() if early is not None else b""
    if not (_is_pipe(0) and _is_pipe(1)):
        yield None
        return
    async with _claimed() as (wire_in, wire_out):
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=_LINE_LIMIT)
        if read_early:
            reader.feed_data(read_early)
        wire = Wire(reader)
        incoming, _ = await loop.connect_read_pipe(lambda: wire, wire_in)
        try:
            outgoing, protocol = await loop.connect_write_pipe(
                asyncio.streams.FlowControlMixin, wire_out
            )
            try:
                outgoing.set_write_buffer_limits(high=MAX_WAITING_OUTPUT)
                writer = asyncio.StreamWriter(outgoing, protocol, None, loop)
                out = PipeWriter(writer, early.expected if early is not None else None)
                yield PipeLines(reader, out, wire), out
            finally:
                outgoing.close()
        finally:
            incoming.close()


@contextlib.asynccontextmanager
async def file_streams() -> AsyncIterator[tuple[FileLines, FileWriter]]:
    """Stdin and stdout when they are not both pipes, through worker threads."""
    async with _claimed() as (wire_in, wire_out):
        # Buffered: a raw file reads a line a byte at a time, and may write part of one.
        with os.fdopen(wire_out.fileno(), "wb", closefd=False) as answers:
            out = FileWriter(anyio.wrap_file(answers))
            yield FileLines(line_cap.Lines(wire_in.fileno(), READ_AHEAD), out), out


@contextlib.asynccontextmanager
async def _claimed() -> AsyncIterator[tuple[Any, Any]]:
    """Copies of stdin and stdout, with 0 and 1 moved out of the way until the end."""
    with contextlib.ExitStack() as undo:
        for fd in (0, 1):
            saved = _dup(fd)
            undo.callback(_restore, saved, fd, os.get_blocking(fd))
        wire_in = undo.enter_context(os.fdopen(_dup(0), "rb", buffering=0))
        wire_out = undo.enter_context(os.fdopen(_dup(1), "wb", buffering=0))
        devnull = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(devnull, 0)
        finally:
            os.close(devnull)
        os.dup2(2, 1)
        yield wire_in, wire_out


def _dup(fd: int) -> int:
    """A copy of `fd` above the standard three, closed on exec."""
    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)


def _restore(saved: int, fd: int, blocking: bool) -> None:
    """Put the saved descriptor back as `fd`, in the blocking mode it had."""
    try:
        os.dup2(saved, fd)
        os.set_blocking(fd, blocking)
    finally:
        os.close(saved)


__all__ = ["FileLines", "FileWriter", "PipeLines", "PipeWriter", "file_streams", "pipe_streams"]
