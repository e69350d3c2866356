"""The one language server a readkeeper process runs: a `ReadkeeperServer` with every
handler registered, and `serve`, which runs it until `exit`.
"""

from __future__ import annotations

import os
import sys
import threading

from . import documents, lifecycle, methods
from .logs import quiet_pygls
from .server import ReadkeeperServer


def _build() -> ReadkeeperServer:
    built = ReadkeeperServer()
    for table in (lifecycle.FEATURES, documents.FEATURES, methods.METHODS):
        for method, handler in table.items():
            built.feature(method)(handler)
    return built


server = _build()

# After `exit`, how long cleanup may take before the process ends regardless (a handler
# stuck in a system call must not keep it alive).
EXIT_GRACE_S = 3.0


def serve(tcp: tuple[str, int] | None = None) -> int:
    """Serve until `exit` or the end of input; the exit code for the process."""
    quiet_pygls()
    code = server.serve_stdio() if tcp is None else server.serve_tcp(*tcp)
    deadline = threading.Timer(EXIT_GRACE_S, _exit_now, (code,))
    deadline.daemon = True  # a normal exit does not wait for it
    deadline.start()
    return code


def _exit_now(code: int) -> None:
    try:
        sys.stderr.flush()
    finally:
        os._exit(code)
