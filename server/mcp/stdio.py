"""Stdin and stdout for the SDK's stdio transport, served by the event loop itself.

The SDK wraps the standard streams in `anyio.wrap_file`, which sends every line read
and every write and flush to a worker thread: three thread hops per tool call, about
a third of what a small read costs. When both streams are pipes (as an MCP client
starts a server), these objects read and write them through asyncio's pipe
transports instead, on the loop. Anything else (a terminal, a file) keeps the SDK's
own handling.

As the SDK does for its own streams, descriptors 0 and 1 are moved out of the way
while serving (0 to the null device, 1 to stderr), so a handler's or a child
process's stray output never lands in the protocol stream; they are restored after.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import stat
from collections.abc import AsyncIterator, Callable

log = logging.getLogger("readkeeper")

# A line is one JSON-RPC message: a `write` tool call carries a whole file.
_LINE_LIMIT = 1 << 30


class PipeWriter:
    """Stdout as the SDK writes it: `write`, then `flush` (which waits while the pipe
    is full, so a slow client holds the writer back rather than memory growing)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        """Queue `text` on stdout; `flush` waits until the pipe takes it."""
        self._writer.write(text.encode("utf-8"))

    async def send(self, line: bytes) -> None:
        """Write a whole reply line, waiting while the pipe is full."""
        self._writer.write(line)
        await self._writer.drain()

    async def flush(self) -> None:
        """Wait until the pipe has room again (while the client is behind reading)."""
        await self._writer.drain()


class PipeLines:
    """Stdin as the SDK iterates it: one decoded line at a time. A line that `answer`
    replies to (quick.py: a quick read) is answered here and never reaches the SDK."""

    def __init__(self, reader: asyncio.StreamReader, writer: PipeWriter) -> None:
        self._reader = reader
        self._writer = writer
        self.answer: Callable[[bytes], bytes | None] | None = None

    def __aiter__(self) -> PipeLines:
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self._reader.readline()
            if not line:
                raise StopAsyncIteration
            reply = self._answer(line)
            if reply is None:
                return line.decode("utf-8", "replace")
            await self._writer.send(reply)

    def _answer(self, line: bytes) -> bytes | None:
        if self.answer is None:
            return None
        try:
            return self.answer(line)
        except Exception:  # before the call was served: the SDK serves it instead
            log.exception("Answering a line on the loop failed; the SDK takes it")
            return None


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@contextlib.asynccontextmanager
async def pipe_streams() -> AsyncIterator[tuple[PipeLines, PipeWriter] | None]:
    """Stdin and stdout served on the loop, or None when they are not both pipes. Each
    step is undone on the way out, also when a later one fails: descriptors closed, 0
    and 1 restored, and their blocking mode as it was (the pipe transports make the
    shared file descriptions non-blocking)."""
    if not (_is_pipe(0) and _is_pipe(1)):
        yield None
        return
    loop = asyncio.get_running_loop()
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
        reader = asyncio.StreamReader(limit=_LINE_LIMIT)
        incoming, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), wire_in
        )
        undo.callback(incoming.close)
        outgoing, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, wire_out
        )
        undo.callback(outgoing.close)
        writer = asyncio.StreamWriter(outgoing, protocol, None, loop)
        out = PipeWriter(writer)
        yield PipeLines(reader, out), out


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


__all__ = ["PipeLines", "PipeWriter", "pipe_streams"]
