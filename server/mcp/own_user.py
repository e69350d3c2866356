"""`readkeeper mcp --http` answers only the user who started it.

The SDK's Host and Origin checks stop a web page (DNS rebinding), not another local
user: any process on the machine can reach 127.0.0.1. So every HTTP request is checked,
before the SDK sees it, for the uid of the socket it came from (`peers`), and a request
from anyone else is answered 403 with a JSON-RPC error of kind `refused`. Each request
is checked, not each connection: ASGI shows requests only, and a check costs one
sock_diag look-up (microseconds).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from .. import peers

log = logging.getLogger("readkeeper")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

# JSON-RPC's code for a request that may not be served as sent.
INVALID_REQUEST = -32600


class OwnUserOnly:
    """ASGI middleware: requests from sockets of another uid get 403, never the app."""

    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve `scope` when its peer is our user; else refuse it."""
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        why = peers.refusal(scope.get("server"), client)
        if why is None:
            await self.app(scope, receive, send)
            return
        peer = f"{client[0]}:{client[1]}" if client else "?"
        log.warning("Refused an HTTP request from %s: %s", peer, why)
        if scope["type"] != "http":  # a websocket: nothing to answer with
            await send({"type": "websocket.close", "code": 1008})
            return
        await send(
            {
                "type": "http.response.start",
                "status": 403,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": refusal_body(why)})


def refusal_body(why: str) -> bytes:
    """The JSON-RPC error a refused request gets."""
    message = (
        f"readkeeper mcp serves only the user who started it ({why}). "
        "Start your own: readkeeper mcp --http --port 0."
    )
    error = {"code": INVALID_REQUEST, "message": message, "data": {"kind": "refused"}}
    return json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
