"""JSON-RPC 2.0 messages in a frame's body: a message, or the error reply a body that is
not one gets (with its request id recovered when the members before it parse, so a
request cut short, or sent with a wrong length, still gets its one reply). Plain Python,
like the frame reader (`framing`) that hands it bodies.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

# JSON-RPC's codes for a message that cannot be read.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600

MsgId = int | str

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


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
