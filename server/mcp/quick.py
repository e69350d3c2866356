"""Quick reads answered straight off the stdin line, before the SDK sees them.

The SDK's way through a tool call (a `JSONRPCMessage` model of the line, a memory
stream, a task, its middleware, the request's validation against the protocol's
surface, the params model, the handler, the result's sieve, another memory stream)
costs about 1.3 ms here, several times what a quick read itself takes. A `tools/call`
of `read` that `calls.quick` says is quick is served from the line instead: the same
`McpFrontEnd.answer` the SDK's handler calls, the result shaped for the wire by the
SDK's own sieve (`serialize_server_result`) and server-info stamp, so the bytes are
the ones the SDK would send (tests/mcp/test_mcp_quick.py compares them).

A plain `edit` is taken the same way (`later`), but served on a worker thread (it
writes and fsyncs: never on the loop), its reply written when it is done: the SDK's
way around it cost a third of an 80 KB edit. So is a quick read that turned out costly
on the loop (`OffTheLoop`: an outline, a diff): handed to the SDK, it went through all
of the SDK's way, and its handler tried it on the loop a second time before sending it
to a worker thread (issue 34: a first read's outline).

Only a call the SDK would serve plainly is taken: after the SDK has served a tool call
on this connection (the backend is chosen and the protocol version known), a request
naming no other version, with no field beyond the name, the arguments and the ordinary
`_meta` entries, and no cache hint for `tools/call`. Anything else, or any line that is
not quite that, goes to the SDK untouched.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

import anyio.to_thread
import orjson
from mcp_types import INTERNAL_ERROR, SERVER_INFO_META_KEY, CallToolResult, ErrorData
from mcp_types.jsonrpc import JSONRPCError, JSONRPCResponse
from mcp_types.methods import serialize_server_result
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..files import cache_writes
from ..message_cap import rounded_integer
from ..read.loop_guard import OffTheLoop
from . import render

if TYPE_CHECKING:
    from mcp.server.lowlevel.server import Server

    from .backends import Backend
    from .server import McpFrontEnd
    from .stdio import PipeWriter

log = logging.getLogger("readkeeper")

VERSION_KEY = "io.modelcontextprotocol/protocolVersion"

# `_meta` entries a plain call may carry: who the client is, what it can do, its
# version (checked), and a progress token (a read reports no progress either way).
_PLAIN_META = frozenset(
    {
        VERSION_KEY,
        "io.modelcontextprotocol/clientInfo",
        "io.modelcontextprotocol/clientCapabilities",
        "progressToken",
    }
)
# A read's call is a few hundred bytes; a longer line (a `write` of a whole file) is
# never parsed here, only by the SDK.
_LINE_LIMIT = 64 << 10
_MESSAGE_KEYS = frozenset({"jsonrpc", "id", "method", "params"})
_PARAMS_KEYS = frozenset({"name", "arguments", "_meta"})


class QuickCalls:
    """Serves the quick `read` and `edit` calls of one stdio connection from their lines."""

    def __init__(self, front: McpFrontEnd, server: Server[Any]) -> None:
        self.front = front
        self.server = server
        self._serving: set[asyncio.Task[None]] = set()
        # The line of the read `answer` found costly, and its call, for `later`.
        self._costly: tuple[bytes, tuple[int | str, dict[str, Any], Backend, str]] | None = None

    def answer(self, line: bytes) -> bytes | None:
        """The reply line to `line` when it is a quick read, else None (the SDK's)."""
        front = self.front
        call = self._plain(line, "read")
        if call is None:
            return None
        request_id, arguments, backend, version = call
        if not backend.quick("read", arguments):
            return None
        try:
            result = front.answer(backend, "read", arguments)
        except OffTheLoop:
            # Costly after all: `later` serves it on a worker thread, unless the client
            # asked for its progress (the SDK's handler sends it).
            if b'"progressToken"' not in line:
                self._costly = (line, call)
            return None
        front.quick_reads += 1
        return self._reply(version, request_id, result)

    def later(self, line: bytes, writer: PipeWriter) -> bool:
        """Take `line` when it is a plain `edit`, or the read `answer` just found costly:
        served on a worker thread, in flight (as a call the SDK holds) until `writer`
        has its reply; False for the SDK's."""
        costly, self._costly = self._costly, None
        tool = "read" if costly is not None and costly[0] is line else "edit"
        try:
            call = costly[1] if costly is not None and tool == "read" else self._plain(line, tool)
            if call is None:
                return False
            request_id, arguments, backend, version = call
            serve = self.front.on_thread(backend, tool, arguments)
        except Exception:  # before the call was served: the SDK serves it instead
            log.exception("Taking a line for a worker thread failed; the SDK takes it")
            return False
        if tool == "read":
            self.front.thread_reads += 1
        else:
            self.front.quick_edits += 1
        writer.unanswered.add(request_id)
        writer.in_flight.add(request_id)
        cache_writes.hold()  # the user cache's writes wait until the reply is written

        async def reply() -> None:
            try:
                made = await anyio.to_thread.run_sync(
                    lambda: self._reply(version, request_id, serve())
                )
                await writer.write(made.decode())
            finally:
                cache_writes.release()

        task = asyncio.ensure_future(reply())
        self._serving.add(task)  # kept until done: the loop holds tasks weakly
        task.add_done_callback(self._serving.discard)
        return True

    def _plain(
        self, line: bytes, tool: str
    ) -> tuple[int | str, dict[str, Any], Backend, str] | None:
        """The id and arguments of `line` when it is a plain call of `tool`, once this
        connection's SDK has served one (the backend and protocol version it chose)."""
        front = self.front
        version = front.protocol_version
        if version is None or front.backend is None or len(line) > _LINE_LIMIT:
            return None
        if front.tool_set != "readkeeper":
            return None  # the drop-in has no `read` or `edit` tool: the SDK refuses them
        if b'"tools/call"' not in line:
            return None
        call = _plain_call(line, version, tool)
        if call is None or self.server.cache_hints.get("tools/call") is not None:
            return None
        return (*call, front.backend, version)

    def _reply(self, version: str, request_id: int | str, result: CallToolResult) -> bytes:
        """The reply line of `result`, as the SDK writes it."""
        reply: JSONRPCResponse | JSONRPCError
        try:
            wire = self._wire(version, render.valid_unicode(result))
            try:
                # The bytes the SDK's model would write (the same compact JSON, keys in
                # order, text as UTF-8), without building and checking the model again
                # from the dict just dumped from one (a forced read of 77 KB: 87 us -> 40).
                return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "result": wire}) + b"\n"
            except TypeError:  # what orjson will not write (a lone surrogate): the model's
                reply = JSONRPCResponse(jsonrpc="2.0", id=request_id, result=wire)
        except Exception:  # the call happened: it is answered, never handed on and run twice
            log.exception("A quick call's result did not fit the protocol")
            error = ErrorData(code=INTERNAL_ERROR, message="Handler returned an invalid result")
            reply = JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
        return reply.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"

    def _wire(self, version: str, result: CallToolResult) -> dict[str, Any]:
        """`result` as the SDK puts it on the wire in `version` (its `ServerRunner`)."""
        dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        wire = serialize_server_result("tools/call", version, dumped)
        if version in MODERN_PROTOCOL_VERSIONS:
            meta = wire.get("_meta")
            if meta is None:
                wire["_meta"] = {SERVER_INFO_META_KEY: self.server.server_info_stamp}
            elif isinstance(meta, dict) and meta.get(SERVER_INFO_META_KEY) is None:
                wire["_meta"] = {**meta, SERVER_INFO_META_KEY: self.server.server_info_stamp}
        return wire


def _plain_call(line: bytes, version: str, tool: str) -> tuple[int | str, dict[str, Any]] | None:
    """The id and arguments of a plain `tools/call` of `tool` in `version`, else None."""
    try:
        message = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(message, dict) or not message.keys() <= _MESSAGE_KEYS:
        return None
    if message.get("jsonrpc") != "2.0" or message.get("method") != "tools/call":
        return None
    request_id = message.get("id")
    if not (isinstance(request_id, str) or type(request_id) is int):
        return None
    params = message.get("params")
    if not isinstance(params, dict) or not params.keys() <= _PARAMS_KEYS:
        return None
    arguments = params.get("arguments")
    if params.get("name") != tool or not isinstance(arguments, dict):
        return None
    if rounded_integer(arguments):  # orjson rounded an integer past 64 bits: the SDK's
        return None  # parser keeps it exact, for the refusal to echo
    meta = params.get("_meta", {})
    if not isinstance(meta, dict) or not meta.keys() <= _PLAIN_META:
        return None
    if tool != "read" and "progressToken" in meta:
        return None  # the SDK's, which would report the call's progress
    if meta.get(VERSION_KEY, version) != version:
        return None
    return request_id, arguments


__all__ = ["QuickCalls"]
