"""Quick reads (`calls.quick`), answered on the event loop as soon as they arrive.

pygls' way (a task, the hop to the thread pool and back, the converter) costs several
times what such a read does, so the endpoint serves it itself, as the MCP front end
does, with the reply the `readkeeper/read` handler would send. Such a read cannot be
cancelled: it is over before a `$/cancelRequest` could be read. The core is called from
this thread as well as the pool's: its shared state (read-states, snapshots, stats,
diagnostics, the view cache) is under its own locks, and the token memo is a dict whose
updates the GIL keeps whole.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from pygls.exceptions import JsonRpcException

from .. import calls
from ..core import Readkeeper
from ..errors import ReadkeeperError
from ..protocol import ReadParams
from ..read.loop_guard import OffTheLoop, on_the_loop
from .rpc_errors import error_reply

READ = "readkeeper/read"


class Result(NamedTuple):
    """The JSON-ready result of a quick read."""

    value: Any


class Refused(NamedTuple):
    """The params of a quick read found outside the workspace: the `readkeeper/read`
    handler asks the user, without reading again."""

    params: ReadParams
    error: ReadkeeperError


def quick_read(
    core: Readkeeper, message: dict[str, Any]
) -> Result | JsonRpcException | Refused | None:
    """Serve `message` here when it is a quick read: its result, its error reply, or the
    refusal to hand to the handler. None when it is left to pygls."""
    if message.get("method") != READ or "id" not in message:
        return None
    raw = message.get("params")
    if not calls.quick(core, READ, raw):
        return None
    try:
        params = calls.params_for(READ, raw)
        with on_the_loop():
            return Result(calls.run(core, READ, params))
    except OffTheLoop:
        return None  # it turned out costly: pygls runs it on its thread pool
    except Exception as exc:
        if isinstance(exc, ReadkeeperError) and exc.kind == "outside_workspace":
            return Refused(params, exc)  # the handler asks the user, asynchronously
        return error_reply(READ, exc)
