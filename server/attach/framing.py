"""Frames on the attach socket: a 4-byte big-endian length, then that many bytes of a
JSON object. Written by hand because it is twenty lines and both ends are ours; the
length prefix lets a reader refuse an oversized frame before reading it.

Requests are `{"id", "method", "params"}`; answers `{"id", "result"}` or
`{"id", "error": {"message", "data": {"kind", ...}}}`.
"""

from __future__ import annotations

import contextlib
import json
import math
import socket
import struct
from typing import Any

import orjson

from ..message_cap import MAX_MESSAGE_BYTES, LongNumber, out_of_shape, rounded_integer, whole_int

# A request carries at most a file's new content; an answer at most a budgeted read.
MAX_FRAME = MAX_MESSAGE_BYTES  # the one cap of every front end (message_cap.py)
_HEADER = struct.Struct(">I")


class FrameError(Exception):
    """A frame that is not a JSON object, or is larger than `MAX_FRAME`."""

    def __init__(self, message: str, fatal: bool) -> None:
        super().__init__(message)
        self.fatal = fatal  # the stream is out of step: the connection must end


def send(sock: socket.socket, message: dict[str, Any]) -> None:
    """Send one frame."""
    body = _encode(message)
    sock.sendall(_HEADER.pack(len(body)) + body)


def _encode(message: dict[str, Any]) -> bytes:
    # orjson is an order of magnitude faster on a read's 80 KB of lines (0.04 ms against
    # 0.58); the standard library takes what it refuses (text with lone surrogates: a
    # file name that is not UTF-8), and the reader handles both.
    # orjson writes NaN and the infinities as null: an agent's `"offset": NaN` would reach
    # the editor's core as no offset at all (the default, silently) where a core of its
    # own refuses it. Such a frame goes by the standard library, which writes them as
    # NaN and Infinity, read back by `_decode_slowly` for the core to refuse.
    try:
        body = orjson.dumps(message)
    except orjson.JSONEncodeError:
        body = None
    if body is not None and not (b"null" in body and _not_finite(message)):
        return body
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8", "surrogatepass"
    )


def _not_finite(value: Any) -> bool:
    """Whether `value` holds a float that is NaN or infinite, at any depth."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


def receive(sock: socket.socket, max_frame: int = MAX_FRAME) -> dict[str, Any] | None:
    """The next frame's object; None at the end of the stream."""
    header = _exactly(sock, _HEADER.size)
    if header is None:
        return None
    (size,) = _HEADER.unpack(header)
    if size > max_frame:
        raise FrameError(f"a frame of {size} bytes, over the {max_frame}-byte limit", fatal=True)
    body = _exactly(sock, size) if size else b""
    if body is None:
        raise FrameError("the stream ended inside a frame", fatal=True)
    shape = out_of_shape(body)  # before any parser: the walks after it are recursive
    if shape is not None:
        raise FrameError(shape, fatal=False)
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError:
        message = _decode_slowly(body)
    else:
        if rounded_integer(message):  # an integer past 64 bits: read exactly
            message = _decode_slowly(body)
    if not isinstance(message, dict):
        raise FrameError("a frame that is not a JSON object", fatal=False)
    return message


def _decode_slowly(body: bytes) -> Any:
    """What orjson refuses: a frame with lone surrogates (json.dumps writes them out as
    surrogatepass bytes), or one that is not JSON at all."""
    try:
        return json.loads(body.decode("utf-8", "surrogatepass"), parse_int=whole_int)
    except LongNumber as exc:
        raise FrameError(str(exc), fatal=False) from None
    except ValueError as exc:
        raise FrameError(f"a frame that is not JSON ({exc})", fatal=False) from None
    except RecursionError:
        raise FrameError("a frame nested too deeply to read", fatal=False) from None


def exchange(
    sock: socket.socket, message: dict[str, Any], max_frame: int = MAX_FRAME
) -> dict[str, Any] | None:
    """Send one request and receive its answer (None at the end of the stream).

    A peer that refuses a connection answers at once and closes, maybe before our
    request reached it: the send then fails, but the refusal waits in our buffer and
    is read all the same.
    """
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        send(sock, message)
    return receive(sock, max_frame)


def _exactly(sock: socket.socket, size: int) -> bytes | None:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(min(size - len(chunks), 1 << 20))
        if not chunk:
            if chunks:
                raise FrameError("the stream ended inside a frame", fatal=True)
            return None
        chunks += chunk
    return bytes(chunks)


__all__ = ["MAX_FRAME", "FrameError", "exchange", "receive", "send"]
