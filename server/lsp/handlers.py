"""The language-server front end: pygls wiring only.

Each handler serves its request through `calls` (the dispatch the MCP front end and the
attach socket share: params typed, core called, result unstructured) off the event
loop, adding only what is LSP's own (asking the editor to allow a path outside the
workspace; lending its loop for `workspace/applyEdit`), and is registered with
`@request`, which turns a `ReadkeeperError` into a
JSON-RPC error whose `data.kind` names what happened (and any other exception into kind
`internal`). The stream is read by `transport.py`, not by pygls' reader; the LSP
lifecycle rules pygls leaves out (refusals before `initialize` and after `shutdown`,
one `initialize`, the exit code) are in `ReadkeeperProtocol`, which also serves quick
reads (`calls.quick`) itself, on the loop, with the reply the handler would send, and
writes every message with orjson. Logs go to stderr and `window/logMessage`; stdout is
the protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import os
import sys
import threading
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO, ClassVar, NamedTuple, TypeVar, cast

import attrs
import orjson
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.workspace import TextDocument

from .. import __version__, calls
from ..attach.listener import Listener
from ..core import Buffer, Readkeeper
from ..errors import ReadkeeperError
from ..files.paths import refused_root, uri_path
from ..protocol import (
    DiagnosticsParams,
    DidChangeReadFilesParams,
    FileChange,
    ReadParams,
    structure,
    unstructure,
)
from ..read.readers.worker import cancellable
from . import transport

if TYPE_CHECKING:  # edits.py loads with the first edit, as in the core
    from ..edit.edits import TextChange

log = logging.getLogger("readkeeper")
T = TypeVar("T")

NAMESPACE = "readkeeper/"
READ = "readkeeper/read"
# LSP's RequestFailed: "the request was valid but could not be carried out".
REQUEST_FAILED = -32803
INVALID_PARAMS = -32602
INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603
SERVER_NOT_INITIALIZED = -32002

# The kind of an error reply pygls makes itself (an unknown method, params that do not
# fit an LSP method, a fault in pygls): every failure the client sees has one.
# LSP's RequestCancelled: the client withdrew the request.
REQUEST_CANCELLED = -32800
KIND_OF_CODE = {
    -32700: "bad_params",
    INVALID_REQUEST: "bad_params",
    -32601: "unsupported",
    INVALID_PARAMS: "bad_params",
    INTERNAL_ERROR: "internal",
    SERVER_NOT_INITIALIZED: "bad_params",
    REQUEST_CANCELLED: "cancelled",
}


@attrs.define
class RawRequest:
    """A readkeeper request with its params kept as plain JSON (pygls would otherwise
    turn them into namedtuples); `protocol.structure` types them."""

    id: Any
    method: str
    jsonrpc: str
    params: Any = None


@attrs.define
class RawNotification:
    method: str
    jsonrpc: str
    params: Any = None


class Refused(NamedTuple):
    """The params of a read that `ReadkeeperProtocol` ran on the event loop and found
    outside the workspace: the `read` handler asks the user, without reading again."""

    params: ReadParams
    error: ReadkeeperError


# pygls' framing. The length is in bytes: orjson writes UTF-8 (pygls' json.dumps wrote
# ASCII, with escapes, so its length in characters was the same).
FRAME_HEADER = (
    b"Content-Length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"
)


class ReadkeeperProtocol(LanguageServerProtocol):
    """pygls' LSP protocol, as the `transport.Endpoint` the stream reader hands messages
    to, with the lifecycle rules pygls leaves out: a request before `initialize` or after
    `shutdown` gets an error reply (pygls drops it unanswered), `initialize` is accepted
    once (a second would re-root the sandbox), and `exit` ends the connection with LSP's
    exit code instead of `sys.exit` from inside a handler."""

    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        self.exit_code: int | None = None
        self.initialize_seen = False

    # --- transport.Endpoint ---

    def receive(self, data: dict[str, Any]) -> None:
        if self._refused(data) or self._read_inline(data):
            return
        try:
            message = self.structure_message(data)
        except JsonRpcException as exc:
            # Params that do not fit an LSP method: a request still gets its one reply.
            if "method" in data and "id" in data:
                self._send_response(data["id"], error=exc.to_response_error())
            else:
                log.warning("Ignored %s: %s", data.get("method", "a response"), exc.message)
            return
        self.handle_message(message)

    def _refused(self, data: dict[str, Any]) -> bool:
        """LSP's lifecycle: before `initialize` and after `shutdown`, a request is
        answered with an error and a notification dropped (except `exit`)."""
        method = data.get("method")
        if method is None or method == types.EXIT:
            return False  # a response, or the notification always let through
        if "id" not in data:
            if self.initialize_seen:
                return False  # after shutdown pygls drops it
            log.warning("Ignored %s: it came before initialize", method)
            return True
        if self._shutdown:
            why = f"The server is shut down, so {method} was not run: only exit is accepted now."
            self.send_error(data["id"], INVALID_REQUEST, why, "bad_params")
            return True
        if not self.initialize_seen and method != types.INITIALIZE:
            why = f"The server is not initialized, so {method} was not run: send initialize first."
            self.send_error(data["id"], SERVER_NOT_INITIALIZED, why, "bad_params")
            return True
        return False

    def _read_inline(self, data: dict[str, Any]) -> bool:
        """Serve a quick read (`calls.quick`) right here on the event loop, as the MCP
        front end does: pygls' way (a task, the hop to the thread pool and back, the
        converter) costs several times what such a read does. The reply is the one the
        `read` handler would send. False when the request is left to pygls.

        Such a read cannot be cancelled: it is over before a `$/cancelRequest` could be
        read. The core is called from this thread as well as the pool's: its shared
        state (read-states, snapshots, stats, diagnostics, the view cache) is under its
        own locks, and the token memo is a dict whose updates the GIL keeps whole."""
        if data.get("method") != READ or "id" not in data:
            return False
        raw = data.get("params")
        core = cast("ReadkeeperServer", self._server).core
        if not calls.quick(core, READ, raw):
            return False
        msg_id = data["id"]
        try:
            params = calls.params_for(READ, raw)
            result = calls.run(core, READ, params)
        except ReadkeeperError as exc:
            if exc.kind == "outside_workspace":  # the handler asks the user, asynchronously
                self.handle_message(RawRequest(msg_id, READ, data["jsonrpc"], Refused(params, exc)))
            else:
                self._send_response(msg_id, error=to_rpc_error(exc).to_response_error())
        except Exception as exc:
            self._send_response(msg_id, error=internal_error(READ, exc).to_response_error())
        else:
            # What pygls makes of a handler's result (`JsonRPCResponseMessage`), unconverted.
            self._send_data({"id": msg_id, "jsonrpc": "2.0", "result": result})
        return True

    def send_error(self, msg_id: Any, code: int, message: str, kind: str) -> None:
        # Plain JSON: lsprotocol's converter would drop JSON-RPC's null id.
        error = {"code": code, "message": message, "data": {"kind": kind}}
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": error})

    def ended(self) -> int:
        """The client closed the stream without `exit`: LSP's code as if it had sent it."""
        return 0 if self._shutdown else 1

    # --- pygls overrides ---

    def structure_message(self, data: dict[str, Any]) -> Any:
        method = data.get("method")
        if isinstance(method, str) and method.startswith(NAMESPACE):
            if "id" in data:
                return RawRequest(data["id"], method, data["jsonrpc"], data.get("params"))
            return RawNotification(method, data["jsonrpc"], data.get("params"))
        return super().structure_message(data)

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        super()._send_response(msg_id, result, error if error is None else with_kind(error))

    def _send_data(self, data: Any) -> None:
        """pygls' own, with orjson in place of `json.dumps` (a sixth of the time on a
        read's 95 KB reply): every message, pygls' and `_read_inline`'s, is written here."""
        if not data:
            return
        if self.writer is None:
            log.error("Unable to send data, no available transport!")
            return
        try:
            body = to_json(data, self._serialize_message)
            # Written at once: our writers (stdout, a socket) are never asynchronous.
            self.writer.write(FRAME_HEADER % len(body) + body if self._include_headers else body)
        except BrokenPipeError:
            raise  # the connection ends (transport.py)
        except Exception as error:
            log.exception("Sending a message failed")
            self._server._report_server_error(error, JsonRpcInternalError)

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Any:
        # A generator like pygls' own, which it runs step by step.
        if self.initialize_seen:
            raise JsonRpcException(
                code=INVALID_REQUEST,
                message="The server is already initialized, and its workspace roots are "
                "fixed at the first initialize: add or remove folders with "
                "workspace/didChangeWorkspaceFolders.",
                data={"kind": "bad_params"},
            )
        self.initialize_seen = True
        return (yield from super().lsp_initialize(params))

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> Any:  # pygls' is a generator; either kind runs
        self.exit_code = 0 if self._shutdown else 1


