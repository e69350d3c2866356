"""The settings warnings `readkeeper mcp` says on stderr at its start, also sent to a
client that reads the server's log, as MCP log messages (`notifications/message`,
level `warning`): an agent's host shows those, where the server's stderr is often
nowhere to be seen.

A client reads the log when it asks to: before 2026-07-28 by `logging/setLevel` (at
`warning` or below), since then by the log level it opts into on a request (the SDK
delivers a request's log messages on that request's own stream, and drops those the
request did not opt into). Each connection (stdio's one, each HTTP session) is sent
the warnings once, at the first such moment: after initialization, since both come
after it. A request answered without the SDK (early.py, quick.py) sends none; the next
one the SDK serves does.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any, get_args

import mcp_types as types
from mcp.server.connection import allowed_log_levels
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

log = logging.getLogger("readkeeper")

LEVEL: types.LoggingLevel = "warning"
LOGGER = "readkeeper"


class SettingsLog:
    """Which connections were sent the settings warnings."""

    def __init__(self, said: list[str]) -> None:
        self.said = said
        self._told: set[Any] = set()

    async def set_level(
        self, ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        """`logging/setLevel`: the client reads the log from `params.level` up."""
        levels = get_args(types.LoggingLevel)
        if levels.index(params.level) <= levels.index(LEVEL):
            await self._tell(ctx)
        return types.EmptyResult()

    async def on_request(self, ctx: ServerRequestContext[Any]) -> None:
        """A request the SDK serves: on 2026-07-28 connections, one that opted into
        the log at `warning` or below carries the warnings."""
        if LEVEL in allowed_log_levels(ctx.protocol_version, ctx.meta) and _opted_in(ctx):
            await self._tell(ctx)

    async def _tell(self, ctx: ServerRequestContext[Any]) -> None:
        connection = _connection(ctx)
        if not self.said or connection in self._told:
            return
        self._told.add(connection)
        with warnings.catch_warnings():  # deprecated at 2026-07-28, and the way before it
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            for warning in self.said:
                await ctx.session.send_log_message(LEVEL, warning, logger=LOGGER)


def _opted_in(ctx: ServerRequestContext[Any]) -> bool:
    """Whether this request chose its log levels (2026-07-28): before that version
    every level may be sent, but only `logging/setLevel` says the client reads them."""
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def _connection(ctx: ServerRequestContext[Any]) -> Any:
    """What one client's log is: its HTTP session, else the process (stdio)."""
    headers = getattr(ctx.request, "headers", None)
    return None if headers is None else headers.get("mcp-session-id")


__all__ = ["SettingsLog"]
