"""MCP stdio lines held to the caps of every message (message_cap.py): its size, and
how deeply it nests.

A line is one JSON-RPC message. One longer than `MAX_MESSAGE_BYTES` is never held
whole: its start is kept (to find its id), the rest read and dropped, and the reader
gives an `Oversized` in its place, which the server answers itself with a `too_large`
error (`refusal`) before the SDK sees it. Without this a 150 MB `write` went whole
through the SDK's parser and the core (430 MB resident); the SDK's own stdio reader
has no limit at all.

A line nested past `MAX_NESTING` is answered here too, a parse error under its id:
the SDK's parser fails on it past about 200 levels and drops the line unanswered, and
below that readkeeper's own walkers of the params are recursive.
"""

from __future__ import annotations

import asyncio
import os
import re

import orjson

from ..message_cap import MAX_MESSAGE_BYTES, out_of_shape, recover_id

# Of a line too long to take, the start kept to find its id.
KEEP_HEAD = 64 << 10
# The request's own id: in the head, before its params (the SDK writes jsonrpc, id,
# method, params, in that order).
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')
INVALID_REQUEST, PARSE_ERROR = -32600, -32700


class Oversized(bytes):
    """The start of a line over the cap; `size` is how long the whole line was."""

    size: int = 0


def oversized(head: bytes, size: int) -> Oversized:
    line = Oversized(head[:KEEP_HEAD])
    line.size = size
    return line


async def readline(reader: asyncio.StreamReader) -> bytes:
    """The next line of `reader` (whose limit is `MAX_MESSAGE_BYTES`), or an
    `Oversized` for one over it, read to its end and dropped; b"" at the end."""
    head: bytes | None = None
    size = 0
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as end:
            line = end.partial  # the last line, without its newline, or b""
        except asyncio.LimitOverrunError as over:
            chunk = await reader.read(max(1, over.consumed))
            head = chunk if head is None else head
            size += len(chunk)
            continue
        if head is None:
            return line
        return oversized(head, size + len(line))


class Lines:
    """Lines of a descriptor, read a block at a time, each held to the cap. Not a
    buffered file object: its lock would make closing it wait for the line a thread
    is still waiting for."""

    def __init__(self, fd: int, block: int) -> None:
        self._fd = fd
        self._block = block
        self._buffer = bytearray()
        self._ended = False

    def readline(self) -> bytes:
        """The next line with its newline, the rest at the end of input, else b""."""
        head: bytes | None = None
        size = 0
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0 or self._ended:
                cut = end + 1 if end >= 0 else len(self._buffer)
                if head is None and cut <= MAX_MESSAGE_BYTES:
                    line = bytes(self._buffer[:cut])
                    del self._buffer[:cut]
                    return line
                head = bytes(self._buffer[:KEEP_HEAD]) if head is None else head
                del self._buffer[:cut]
                return oversized(head, size + cut)
            if len(self._buffer) > MAX_MESSAGE_BYTES:
                head = bytes(self._buffer[:KEEP_HEAD]) if head is None else head
                size += len(self._buffer)
                self._buffer.clear()
            chunk = os.read(self._fd, self._block)
            if chunk:
                self._buffer += chunk
            else:
                self._ended = True


def refusal(line: bytes) -> bytes | None:
    """The JSON-RPC error line answering an `Oversized` line, or one past the shape
    bounds (`out_of_shape_answer`); None for any other."""
    if not isinstance(line, Oversized):
        shaped = out_of_shape_answer(line)
        return None if shaped is None else shaped + b"\n"
    before_params = line.split(b'"params"', 1)[0]
    found = _ID.search(before_params)
    message = (
        f"Invalid request: a message of {line.size:,} bytes, over the "
        f"{MAX_MESSAGE_BYTES:,}-byte limit of one message: send less in one call (a "
        "file's whole new content must fit in one)."
    )
    answer = {
        "jsonrpc": "2.0",
        "id": orjson.loads(found.group(1)) if found else None,
        "error": {"code": INVALID_REQUEST, "message": message, "data": {"kind": "too_large"}},
    }
    return orjson.dumps(answer) + b"\n"


def out_of_shape_answer(message: bytes) -> bytes | None:
    """The JSON-RPC error answering a message past the shape bounds (nested too deeply,
    too many values), else None: a parse error, under its id when the members before
    the one at fault parse, else null (JSON-RPC's answer to a message it cannot read)."""
    shape = out_of_shape(message)
    if shape is None:
        return None
    said = f"Parse error: {shape}."
    error = {"code": PARSE_ERROR, "message": said, "data": {"kind": "bad_params"}}
    return orjson.dumps({"jsonrpc": "2.0", "id": recover_id(message), "error": error})


__all__ = ["Lines", "Oversized", "out_of_shape_answer", "readline", "refusal"]