def to_json(data: Any, default: Callable[[Any], Any]) -> bytes:
    """`data` as JSON, objects that are not JSON (lsprotocol's types) through `default`
    (pygls' converter). What orjson refuses (text with lone surrogates: a file name that
    is not UTF-8) is written as pygls did, by the standard library in ASCII."""
    try:
        return orjson.dumps(data, default=default)
    except orjson.JSONEncodeError:
        return json.dumps(data, default=default).encode()


def with_kind(error: types.ResponseError) -> types.ResponseError:
    """`error` with a `data.kind`. pygls' internal errors carry the traceback in `data`:
    the log has it (pygls logs it); the client gets the short reason only."""
    data = error.data if isinstance(error.data, dict) else {}
    kind = KIND_OF_CODE.get(error.code)
    if "kind" in data or kind is None:
        return error
    if kind == "internal":
        data = {"reason": error.message}
    return types.ResponseError(code=error.code, message=error.message, data={**data, "kind": kind})


class ReadkeeperServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("readkeeper", __version__, protocol_cls=ReadkeeperProtocol)
        self.core = Readkeeper(buffers=EditorBuffers(self))
        self.open_documents: dict[str, OpenDocument] = {}  # by real path
        self.initialization_settings: dict[str, Any] = {}
        self.settings_warned: set[str] = set()  # each settings warning is shown once
        self.client_log = ClientLogHandler(self)
        log.addHandler(self.client_log)
        self.attach: Listener | None = None  # the socket `readkeeper mcp` attaches to

    @property
    def endpoint(self) -> ReadkeeperProtocol:
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
        self.serve_stdio(stdin, stdout)

    def start_tcp(self, host: str, port: int) -> None:
        self.serve_tcp(host, port)

    def _serve(self, connection: Coroutine[Any, Any, int]) -> int:
        try:
            return asyncio.run(connection)
        except BrokenPipeError:
            log.error("The client closed its end of the connection; shutting down.")
            return 1
        except KeyboardInterrupt:
            return 1
        finally:
            stop_attach(self)
            self.core.close()
            # Never wait for a handler still running: `exit` ends the process now.
            if self._thread_pool is not None:
                self._thread_pool.shutdown(wait=False, cancel_futures=True)

    def report_server_error(self, error: Exception, source: Any) -> None:
        if not carries_kind(error):  # a reply with a kind was logged where it was made
            log.error("%s", error)

    def notify_user(self, message: str, kind: types.MessageType) -> None:
        log.warning("%s", message)
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """Run blocking core work on the thread pool, never on the event loop. When the
        client cancels the request, a PDF worker it waits for is killed (worker.py)."""
        cancel = threading.Event()
        try:
            return await asyncio.get_running_loop().run_in_executor(
                self.thread_pool, cancellable, cancel, function, *args
            )
        except asyncio.CancelledError:
            cancel.set()
            raise


