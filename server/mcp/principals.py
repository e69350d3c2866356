"""Whose sessions an MCP call's are (state/sessions.py): the door it came through.

A stdio process is one caller, the only one of its core (or, attached, the editor's
server makes its connection a principal of its own). Over HTTP each `Mcp-Session-Id`
is a principal, and the callers without one (2026-07-28 clients, each request standing
alone) are one principal together: nothing tells them apart, so they share their session
names (and their default session, whose reads are never answered with a stub). A session
name passed by one principal never reaches another's session of that name.
"""

from __future__ import annotations

from typing import Any

from mcp.server.context import ServerRequestContext

from ..state.sessions import EDITOR

# The session of HTTP calls without an Mcp-Session-Id (2026-07-28 clients send none:
# each request stands alone), unless they pass `session`.
SHARED_HTTP_SESSION = "mcp-http"
SHARED_HTTP_PRINCIPAL = "http"


def connection(ctx: ServerRequestContext[Any]) -> tuple[str | None, str]:
    """The default session of this connection (None on stdio, where the core's default
    serves) and its principal."""
    headers = getattr(ctx.request, "headers", None)
    if headers is None:
        return None, EDITOR
    session_id = headers.get("mcp-session-id")
    if not session_id:
        return SHARED_HTTP_SESSION, SHARED_HTTP_PRINCIPAL
    return f"mcp-{session_id[:16]}", f"http-{session_id[:64]}"


class ForPrincipal:
    """A backend whose calls are served in `principal`'s sessions."""

    def __init__(self, backend: Any, principal: str) -> None:
        self.backend = backend
        self.principal = principal

    def call(self, method: str, params: dict[str, Any]) -> Any:
        """Serve one call (blocking) for this principal."""
        return self.backend.call(method, params, principal=self.principal)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.backend, name)


def for_principal(backend: Any, principal: str) -> Any:
    """`backend`, its calls served for `principal` (as it is, for stdio's)."""
    return backend if principal == EDITOR else ForPrincipal(backend, principal)


__all__ = ["SHARED_HTTP_SESSION", "ForPrincipal", "connection", "for_principal"]
