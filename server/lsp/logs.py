"""Where the language server's logs go: stderr (stdout is the protocol), readkeeper's
warnings mirrored to the editor's log (`window/logMessage`), and pygls' own logging kept
quiet enough for large reads.
"""

from __future__ import annotations

import asyncio
import logging
from typing import ClassVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from .. import log_lines
from ..log_lines import LogLines
from .rpc_errors import carries_kind


class ClientLogHandler(logging.Handler):
    """Mirrors readkeeper's warnings to the editor's log (`window/logMessage`)."""

    LEVELS: ClassVar[dict[int, types.MessageType]] = {
        logging.ERROR: types.MessageType.Error,
        logging.WARNING: types.MessageType.Warning,
        logging.INFO: types.MessageType.Info,
    }

    def __init__(self, server: LanguageServer) -> None:
        super().__init__(logging.WARNING)
        self.setFormatter(LogLines())  # one line each, as on stderr
        self._server = server
        self.loop: asyncio.AbstractEventLoop | None = None  # set once `initialized` came

    def emit(self, record: logging.LogRecord) -> None:
        """Send `record` to the editor, from the event loop."""
        if self.loop is None or self.loop.is_closed():
            return
        # Its message and traceback in all, as stderr cuts a message: pygls logs what a
        # request named (an unknown command of 2,000,000 characters, round 40).
        message = log_lines.cut(self.format(record))
        params = types.LogMessageParams(
            type=self.LEVELS.get(record.levelno, types.MessageType.Log), message=message
        )
        # Messages are written from the event loop only, never from a worker thread.
        self.loop.call_soon_threadsafe(self._server.window_log_message, params)


class _NoKindTracebacks(logging.Filter):
    """pygls logs every error reply with a traceback; for replies with a kind that is
    noise in the editor's log (a refusal is an outcome; a fault's own traceback is
    logged where it happened), so it is left out."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and carries_kind(record.exc_info[1]))


def quiet_pygls() -> None:
    """Keep pygls' logging to what is worth reading (called once, before serving)."""
    for name in ("pygls", "pygls.protocol"):
        # pygls logs every message body at INFO: far too costly for large reads.
        logging.getLogger(name).setLevel(logging.WARNING)
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_NoKindTracebacks())
