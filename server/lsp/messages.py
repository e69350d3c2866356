"""JSON-RPC 2.0 messages in a frame's body: a message, or the error reply a body that is
not one gets (with its request id recovered when the members before it parse, so a
request cut short, or sent with a wrong length, still gets its one reply). Plain Python,
like the frame reader (`framing`) that hands it bodies.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from ..message_cap import LongNumber, MsgId, is_id, out_of_shape, recover_id, skip_space, whole_int

# JSON-RPC's codes for a message that cannot be read.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600

_DECODER = json.JSONDecoder()


def json_end(data: bytes | bytearray) -> int | None:
    """The byte offset just past one whole JSON value (and the whitespace after it) at
    the start of `data`, or None when there is none (yet)."""
    text = bytes(data).decode("utf-8", "surrogateescape")
    try:
        _, end = _DECODER.raw_decode(text, skip_space(text, 0))
    except (ValueError, RecursionError):
        return None
    return len(text[: skip_space(text, end)].encode("utf-8", "surrogateescape"))


class RpcError(NamedTuple):
    """A frame that is not a JSON-RPC message: the error reply it gets."""

    code: int
    message: str
    id: MsgId | None
    kind: str = "bad_params"
    # A batch (a JSON array): the ids of its requests, each answered with this error
    # (`replies`), so no request in it waits for an answer that never comes.
    batch_ids: tuple[MsgId, ...] = ()

    def replies(self) -> list[MsgId | None]:
        """The ids this error is sent under: each request of a batch, else its own."""
        return list(self.batch_ids) or [self.id]


# Neither LSP nor MCP (since 2025-06-18) has batches: each request of one is refused,
# under its own id, with the way that works.
BATCH = (
    "Invalid request: a batch (a JSON array of messages) is not taken; send each "
    "request as a message of its own"
)


def parse_message(body: bytes) -> dict[str, Any] | RpcError:
    """A frame's body as a JSON-RPC 2.0 message, or the error reply it gets."""
    shape = out_of_shape(body)
    if shape is not None:
        return RpcError(PARSE_ERROR, f"Parse error: {shape}", recover_id(body))
    try:
        data = json.loads(body.decode("utf-8"), parse_int=whole_int)
    except LongNumber as exc:
        return RpcError(PARSE_ERROR, f"Parse error: {exc}", recover_id(body))
    except UnicodeDecodeError as exc:
        reason = f"the message is not UTF-8 (byte {exc.start})"
        return RpcError(PARSE_ERROR, f"Parse error: {reason}", recover_id(body))
    except RecursionError:
        reason = "the message is nested too deeply"
        return RpcError(PARSE_ERROR, f"Parse error: {reason}", recover_id(body))
    except ValueError as exc:
        return RpcError(PARSE_ERROR, f"Parse error: {exc}", recover_id(body))
    if isinstance(data, list) and data:
        ids = [
            e["id"] for e in data if isinstance(e, dict) and "method" in e and is_id(e.get("id"))
        ]
        return RpcError(INVALID_REQUEST, BATCH, None, batch_ids=tuple(dict.fromkeys(ids)))
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
