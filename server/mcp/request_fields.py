"""A request's own fields the SDK refuses are named, as a tool's arguments are.

The SDK checks a request's params against the protocol's schema (`_meta.progressToken`
a string or an integer, `cursor` a string, `name` a string, `arguments` an object) and
answers a failure "Invalid request parameters" with no field, no kind and no value:
NaN for a progressToken, 1e400 for a cursor, and the agent is left to guess. A server
middleware, which every request passes through on every transport (stdio, HTTP),
turns that failure into `bad_params` naming the field and echoing the value as sent
(`protocol.as_sent`), with the next call that works.
"""

from __future__ import annotations

from typing import Any

from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from .. import quoting
from ..errors import shown_name
from ..protocol.convert import as_sent

INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601

# What a pydantic error type (or a union's branch) says the field takes.
_TAKES = {
    "str": "a string",
    "string_type": "a string",
    "int": "a whole number",
    "int_type": "a whole number",
    "int_from_float": "a whole number",
    "finite_number": "a whole number",
    "int_parsing": "a whole number",
    "float": "a number",
    "float_type": "a number",
    "bool": "true or false",
    "bool_type": "true or false",
    "dict_type": "an object",
    "model_type": "an object",
    "list_type": "a list",
}


class NamedRefusals:
    """Server middleware: the SDK's refusal of a request's params, as `bad_params`
    naming the field."""

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        try:
            return await call_next(ctx)
        except ValidationError as exc:
            raise refused(exc, getattr(ctx, "params", None)) from None
        except MCPError as exc:
            raise unknown(exc, getattr(ctx, "method", None)) from None


def unknown(exc: MCPError, method: Any) -> MCPError:
    """The SDK's "Method not found" with a kind and the call that works: a notification's
    method sent with an id (`notifications/cancelled`) is said to be one, as the LSP
    front end says it (lsp/endpoint.py); any other error as it is."""
    if exc.code != METHOD_NOT_FOUND or exc.data != method or not isinstance(method, str):
        return exc
    name = shown_name(method)  # cut in its middle when long (round 39: 600,000 characters)
    if method.startswith("notifications/"):
        why = (
            f"There is no request {name}: it is a notification, so it was not run; "
            "send it without an id."
        )
    else:
        why = f"There is no method {name}: tools/list names the tools, each called with tools/call."
    return MCPError(code=METHOD_NOT_FOUND, message=why, data={"kind": "unsupported"})


def refused(exc: ValidationError, params: Any) -> MCPError:
    """The `bad_params` error naming the first field `exc` refuses in `params`."""
    errors = exc.errors()
    loc = list(errors[0]["loc"])
    skip = 1 if loc[:1] == ["params"] else 0
    path: list[str | int] = []
    value: Any = params
    for part in loc[skip:]:  # as far as the params hold it (a union's branch names do not)
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value):
            value = value[int(part)]
        else:
            break
        path.append(part)
    words = []
    for error in errors:  # each branch of a union says what it takes
        branch = error["loc"][skip + len(path) : skip + len(path) + 1]
        words += [_TAKES.get(str(part)) for part in branch] + [_TAKES.get(error["type"])]
    takes = " or ".join(dict.fromkeys(word for word in words if word))
    missing = errors[0]["type"] == "missing"
    if missing:  # the field absent: named by the first part the params lack
        path += [part for part in loc[skip + len(path) :] if isinstance(part, str)][:1]
    field = ".".join(str(part) for part in path) or "params"
    if missing:
        problem, hint = "is required", " Send it as MCP's schema gives it."
    else:
        problem = f"expected {takes or 'another value'}, got {as_sent(value)}"
        hint = " Send it as MCP's schema gives it, or leave it out."
    message = quoting.phrase(f"Invalid params: {field} {problem}.") + hint
    data = {"kind": "bad_params", "field": field}
    return MCPError(code=INVALID_PARAMS, message=message, data=data)


__all__ = ["NamedRefusals", "refused", "unknown"]
