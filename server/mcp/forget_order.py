"""A `forget` over `readkeeper mcp` on stdio covers every call the client sent before it.

The SDK serves each call as a task of its own, on worker threads: a forget read right
behind a grep ran first, said `forgotten: 0`, and the grep's lines were recorded as
seen after it (a grep records them after its answer, state/later.py), so an edit of
them went through for an agent holding nothing. So a forget is a barrier in the order
the lines were read: it is handed on once every call read before it is answered (and
settles what they left, as every call settles its session first), and no line after it
is read until it is answered, so no call, quick or not, sees the state it drops.
A forget is rare, and cheap: the wait costs nothing else.
"""

from __future__ import annotations

import asyncio
from typing import Any

FORGET = "forget"


class Barrier:
    """The forget read and not yet answered, if any, and what it waits for."""

    def __init__(self) -> None:
        self.forget: Any = None  # its request id
        self._answered = asyncio.Event()

    @property
    def up(self) -> bool:
        """Whether a forget is in flight: no line is read after it until it is answered."""
        return self.forget is not None

    def asked(self, message: dict[str, Any], msg_id: Any) -> None:
        """Note a request about to be handed on."""
        params = message.get("params")
        named = params.get("name") if isinstance(params, dict) else None
        if message.get("method") == "tools/call" and named == FORGET:
            self.forget = msg_id

    def answered(self, msg_id: Any) -> None:
        """Note an answer written."""
        if msg_id == self.forget:
            self.forget = None
        self._answered.set()

    async def earlier(self, unanswered: set[Any]) -> None:
        """Wait until every request but the forget itself is answered (`unanswered`
        is the writer's own set, emptied as answers are written)."""
        while self.forget is not None and unanswered - {self.forget}:
            self._answered.clear()
            await self._answered.wait()


__all__ = ["Barrier"]
