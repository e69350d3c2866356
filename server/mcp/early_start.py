"""The MCP server's backend started when the handshake ends (`notifications/initialized`,
or the first `tools/list`: a 2026-07-28 connection sends no notification, and a client
lists the tools as its handshake ends) rather than at the first tool call, when `--root`
names the roots (else they may come from the client's MCP roots, asked at the first
call).

A core starts its watcher, loads its token table and, once the watcher is set up and the
machine is not busy, builds glob's listing ahead (search/ahead.py): started at the first
call, that call waits for the core's start and meets nothing kept (a first glob is then
ripgrep's sort of the whole tree, bench/README.md). Started at the handshake, the agent's
first call usually comes after it. It is the same backend the first call would make
(`McpFrontEnd._backend_for`: attached to the editor's readkeeper when one serves these
roots, else a core of our own), made on a thread of its own so that no request waits
for it; the first call takes it, waiting for it if it is still being made. Nothing it
keeps answers differently: what changes after it starts is heard by its watcher.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from .backends import Backend

log = logging.getLogger("readkeeper")


class EarlyStart:
    """One backend made ahead, on a thread, for the first call to take."""

    def __init__(self, make: Callable[[], Backend]) -> None:
        self._make = make
        self._thread: threading.Thread | None = None
        self._backend: Backend | None = None
        self._lock = threading.Lock()

    @property
    def begun(self) -> bool:
        return self._thread is not None

    def begin(self) -> None:
        """Start making the backend (once; later calls do nothing)."""
        with self._lock:
            if self._thread is not None:
                return
            self._thread = threading.Thread(
                target=self._run, name="readkeeper-mcp-start", daemon=True
            )
            self._thread.start()

    def _run(self) -> None:
        try:
            self._backend = self._make()
        except Exception:  # the first call starts it again, and says why if it fails
            log.exception("Starting readkeeper's core when the handshake ended failed")

    def take(self) -> Backend | None:
        """The backend made (waiting for it), handed over once; None when none was."""
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            backend, self._backend = self._backend, None
        return backend

    def close(self) -> None:
        """Stop a backend made and never taken."""
        backend = self.take()
        if backend is not None:
            backend.close()
