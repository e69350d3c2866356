"""Error replies: every failure the client sees carries a `data.kind` that names what
happened. A `ReadkeeperError` becomes the reply its kind names, any other exception an
`internal` one (the traceback goes to the log, not to the client), and the replies
pygls makes itself get the kind of their code.
"""

from __future__ import annotations

import logging

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from ..errors import ReadkeeperError, cut_middle, fault_reason, too_deep
from ..quoting import printable
from .messages import INVALID_REQUEST, PARSE_ERROR

log = logging.getLogger("readkeeper")

# LSP's RequestFailed: "the request was valid but could not be carried out".
REQUEST_FAILED = -32803
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_NOT_INITIALIZED = -32002
# LSP's RequestCancelled: the client withdrew the request.
REQUEST_CANCELLED = -32800

# The kind of an error reply pygls makes itself (an unknown method, params that do not
# fit an LSP method, a fault in pygls): every failure the client sees has one.
KIND_OF_CODE = {
    PARSE_ERROR: "bad_params",
    INVALID_REQUEST: "bad_params",
    -32601: "unsupported",
    INVALID_PARAMS: "bad_params",
    INTERNAL_ERROR: "internal",
    SERVER_NOT_INITIALIZED: "bad_params",
    REQUEST_CANCELLED: "cancelled",
}


def error_reply(method: str, exc: Exception) -> JsonRpcException:
    """The error reply for a request of `method` that failed with `exc`: a refusal the
    agent can act on, or an `internal` fault of ours."""
    if isinstance(exc, JsonRpcException):
        return exc
    if isinstance(exc, ReadkeeperError):
        return to_rpc_error(exc)
    if isinstance(exc, RecursionError):  # the input's nesting, never a fault of ours
        return to_rpc_error(too_deep(method))
    return internal_error(method, exc)


def to_rpc_error(exc: ReadkeeperError) -> JsonRpcException:
    """A refusal as its reply: `bad_params` is LSP's InvalidParams, any other kind its
    RequestFailed, with the error's data."""
    code = INVALID_PARAMS if exc.kind == "bad_params" else REQUEST_FAILED
    return JsonRpcException(message=exc.message, code=code, data=exc.to_data())


def internal_error(method: str, exc: Exception) -> JsonRpcException:
    """A fault of ours: the client gets the exception's type and message, the log the
    traceback."""
    log.error("%s failed unexpectedly", method, exc_info=exc)
    reason = fault_reason(exc)
    return JsonRpcException(
        code=INTERNAL_ERROR,
        message=f"{method} failed on a fault in readkeeper ({reason}); it is not something "
        "the request did wrong, and the server's log has the details. Other requests work.",
        data={"kind": "internal", "reason": reason},
    )


def with_kind(error: types.ResponseError) -> types.ResponseError:
    """`error` with a `data.kind`. pygls' internal errors carry the traceback in `data`:
    the log has it (pygls logs it); the client gets the short reason only. A message of
    pygls' own echoes what the request named (`Method Not Found: <the method>`): past
    `_PYGLS_WORDS` characters its middle is cut (round 39: a method named by 5,000,000
    control characters was answered with 30 MB)."""
    data = error.data if isinstance(error.data, dict) else {}
    kind = KIND_OF_CODE.get(error.code)
    if len(error.message) > _PYGLS_WORDS and "kind" not in data:
        half = _PYGLS_WORDS // 2
        message = cut_middle(error.message, half, half, part=printable)
        error = types.ResponseError(code=error.code, message=message, data=error.data)
    if "kind" in data or kind is None:
        return error
    if kind == "internal":
        data = {"reason": error.message}
    return types.ResponseError(code=error.code, message=error.message, data={**data, "kind": kind})


_PYGLS_WORDS = 1024


def carries_kind(error: BaseException | None) -> bool:
    """A readkeeper error reply (it carries `data.kind`): a refusal the agent can act on,
    or an `internal` fault whose traceback `internal_error` has logged already."""
    return (
        isinstance(error, JsonRpcException)
        and isinstance(error.data, dict)
        and "kind" in error.data
    )
