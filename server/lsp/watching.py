"""The watcher as the editor sees it: its change notices sent as
`readkeeper/didChangeReadFiles`, its warnings shown to the user, and its setup shown as
work-done progress.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from ..protocol import DidChangeReadFilesParams, FileChange, unstructure
from .server import ReadkeeperServer

log = logging.getLogger("readkeeper")

DID_CHANGE_READ_FILES = "readkeeper/didChangeReadFiles"


async def start_watching(ls: ReadkeeperServer) -> None:
    """Start the watcher (after `initialized`, once its modules are loaded:
    `ReadkeeperServer.load`; its setup runs on its own thread), with its notices sent as
    readkeeper/didChangeReadFiles. A `shutdown` that came meanwhile has closed the core,
    which then refuses to start it."""
    loop = asyncio.get_running_loop()

    # The loop may close between a check and a call (the server shutting down while the
    # watcher's thread reports): then the call raises RuntimeError.
    def notice(session: str, changes: list[FileChange]) -> None:
        payload = unstructure(DidChangeReadFilesParams(session, changes))
        with contextlib.suppress(RuntimeError):  # shutting down: nobody to tell
            loop.call_soon_threadsafe(ls.protocol.notify, DID_CHANGE_READ_FILES, payload)

    def warn(message: str) -> None:
        # The watcher's one-off warnings (a fallback to polling, a root it cannot watch)
        # change what the user can expect of change notices: shown, not only logged.
        try:
            loop.call_soon_threadsafe(ls.notify_user, message, types.MessageType.Warning)
        except RuntimeError:  # the loop has closed
            log.warning("%s", message)

    ls.core.notices.on_notice = notice
    ls.core.start_watching(warn, WatchProgress(ls, loop))


class WatchProgress:
    """Work-done progress for the watcher's setup, when the client supports it. Called
    from the watcher's threads with ("begin" | "report" | "end", message)."""

    def __init__(self, ls: LanguageServer, loop: asyncio.AbstractEventLoop) -> None:
        self._ls = ls
        self._loop = loop
        self._lock = asyncio.Lock()
        self._token: str | None = None
        self._count = 0

    def __call__(self, stage: str, message: str) -> None:
        """Show one step of the setup, from any thread, when the client can show it."""
        window = self._ls.client_capabilities.window
        if window and window.work_done_progress and not self._loop.is_closed():
            asyncio.run_coroutine_threadsafe(self._step(stage, message), self._loop)

    async def _step(self, stage: str, message: str) -> None:
        progress = self._ls.work_done_progress
        async with self._lock:  # steps run in the order they were called
            if stage == "begin":
                self._count += 1
                token = f"readkeeper-watch-{os.getpid()}-{self._count}"
                self._token = None
                try:
                    await asyncio.wait_for(progress.create_async(token), 10)
                except Exception as exc:  # no progress, then; the watcher carries on
                    log.info("window/workDoneProgress/create failed: %s", exc)
                    return
                self._token = token
                title = "readkeeper: watching the workspace"
                progress.begin(token, types.WorkDoneProgressBegin(title=title, message=message))
            elif self._token is not None and stage == "report":
                progress.report(self._token, types.WorkDoneProgressReport(message=message))
            elif self._token is not None and stage == "end":
                progress.end(self._token, types.WorkDoneProgressEnd(message=message))
                self._token = None
