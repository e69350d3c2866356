"""Every MCP stdio line the SDK will not take is answered at the door (stdio.py).

The SDK's stdin reader drops a line its parser refuses (text that is not JSON, a raw
control character such as a carriage return inside a string, JSON that is no JSON-RPC
message) without a word: the client waits for good. Each such line is answered here as
the LSP front end answers such a body (`lsp/messages.parse_message`): a parse error or
an invalid request, under the request's id when the members before the fault parse,
else null. A blank line (a lone carriage return between messages) is no message: it is
skipped, never handed to the SDK.

The SDK's own check decides (its message adapter), so no line it would drop gets
through; a line it takes costs that one check, which `PipeWriter.asked` used to make
itself. The answer itself never raises: a line the door cannot read is answered too.
"""

from __future__ import annotations

import json
import logging

import orjson
from mcp_types import JSONRPCNotification, jsonrpc_message_adapter

from ..lsp.messages import INVALID_REQUEST, PARSE_ERROR, RpcError, parse_message
from ..message_cap import MsgId, is_id, recover_id

log = logging.getLogger("readkeeper")

_NOT_MCP = (
    "Invalid request: not a JSON-RPC 2.0 message MCP takes (a request is an object "
    'with "jsonrpc": "2.0", an integer or string "id", a string "method" and an object '
    '"params"; a notification has no "id")'
)


def blank(line: bytes) -> bool:
    """Whether `line` holds nothing but JSON white space (no message at all)."""
    return not line.strip(b" \t\r\n")


def refusal(line: bytes) -> bytes | None:
    """The error line answering `line` when the SDK would drop it, else None (blank
    lines included: `blank` says to skip them). A request whose id is no integer or
    string (null, true, 2.5, NaN, an object) is one: the SDK takes it for a
    notification. Never raises: a line this door cannot read is answered too (the
    stdio loop would end with the exception, and the server with it)."""
    if blank(line):
        return None
    try:
        return _refusal(line)
    except Exception:
        log.exception("Answering a line the SDK refuses failed")
        return _line(INVALID_REQUEST, "Invalid request: readkeeper could not read this line")


def _refusal(line: bytes) -> bytes | None:
    try:
        message = jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError:
        return _answer(line)
    if isinstance(message, JSONRPCNotification) and b'"id"' in line:
        # Read as the SDK's parser read it: NaN, Infinity and 1e400 are numbers to both
        # (orjson refuses them).
        parsed = json.loads(line)
        if "id" in parsed:
            return _line(INVALID_REQUEST, 'Invalid request: "id" is not an integer or string')
    return None


def _answer(line: bytes) -> bytes:
    parsed = parse_message(line)
    if isinstance(parsed, RpcError) and parsed.batch_ids:
        # A batch: each request in it answered under its id (a line each; in one HTTP
        # body, `http_limits` sends them as JSON-RPC's array of replies).
        return b"".join(_line(parsed.code, parsed.message, i) for i in parsed.replies())
    if isinstance(parsed, RpcError):
        code, message, msg_id = parsed.code, parsed.message, parsed.id
    else:  # JSON-RPC as LSP reads it, not as MCP does (array params, say)
        code, message = INVALID_REQUEST, _NOT_MCP
        msg_id = parsed.get("id") if is_id(parsed.get("id")) else None
    if code == PARSE_ERROR and msg_id is None:
        msg_id = recover_id(line)
    return _line(code, message, msg_id)


def _line(code: int, message: str, msg_id: MsgId | None = None) -> bytes:
    error = {"code": code, "message": message, "data": {"kind": "bad_params"}}
    try:
        return orjson.dumps({"jsonrpc": "2.0", "id": msg_id, "error": error}) + b"\n"
    except TypeError:  # an id no JSON text can carry back (a lone surrogate)
        return orjson.dumps({"jsonrpc": "2.0", "id": None, "error": error}) + b"\n"


__all__ = ["blank", "refusal"]