class ClientLogHandler(logging.Handler):
    """Mirrors readkeeper's warnings to the editor's log (`window/logMessage`)."""

    LEVELS: ClassVar[dict[int, types.MessageType]] = {
        logging.ERROR: types.MessageType.Error,
        logging.WARNING: types.MessageType.Warning,
        logging.INFO: types.MessageType.Info,
    }

    def __init__(self, server: ReadkeeperServer) -> None:
        super().__init__(logging.WARNING)
        self._server = server
        self.loop: asyncio.AbstractEventLoop | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if self.loop is None or self.loop.is_closed():
            return
        params = types.LogMessageParams(
            type=self.LEVELS.get(record.levelno, types.MessageType.Log),
            message=self.format(record),
        )
        # Messages are written from the event loop only, never from a worker thread.
        self.loop.call_soon_threadsafe(self._server.window_log_message, params)


class OpenDocument(NamedTuple):
    """A document open in the editor: the URI as the editor sent it (for
    workspace/applyEdit), pygls' copy, which didChange keeps current, and its text when
    the editor opened or last saved it."""

    uri: str
    document: TextDocument
    baseline: str | None  # None: opened with text the disk does not have (unsaved)


class EditorBuffers:
    """The core's view of documents open in the editor, keyed like the core's files: by
    real path (`uri_path`), whatever spelling of the URI the editor used."""

    def __init__(self, server: ReadkeeperServer) -> None:
        self._server = server

    def get(self, real_path: str) -> Buffer | None:
        opened = self._server.open_documents.get(real_path)
        if opened is None:
            return None
        text = opened.document.source
        return Buffer(text, opened.document.version, edited=text != opened.baseline)

    # --- edits of open buffers (edits.BufferEditor) ---

    loop: asyncio.AbstractEventLoop | None = None  # set by the edit/write handlers

    def apply_edits(
        self, real_path: str, version: int | None, text: str, changes: Sequence[TextChange]
    ) -> str | None:
        """Apply `changes` to the open document with `workspace/applyEdit`; None when the
        editor applied them, else why not. Runs on a worker thread, which waits for
        the editor's answer while the event loop sends the request."""
        server = self._server
        opened = server.open_documents.get(real_path)
        if opened is None or self.loop is None:
            return "the document is no longer open"
        uri = opened.uri
        caps = server.client_capabilities.workspace
        if not (caps and caps.apply_edit):
            return "the editor does not accept workspace/applyEdit"
        from ..edit.edits import lsp_position

        encoding = server.workspace.position_encoding
        units = str(getattr(encoding, "value", encoding) or "utf-16")
        text_edits = [
            types.TextEdit(
                range=types.Range(
                    start=types.Position(*lsp_position(text, change.start, units)),
                    end=types.Position(*lsp_position(text, change.end, units)),
                ),
                new_text=change.text,
            )
            for change in changes
        ]
        if caps.workspace_edit and caps.workspace_edit.document_changes:
            # Versioned: the editor refuses it if the person typed since we looked.
            document = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
            edit = types.WorkspaceEdit(
                document_changes=[types.TextDocumentEdit(text_document=document, edits=text_edits)]
            )
        else:
            edit = types.WorkspaceEdit(changes={uri: text_edits})
        params = types.ApplyWorkspaceEditParams(edit=edit, label="readkeeper: agent edit")

        async def send() -> types.ApplyWorkspaceEditResult:
            return await server.workspace_apply_edit_async(params)

        try:
            pending = asyncio.run_coroutine_threadsafe(send(), self.loop)
            answer = pending.result(APPLY_EDIT_TIMEOUT_S)
        except Exception as exc:  # a timeout, or the client failed the request
            return f"workspace/applyEdit failed: {exc or type(exc).__name__}"
        if not answer.applied:
            return answer.failure_reason or "the editor did not apply it"
        return None


