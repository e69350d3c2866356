"""The pygls language server readkeeper runs: what it holds (the core, the editor's open
documents, the attach socket), how it serves a connection (over readkeeper's own stream
reader, `transport`, never pygls'), and how handlers run blocking core work off the
event loop.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

from lsprotocol import types
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..core import Readkeeper
from . import transport
from .cancels import Work
from .editor import EditorBuffers, OpenDocument
from .endpoint import ReadkeeperProtocol
from .logs import ClientLogHandler
from .rpc_errors import carries_kind

if TYPE_CHECKING:
    from ..attach.listener import Listener

log = logging.getLogger("readkeeper")
T = TypeVar("T")


class ReadkeeperServer(LanguageServer):
    """readkeeper's language server: one core, served to the editor over LSP and to
    agents that attach (`readkeeper mcp`) over the attach socket."""

    def __init__(self) -> None:
        super().__init__("readkeeper", __version__, protocol_cls=ReadkeeperProtocol)
        self.open_documents: dict[str, OpenDocument] = {}  # by real path
        self.buffers = EditorBuffers(self, self.open_documents)
        self.core = Readkeeper(buffers=self.buffers)
        self.endpoint.core = self.core
        self.initialization_settings: dict[str, Any] = {}
        # each settings warning is shown once: the hashes of the latest shown (lifecycle.py)
        self.settings_warned: OrderedDict[int, None] = OrderedDict()
        self.client_log = ClientLogHandler(self)
        log.addHandler(self.client_log)
        self.attach: Listener | None = None  # the socket `readkeeper mcp` attaches to

    @property
    def endpoint(self) -> ReadkeeperProtocol:
        """The protocol object, as readkeeper's own class."""
        protocol = self.protocol
        assert isinstance(protocol, ReadkeeperProtocol)
        return protocol

    def serve_stdio(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
        """Serve on stdio until `exit` or the end of input; the process exit code."""
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        return self._serve(transport.serve_stream(self.endpoint, stdin or sys.stdin.buffer))

    def serve_tcp(self, host: str, port: int) -> int:
        """Serve the first client on `host:port` until it ends; the process exit code."""
        endpoint = self.endpoint
        return self._serve(
            transport.serve_tcp(endpoint, host, port, lambda writer: endpoint.set_writer(writer))
        )

    # pygls' own entry points, for code that calls them: never its stream reader.
    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """pygls' name for `serve_stdio`."""
        self.serve_stdio(stdin, stdout)

    def start_tcp(self, host: str, port: int) -> None:
        """pygls' name for `serve_tcp`."""
        self.serve_tcp(host, port)

    def _serve(self, connection: Coroutine[Any, Any, int]) -> int:
        try:
            return asyncio.run(_exiting_on_signals(connection))
        except BrokenPipeError:
            log.error("The client closed its end of the connection; shutting down.")
            return 1
        except KeyboardInterrupt:
            return 1
        finally:
            self.stop_attach()
            self.core.close()
            # Never wait for a handler still running: `exit` ends the process now.
            if self._thread_pool is not None:
                self._thread_pool.shutdown(wait=False, cancel_futures=True)

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Log a failure pygls reports, unless it is a reply with a kind."""
        if not carries_kind(error):  # a reply with a kind was logged where it was made
            log.error("%s", error)

    def notify_user(self, message: str, kind: types.MessageType) -> None:
        """Log `message` and show it to the user."""
        log.warning("%s", message)
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def load(self) -> None:
        """Import what serving needs beyond answering `initialize` (blocking: for a
        thread): the read pipeline first, then the watcher's modules (watchdog, pathspec)
        with the change notices, the attach socket's and the PDF worker's. Each would
        otherwise load where it is first used, on the event loop."""
        self.core.load()
        from ..attach import listener  # noqa: F401
        from ..read.readers import worker  # noqa: F401

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """Run blocking core work on the thread pool, never on the event loop. A client's
        cancel takes it off the queue if it has not started, and else lets it finish
        (cancels.py): only a PDF render it waits for is stopped (worker.py), and then
        the request is answered `cancelled`."""
        from ..read.readers.worker import Cancelled, cancellable

        stop = threading.Event()
        work = self.thread_pool.submit(cancellable, stop, function, *args)
        self.endpoint.works.started(Work(work, stop))
        try:
            return await asyncio.wrap_future(work)
        except Cancelled:
            raise asyncio.CancelledError from None  # the render stopped: nothing recorded
        except asyncio.CancelledError:  # the loop is closing: nobody waits for the answer
            stop.set()
            raise

    def lend_loop(self) -> None:
        """Let an edit of an open buffer, run on a worker thread, send
        `workspace/applyEdit` through the running event loop."""
        self.buffers.loop = asyncio.get_running_loop()

    # --- the attach socket ---

    def start_attach(self) -> None:
        """Let `readkeeper mcp` for this workspace attach: it is served by this core (its
        read-state, watcher and the editor's buffers) through `calls`, like LSP requests."""
        from ..attach.listener import Listener

        loop = asyncio.get_running_loop()

        def lend_loop(method: str) -> None:
            self.buffers.loop = loop  # an edit of an open buffer uses applyEdit

        listener = Listener(self.core, before_call=lend_loop)
        try:
            started = listener.start(list(self.core.workspace.roots))
        except OSError as exc:
            log.warning("Agents outside the editor cannot attach to readkeeper: %s", exc)
            return
        if started:
            self.attach = listener
        elif listener.refused:  # someone's doing, or a broken set-up: the user must know
            self.notify_user(
                "readkeeper: agents outside the editor (readkeeper mcp) cannot attach, so "
                f"they do not see your unsaved changes: {listener.refused}",
                types.MessageType.Warning,
            )

    def stop_attach(self) -> None:
        """Close the attach socket and remove its discovery files."""
        listener, self.attach = self.attach, None
        if listener is not None:
            listener.close()


def _stop(signum: int) -> None:
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise SystemExit(128 + signum)


async def _exiting_on_signals(connection: Coroutine[Any, Any, int]) -> int:
    """`connection`, served until SIGTERM, SIGHUP or SIGINT ends it the way `exit` does
    (the `finally` of `_serve` removes the attach socket and its discovery files), never
    killed with them left behind. Through the event loop's own handlers: a handler set
    with signal.signal runs only when the main thread runs, and the kernel may give the
    signal to any thread, so the loop slept on in epoll_wait with nothing to wake it (a
    SIGINT left the server running, CI round 23)."""
    if threading.current_thread() is threading.main_thread():  # else a test's thread
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            # SIGINT's is asyncio.run's own (it cancels the task, from the main thread)
            if signum == signal.SIGINT or signal.getsignal(signum) == signal.SIG_DFL:
                loop.add_signal_handler(signum, _stop, signum)
    return await connection
