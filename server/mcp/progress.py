"""MCP progress notifications of a long tool call (progress.py's steps), sent when the
client asked for them with a `progressToken` in the call's `_meta`, through the SDK's
own `report_progress` of the request.

MCP's progress is one number that must grow with each notification: each step counts
one, its message says what it is. Steps come from worker threads; each is handed to
the event loop and sent in order, and all are sent before the tool's result (no
progress may follow the answer).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from typing import Any

from .. import quoting
from ..progress import TITLES

log = logging.getLogger("readkeeper")


def sender(ctx: Any, tool: str) -> ToolProgress | None:
    """The `progress.Send` for a tool call, or None: a tool without long work, or a
    client that sent no progress token."""
    meta = getattr(ctx, "meta", None)
    token = meta.get("progress_token") if isinstance(meta, dict) else None
    if tool not in TITLES or token is None:
        return None
    return ToolProgress(ctx.session, asyncio.get_running_loop())


class ToolProgress:
    """One call's notifications, sent through the event loop from any thread."""

    def __init__(self, session: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._session = session
        self._loop = loop
        self._lock = asyncio.Lock()
        self._count = 0
        self._sent: list[concurrent.futures.Future[None]] = []

    def __call__(self, stage: str, message: str, percentage: int | None) -> None:
        """Send one stage (a `progress.Send`), from any thread."""
        step = self._step(message if stage != "end" else "done")
        try:
            self._sent.append(asyncio.run_coroutine_threadsafe(step, self._loop))
        except RuntimeError:  # the loop has closed: the server is going
            step.close()

    async def _step(self, message: str) -> None:
        async with self._lock:
            self._count += 1
            try:
                said = quoting.valid_unicode(message)  # a path may name bytes not UTF-8
                await self._session.report_progress(float(self._count), None, said)
            except Exception as exc:  # the client has gone: the call's answer says the rest
                log.debug("A progress notification was not sent: %s", exc)

    async def settle(self) -> None:
        """Wait until every notification is sent (before the tool's result)."""
        if self._sent:
            await asyncio.gather(*(asyncio.wrap_future(f) for f in self._sent))