server = ReadkeeperServer()


def to_rpc_error(exc: ReadkeeperError) -> JsonRpcException:
    code = INVALID_PARAMS if exc.kind == "bad_params" else REQUEST_FAILED
    return JsonRpcException(message=exc.message, code=code, data=exc.to_data())


def internal_error(method: str, exc: Exception) -> JsonRpcException:
    """A fault of ours: the client gets the exception's type and message, the log the
    traceback."""
    log.error("%s failed unexpectedly", method, exc_info=exc)
    reason = f"{type(exc).__name__}: {exc}"[:500]
    return JsonRpcException(
        code=INTERNAL_ERROR,
        message=f"{method} failed on a fault in readkeeper ({reason}); it is not something "
        "the request did wrong, and the server's log has the details. Other requests work.",
        data={"kind": "internal", "reason": reason},
    )


H = TypeVar("H", bound=Callable[..., Any])


def request(method: str) -> Callable[[H], H]:
    """Register a handler of a readkeeper/* request. Its `ReadkeeperError` becomes the
    error reply its kind names, any other exception an `internal` one: every failure
    the agent sees says what happened."""

    def register(handler: H) -> H:
        if asyncio.iscoroutinefunction(handler):

            @functools.wraps(handler)
            async def answer(ls: ReadkeeperServer, raw: Any) -> Any:
                try:
                    return await handler(ls, raw)
                except ReadkeeperError as exc:
                    raise to_rpc_error(exc) from None
                except JsonRpcException:
                    raise
                except Exception as exc:
                    raise internal_error(method, exc) from None

        else:  # kept synchronous: answered inline, in the order it came

            @functools.wraps(handler)
            def answer(ls: ReadkeeperServer, raw: Any) -> Any:
                try:
                    return handler(ls, raw)
                except ReadkeeperError as exc:
                    raise to_rpc_error(exc) from None
                except JsonRpcException:
                    raise
                except Exception as exc:
                    raise internal_error(method, exc) from None

        server.feature(method)(answer)
        return handler

    return register


