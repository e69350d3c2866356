"""Work-done progress of a readkeeper/* request (progress.py's steps, shown by the editor):
with the token the client sent in the request's `workDoneToken`, or else one the server
creates (`window/workDoneProgress/create`) when the client says it can show progress.

The core's steps come from worker threads; each is handed to the event loop and sent
in the order it came (one lock), the create answered before the begin.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import logging
import os
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from ..progress import TITLES

log = logging.getLogger("readkeeper")

_made = itertools.count(1)  # the server's own tokens, one a request that needs one


def sender(ls: LanguageServer, method: str, raw: Any) -> RequestProgress | None:
    """The `Send` for a request's progress, or None when it shows none (a method without
    long work, or a client that can show no progress and sent no token)."""
    name = method.removeprefix("readkeeper/")
    if name not in TITLES:
        return None
    token = raw.get("workDoneToken") if isinstance(raw, dict) else None
    if not isinstance(token, (str, int)) or isinstance(token, bool):
        token = None
        window = ls.client_capabilities.window
        if not (window and window.work_done_progress):
            return None
    return RequestProgress(ls, asyncio.get_running_loop(), token, TITLES[name])


class RequestProgress:
    """One request's progress, sent through the event loop from any thread."""

    def __init__(
        self,
        ls: LanguageServer,
        loop: asyncio.AbstractEventLoop,
        token: str | int | None,
        title: str,
    ) -> None:
        self._ls = ls
        self._loop = loop
        self._token = token
        self._given = token is not None  # the client's own: no create
        self._title = title
        self._lock = asyncio.Lock()
        self._failed = False
        self._percentage = 0
        self._sent: list[concurrent.futures.Future[None]] = []

    def __call__(self, stage: str, message: str, percentage: int | None) -> None:
        """Send one stage (a `progress.Send`), from any thread."""
        step = self._step(stage, message, percentage)
        try:
            self._sent.append(asyncio.run_coroutine_threadsafe(step, self._loop))
        except RuntimeError:  # the loop has closed: the server is going
            step.close()

    async def settle(self) -> None:
        """Wait until every stage is sent, when the token is the client's: it stands
        for the request, so its progress ends before the reply. (A token of the
        server's own is not waited on: its create waits for the client.)"""
        if self._given and self._sent:
            await asyncio.gather(*(asyncio.wrap_future(f) for f in self._sent))

    async def _step(self, stage: str, message: str, percentage: int | None) -> None:
        progress = self._ls.work_done_progress
        async with self._lock:
            if self._failed:
                return
            if percentage is not None:  # never backwards, as LSP asks
                percentage = self._percentage = max(self._percentage, percentage)
            if stage == "begin":
                if self._token is None:
                    token = f"readkeeper-{os.getpid()}-{next(_made)}"
                    try:
                        await asyncio.wait_for(progress.create_async(token), 10)
                    except Exception as exc:  # no progress, then; the work carries on
                        log.info("window/workDoneProgress/create failed: %s", exc)
                        self._failed = True
                        return
                    self._token = token
                begin = types.WorkDoneProgressBegin(
                    title=self._title, message=message, percentage=percentage
                )
                progress.begin(self._token, begin)
            elif self._token is None:
                return  # never begun
            elif stage == "report":
                report = types.WorkDoneProgressReport(message=message, percentage=percentage)
                progress.report(self._token, report)
            elif stage == "end":
                progress.end(self._token, types.WorkDoneProgressEnd(message=message))
                # pygls keeps a future per token for good: one a request would grow it.
                progress.tokens.pop(self._token, None)
