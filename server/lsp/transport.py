"""LSP's base protocol on a byte stream, read so that no input can leave the server alive
and deaf.

pygls' reader (`pygls.io_.run_async`) trusts every header: one wrong `Content-Length`
and it waits forever for bytes that never come, or reads the next message as the tail
of this one, and it never answers a message it cannot read. This module replaces it:
`Connection` is the asyncio protocol that feeds a pipe's or a socket's bytes to the
frame reader (`framing`), turns each frame into a JSON-RPC message or an error reply
(`messages`), hands messages to the `Endpoint` (readkeeper's pygls protocol), gives up
on a frame the client stopped sending in the middle of (`STALL_TIMEOUT_S`), and ends
the connection with LSP's exit code after `exit`, or with 1 and the reason on stderr
when the stream is beyond repair (junk longer than any frame, or the end of input
mid-frame).

A client that stops reading its replies does not make the server grow: once
`MAX_IN_FLIGHT` requests are unanswered, or (on a socket) `MAX_WAITING_OUTPUT` bytes of
replies wait to be sent, the messages already read wait too and the stream is not read
until the client catches up. (On stdio, replies are written by a blocking write on the
loop, which holds the loop back too.)
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, BinaryIO, Protocol

from ..exit_status import REFUSED
from ..message_cap import MsgId, recover_id
from .door import Door
from .framing import BadFrame, Event, Frame, FrameReader, StreamBroken
from .messages import INVALID_REQUEST, PARSE_ERROR, RpcError, parse_message

log = logging.getLogger("readkeeper.lsp.transport")

# A frame left unfinished this long is given up (clients write a frame at once, so
# only a wrong Content-Length on the last message sent leaves one waiting).
STALL_TIMEOUT_S = 3.0
# Replies waiting for a client that does not read them, before its messages wait too.
MAX_WAITING_OUTPUT = 64 << 20
# Requests handed to the server and not answered yet, before the next ones wait.
MAX_IN_FLIGHT = 64


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
        self._backlog: deque[Event] = deque()  # read, and waiting while replies wait
        self._held = False  # not reading: the client is behind (see `_hold`)
        self._writing_held = False  # the replies waiting passed MAX_WAITING_OUTPUT

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """The pipe or socket is open: a socket's replies go back the same way."""
        self._transport = transport
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        if hasattr(self._endpoint, "on_settled"):
            self._endpoint.on_settled = self._settled
        if self._on_connect is not None and isinstance(transport, asyncio.WriteTransport):
            transport.set_write_buffer_limits(high=MAX_WAITING_OUTPUT)
            self._on_connect(transport)  # a socket: replies go back the same way

    def pause_writing(self) -> None:
        """`MAX_WAITING_OUTPUT` bytes of replies wait: read nothing more, handle nothing
        more, until the client has read them."""
        self._writing_held = True
        self._hold()

    def resume_writing(self) -> None:
        """The client caught up: handle what waited, then read again."""
        self._writing_held = False
        self._release()

    def _settled(self) -> None:
        """A request was answered: go on if that makes room."""
        if threading.get_ident() != self._loop_thread:  # answered from a worker thread
            self._loop.call_soon_threadsafe(self._settled)
            return
        if self._held and not self._writing_held and not self._busy():
            self._release()

    def _busy(self) -> bool:
        if len(getattr(self._endpoint, "in_flight", ())) < MAX_IN_FLIGHT:
            return False
        may_hold = getattr(self._endpoint, "may_hold", None)
        return may_hold is None or bool(may_hold())

    def _hold(self) -> None:
        if not self._held:
            self._held = True
            if isinstance(self._transport, asyncio.ReadTransport):
                self._transport.pause_reading()

    def _release(self) -> None:
        if self._writing_held or self._busy():
            return
        self._held = False
        self._last_data = asyncio.get_running_loop().time()  # a frame cut short waits anew
        self._handle([])
        reading = isinstance(self._transport, asyncio.ReadTransport)
        if reading and not self._held and not self._done.done():
            self._transport.resume_reading()  # type: ignore[union-attr]

    def data_received(self, data: bytes) -> None:
        """Frames and messages from the next bytes; a frame left unfinished is timed."""
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
        """The client closed its end: the connection ends, with 1 in mid-frame."""
        if not self._done.done():
            if self._reader.pending:
                self._handle(self._reader.give_up())
                self._finish(1, "the client closed its end in the middle of a message")
            else:
                self._finish(self._endpoint.ended(), None)
        return False  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        """The pipe or socket is gone: the connection ends."""
        if not self._done.done():
            self._finish(self._endpoint.ended(), f"the connection was lost: {exc}" if exc else None)

    def _stalled(self) -> None:
        self._timer = None
        if self._done.done() or not self._reader.pending:
            return
        loop = asyncio.get_running_loop()
        if self._held:  # we stopped reading, not the client sending: wait anew
            self._last_data = loop.time()
        waited = loop.time() - self._last_data
        if waited < self._stall_timeout:  # bytes came since: wait the rest
            self._timer = loop.call_later(self._stall_timeout - waited, self._stalled)
            return
        log.warning("No bytes for %.0f s in the middle of a message: giving up on it", waited)
        self._handle(self._reader.give_up())

    def _handle(self, events: list[Event]) -> None:
        endpoint = self._endpoint
        self._backlog.extend(events)
        try:
            while self._backlog and not self._held and not self._done.done():
                if self._busy():
                    self._hold()
                    break
                event = self._backlog.popleft()
                if isinstance(event, Frame):
                    message = parse_message(event.body)
                    if isinstance(message, RpcError):
                        log.warning("Unreadable message: %s", message.message)
                        for reply_to in message.replies():
                            endpoint.send_error(
                                reply_to, message.code, message.message, message.kind
                            )
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
        # Answered even without an id that can be read (JSON-RPC's null id, as for a
        # body that is not a message): what carried one never waits for a reply.
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
        if not _watchable(stdin.fileno()):
            raise ValueError("not a pipe, socket or terminal")
        # Read on the event loop itself: no thread hop per message.
        transport, _ = await loop.connect_read_pipe(lambda: connection, stdin)
    except ValueError:  # a file or device the loop cannot watch: a thread feeds the loop
        threading.Thread(
            target=_pump, args=(stdin.fileno(), connection, loop), name="stdin", daemon=True
        ).start()
        return await done
    try:
        return await done
    finally:
        transport.close()


def _watchable(fd: int) -> bool:
    """Whether the event loop can wait on `fd`: a pipe, a socket or a terminal. epoll
    refuses regular files and devices such as /dev/null (`serve </dev/null`), and the
    loop would then wait for input that never comes."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


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
    """Serve `endpoint` to the first client on `host:port` that `door` admits (our
    user's, speaking LSP), until it ends."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[int] = loop.create_future()
    door = Door(lambda: Connection(endpoint, done, on_connect))
    try:
        server = await loop.create_server(door.keeper, host, port)
    except OSError as exc:
        why = os.strerror(exc.errno).lower() if exc.errno else str(exc)
        print(
            f"readkeeper: cannot listen on {host}:{port} ({why}); choose another port "
            "(0 picks a free one).",
            file=sys.stderr,
        )
        return REFUSED
    async with server:
        # Said always: with port 0 nobody else knows which one was taken.
        bound = server.sockets[0].getsockname()[1] if server.sockets else port
        print(f"readkeeper: listening on {host}:{bound}", file=sys.stderr, flush=True)
        return await done