def notification(method: str) -> Callable[[H], H]:
    """Register a handler of a readkeeper/* notification: there is no reply, so a
    failure goes to the log."""

    def register(handler: H) -> H:
        @functools.wraps(handler)
        def handle(ls: ReadkeeperServer, raw: Any) -> None:
            try:
                handler(ls, raw)
            except ReadkeeperError as exc:
                log.warning("%s ignored: %s", method, exc.message)
            except Exception:
                log.exception("%s failed unexpectedly", method)

        server.feature(method)(handle)
        return handler

    return register


def permitted_roots(ls: ReadkeeperServer, paths: Sequence[str], may_be_home: bool) -> list[str]:
    """`paths` without the ones `refused_root` refuses, each refusal told to the user."""
    roots: list[str] = []
    for path in paths:
        why = refused_root(path, may_be_home)
        if why is None:
            roots.append(path)
        else:
            ls.notify_user(
                f"{path} is not a workspace root for readkeeper: {why}. Files there are "
                "read only with your permission; open a project folder to work in.",
                types.MessageType.Warning,
            )
    return roots


# --- lifecycle and settings ---------------------------------------------------------------


@server.feature(types.INITIALIZE)
def on_initialize(ls: ReadkeeperServer, params: types.InitializeParams) -> None:
    folders = [f.uri for f in params.workspace_folders or []]
    if not folders and params.root_uri:
        folders = [params.root_uri]
    roots = [p for p in map(uri_path, folders) if p]
    if not folders and params.root_path:
        roots = [os.path.realpath(params.root_path)]
    # Fixed here: a second initialize is refused (ReadkeeperProtocol.lsp_initialize).
    ls.core.workspace.set_roots(permitted_roots(ls, roots, may_be_home=True))
    options = params.initialization_options
    settings = options.get("readkeeper", options) if isinstance(options, dict) else None
    ls.initialization_settings = settings if isinstance(settings, dict) else {}
    apply_settings(ls, {})


def apply_settings(ls: ReadkeeperServer, latest: dict[str, Any]) -> None:
    """Settings from `initializationOptions`, overlaid by the latest the client sent
    (pulled or pushed): a client that sends only some keys keeps the others."""
    for warning in ls.core.configure({**ls.initialization_settings, **latest}):
        if warning not in ls.settings_warned:  # not again at every pull or push
            ls.settings_warned.add(warning)
            ls.notify_user(warning, types.MessageType.Warning)


@server.feature(types.INITIALIZED)
async def on_initialized(ls: ReadkeeperServer, params: types.InitializedParams) -> None:
    ls.client_log.loop = asyncio.get_running_loop()
    await pull_configuration(ls)
    start_watching(ls)
    start_attach(ls)


def start_attach(ls: ReadkeeperServer) -> None:
    """Let `readkeeper mcp` for this workspace attach: it is served by this core (its
    read-state, watcher and the editor's buffers) through `calls`, like LSP requests."""
    loop = asyncio.get_running_loop()

    def lend_loop(method: str) -> None:
        _editor_buffers(ls).loop = loop  # an edit of an open buffer uses applyEdit

    listener = Listener(ls.core, before_call=lend_loop)
    try:
        started = listener.start(list(ls.core.workspace.roots))
    except OSError as exc:
        log.warning("Agents outside the editor cannot attach to readkeeper: %s", exc)
        return
    if started:
        ls.attach = listener


