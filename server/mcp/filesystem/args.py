"""A drop-in call's arguments, checked (a `bad_params` naming the field otherwise), and
its way to the core (`Served`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from ...errors import ReadkeeperError
from ...protocol.convert import converter

Call = Callable[[str, dict[str, Any]], Any]
Content = types.TextContent | types.ImageContent


@dataclass
class Served:
    """One call's way to the core, and the roots it may reach."""

    call: Call
    roots: Callable[[], list[str]]
    session: str | None = None
    # Callers sharing one session that cannot be told apart (HTTP without a session
    # id): none may get a stub for what another read.
    force_reads: bool = False

    def ask(self, method: str, **params: Any) -> Any:
        """`method` with `params` (None values left out), in this call's session."""
        sent = {k: v for k, v in params.items() if v is not None}
        if self.session is not None:
            sent["session"] = self.session
        if self.force_reads and method in ("read", "readMany") and not sent.get("estimate"):
            sent["force"] = True
        return self.call(method, sent)


def string(args: dict[str, Any], field: str) -> str:
    value = args.get(field)
    if not isinstance(value, str) or not value:
        raise ReadkeeperError("bad_params", f"{field} must be a non-empty string.", field=field)
    return value


def count(args: dict[str, Any], field: str) -> int | None:
    value = args.get(field)
    if value is None:
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ReadkeeperError(
            "bad_params", f"{field} must be a whole number, 0 or more.", field=field
        )
    if int(value) != value:
        raise ReadkeeperError("bad_params", f"{field} must be a whole number.", field=field)
    try:  # the protocol's range, said here with the drop-in's name for the field
        number: int = converter.structure(int(value), int)
    except ValueError as exc:
        raise ReadkeeperError(
            "bad_params", f"Invalid params: {field} {exc}.", field=field
        ) from None
    return number


def flag(args: dict[str, Any], field: str) -> bool:
    value = args.get(field, False)
    if value in (None, False, "false"):
        return False
    if value in (True, "true"):
        return True
    raise ReadkeeperError("bad_params", f"{field} must be true or false.", field=field)


def text_block(value: str) -> types.TextContent:
    return types.TextContent(text=value)
