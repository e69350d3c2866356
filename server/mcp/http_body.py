"""A request body read whole by an ASGI middleware, given again to the app it wraps
(http_limits.py reads it to count the request, http_cancels.py to take out cancels)."""

from __future__ import annotations

from starlette.types import Message, Receive


def replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that gives the app `body`, read already, once, then what the client
    sends next (its disconnect)."""
    given = False

    async def again() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        message: Message = await receive()
        return message

    return again


__all__ = ["replay"]