def stop_attach(ls: ReadkeeperServer) -> None:
    """Close the attach socket and remove its discovery files."""
    listener, ls.attach = ls.attach, None
    if listener is not None:
        listener.close()


async def pull_configuration(ls: ReadkeeperServer) -> None:
    workspace_caps = ls.client_capabilities.workspace
    if not (workspace_caps and workspace_caps.configuration):
        return
    try:
        answer = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section="readkeeper")])
        )
    except Exception as exc:  # a client that fails the request keeps the settings we have
        log.warning("workspace/configuration failed: %s", exc)
        return
    section = answer[0] if answer else None
    if isinstance(section, dict) and section:
        apply_settings(ls, section)


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def on_configuration(
    ls: ReadkeeperServer, params: types.DidChangeConfigurationParams
) -> None:
    pushed = params.settings.get("readkeeper") if isinstance(params.settings, dict) else None
    if isinstance(pushed, dict):
        apply_settings(ls, pushed)
    else:
        await pull_configuration(ls)


@server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
def on_folders(ls: ReadkeeperServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    # From the roots we hold, not pygls' folder list: that one keeps what was refused.
    removed = {uri_path(f.uri) for f in params.event.removed}
    roots = [r for r in ls.core.workspace.roots if r not in removed]
    added = [p for p in map(uri_path, (f.uri for f in params.event.added)) if p and p not in roots]
    ls.core.workspace.set_roots([*roots, *permitted_roots(ls, added, may_be_home=False)])
    ls.core.roots_changed()
    if ls.attach is not None:
        ls.attach.set_roots(list(ls.core.workspace.roots))


# --- editor documents ---------------------------------------------------------------------


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def on_open(ls: ReadkeeperServer, params: types.DidOpenTextDocumentParams) -> None:
    uri = params.text_document.uri
    path = uri_path(uri)
    if path:
        # pygls has just stored the document (under its own spelling of the URI); its
        # copy is the one didChange updates.
        document = ls.workspace.get_text_document(uri)
        # Opened as the disk has it (usual), or with unsaved changes already (a server
        # started after the person typed, a restored session): only the first is clean.
        same = ls.core.disk_text(path) == document.source
        ls.open_documents[path] = OpenDocument(uri, document, document.source if same else None)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def on_save(ls: ReadkeeperServer, params: types.DidSaveTextDocumentParams) -> None:
    path = uri_path(params.text_document.uri)
    opened = ls.open_documents.get(path) if path else None
    if path and opened:  # what the editor has now is what the disk has
        ls.open_documents[path] = opened._replace(baseline=opened.document.source)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def on_close(ls: ReadkeeperServer, params: types.DidCloseTextDocumentParams) -> None:
    path = uri_path(params.text_document.uri)
    opened = ls.open_documents.get(path) if path else None
    if path and opened and opened.uri == params.text_document.uri:
        del ls.open_documents[path]


# --- readkeeper/* requests ----------------------------------------------------------------


@request(READ)
async def read(ls: ReadkeeperServer, raw: Any) -> Any:
    if isinstance(raw, Refused):  # already read on the event loop (_read_inline)
        params, refusal = raw
    else:
        params = calls.params_for("read", raw)
        try:
            return await ls.run(calls.run, ls.core, "read", params)
        except ReadkeeperError as exc:
            refusal = exc
    if refusal.kind != "outside_workspace" or not await ask_to_allow(ls, params, refusal):
        raise refusal
    return await ls.run(calls.run, ls.core, "read", params)


async def ask_to_allow(ls: ReadkeeperServer, params: ReadParams, exc: ReadkeeperError) -> bool:
    """Ask the user whether the agent may read a file outside the workspace."""
    window_caps = ls.client_capabilities.window
    if not (window_caps and window_caps.show_message):
        return False
    real_path = exc.data["real_path"]
    once, session, deny = "Allow once", "Allow for this session", "Deny"
    try:
        choice = await ls.window_show_message_request_async(
            types.ShowMessageRequestParams(
                type=types.MessageType.Warning,
                message=f"The agent wants to read {real_path}, outside the workspace.",
                actions=[types.MessageActionItem(t) for t in (once, session, deny)],
            )
        )
    except Exception as error:
        log.warning("window/showMessageRequest failed: %s", error)
        return False
    title = choice.title if choice is not None else deny
    if title == once:
        ls.core.workspace.grant(params.session, real_path, once=True)
    elif title == session:
        ls.core.workspace.grant(params.session, real_path)
    return title in (once, session)


@request("readkeeper/forget")
def forget(ls: ReadkeeperServer, raw: Any) -> Any:
    return calls.call(ls.core, "forget", raw)


@request("readkeeper/stats")
def stats(ls: ReadkeeperServer, raw: Any) -> Any:
    return calls.call(ls.core, "stats", raw)


# --- attachments --------------------------------------------------------------------------


@request("readkeeper/attachments")
async def attachments(ls: ReadkeeperServer, raw: Any) -> Any:
    return await ls.run(calls.call, ls.core, "attachments", raw)


@notification("readkeeper/didChangeDiagnostics")
def did_change_diagnostics(ls: ReadkeeperServer, raw: Any) -> None:
    ls.core.did_change_diagnostics(structure(raw, DiagnosticsParams))


@server.feature(types.SHUTDOWN)
def on_shutdown(ls: ReadkeeperServer, params: None) -> None:
    stop_attach(ls)
    ls.core.close()


# --- edits and writes ---------------------------------------------------------------------

# How long an edit of an open buffer waits for the editor to answer workspace/applyEdit.
APPLY_EDIT_TIMEOUT_S = 30.0


@request("readkeeper/edit")
async def edit(ls: ReadkeeperServer, raw: Any) -> Any:
    params = calls.params_for("edit", raw)
    _editor_buffers(ls).loop = asyncio.get_running_loop()  # for workspace/applyEdit
    return await ls.run(calls.run, ls.core, "edit", params)


@request("readkeeper/write")
async def write(ls: ReadkeeperServer, raw: Any) -> Any:
    params = calls.params_for("write", raw)
    _editor_buffers(ls).loop = asyncio.get_running_loop()
    return await ls.run(calls.run, ls.core, "write", params)


def _editor_buffers(ls: ReadkeeperServer) -> EditorBuffers:
    buffers = ls.core.buffers
    assert isinstance(buffers, EditorBuffers)
    return buffers


# --- the watcher and change notices -------------------------------------------------------

DID_CHANGE_READ_FILES = "readkeeper/didChangeReadFiles"


def start_watching(ls: ReadkeeperServer) -> None:
    """Start the watcher (after `initialized`; its setup runs on its own thread), with
    its notices sent as readkeeper/didChangeReadFiles."""
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

    def __init__(self, ls: ReadkeeperServer, loop: asyncio.AbstractEventLoop) -> None:
        self._ls = ls
        self._loop = loop
        self._lock = asyncio.Lock()
        self._token: str | None = None
        self._count = 0

    def __call__(self, stage: str, message: str) -> None:
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


@request("readkeeper/changes")
async def changes(ls: ReadkeeperServer, raw: Any) -> Any:
    return await ls.run(calls.call, ls.core, "changes", raw)


def carries_kind(error: BaseException | None) -> bool:
    """A readkeeper error reply (it carries `data.kind`): a refusal the agent can act on,
    or an `internal` fault whose traceback `internal_error` has logged already."""
    return (
        isinstance(error, JsonRpcException)
        and isinstance(error.data, dict)
        and "kind" in error.data
    )


class _NoKindTracebacks(logging.Filter):
    """pygls logs every error reply with a traceback; for replies with a kind that is
    noise in the editor's log (a refusal is an outcome; a fault's own traceback is
    logged where it happened), so it is left out."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and carries_kind(record.exc_info[1]))


# After `exit`, how long cleanup may take before the process ends regardless (a handler
# stuck in a system call must not keep it alive).
EXIT_GRACE_S = 3.0


def serve(tcp: tuple[str, int] | None = None) -> int:
    """Serve until `exit` or the end of input; the exit code for the process."""
    for name in ("pygls", "pygls.protocol"):
        # pygls logs every message body at INFO: far too costly for large reads.
        logging.getLogger(name).setLevel(logging.WARNING)
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_NoKindTracebacks())
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
