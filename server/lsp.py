"""The language-server front end: pygls wiring only.

Each handler converts params at the edge (`protocol.structure`), runs the core off the
event loop, and turns a `ReadkeeperError` into a JSON-RPC error whose `data.kind` names
what happened. Logs go to stderr and `window/logMessage`; stdout is the protocol.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, BinaryIO, ClassVar, TypeVar

import attrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest, JsonRpcParseError
from pygls.io_ import StdoutWriter, run_async
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import to_fs_path

from . import __version__
from .core import Buffer, Readkeeper
from .edits import TextChange, lsp_position
from .errors import ReadkeeperError
from .protocol import (
    AttachmentsParams,
    ChangesParams,
    DiagnosticsParams,
    DidChangeReadFilesParams,
    EditParams,
    FileChange,
    ForgetParams,
    NotebookEditParams,
    ReadParams,
    StatsParams,
    WriteParams,
    structure,
    unstructure,
)

log = logging.getLogger("readkeeper")
T = TypeVar("T")

NAMESPACE = "readkeeper/"
# LSP's RequestFailed: "the request was valid but could not be carried out".
REQUEST_FAILED = -32803
INVALID_PARAMS = -32602


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


class ReadkeeperProtocol(LanguageServerProtocol):
    def structure_message(self, data: dict[str, Any]) -> Any:
        method = data.get("method")
        if "jsonrpc" in data and isinstance(method, str) and method.startswith(NAMESPACE):
            if "id" in data:
                return RawRequest(data["id"], method, data["jsonrpc"], data.get("params"))
            return RawNotification(method, data["jsonrpc"], data.get("params"))
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            # A request whose params do not fit the method: answer it, so the client is
            # not left waiting, then let the reader loop log and carry on.
            if "id" in data and "method" in data:
                self._send_response(data["id"], error=exc.to_response_error())
            raise


class ReadkeeperServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("readkeeper", __version__, protocol_cls=ReadkeeperProtocol)
        self.core = Readkeeper(buffers=EditorBuffers(self))
        self._open_uris: dict[str, str] = {}  # real path -> document URI
        self.initialization_settings: dict[str, Any] = {}
        self.client_log = ClientLogHandler(self)
        log.addHandler(self.client_log)

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve on stdio. pygls reads stdin on a worker thread, one hop per header line
        and per body; reading the pipe on the event loop halves the cost of a round trip.
        Anything that is not a pipe or socket (a file, a terminal) goes the pygls way."""
        stdin = stdin or sys.stdin.buffer
        try:
            mode = os.fstat(stdin.fileno()).st_mode
        except (OSError, ValueError, AttributeError):
            mode = 0
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            super().start_io(stdin, stdout)
            return
        self._stop_event = stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))

        async def serve_pipe() -> None:
            reader = asyncio.StreamReader()
            await asyncio.get_running_loop().connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(reader), stdin
            )
            try:
                await run_async(
                    stop_event=stop_event,
                    reader=reader,
                    protocol=self.protocol,
                    logger=logging.getLogger("pygls.io_"),
                    error_handler=self.report_server_error,
                )
            except asyncio.IncompleteReadError:
                log.warning("The client closed the connection in the middle of a message.")

        try:
            asyncio.run(serve_pipe())
        except BrokenPipeError:
            log.error("Connection to the client is lost; shutting down.")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]

    def report_server_error(self, error: Exception, source: Any) -> None:
        # JSON-RPC answers an unreadable message with id null: the client learns that
        # something it sent was lost, and the server carries on with the next message.
        if isinstance(error, json.JSONDecodeError):
            reply: JsonRpcException | None = JsonRpcParseError(f"Parse error: {error}")
        elif isinstance(error, AttributeError):  # valid JSON that is not a message
            reply = JsonRpcInvalidRequest("Invalid request: not a JSON-RPC message")
        else:
            reply = None
        if reply is not None:
            # Sent as plain JSON: lsprotocol's converter would drop the required null id.
            payload = {"code": reply.code, "message": reply.message}
            self.protocol._send_data({"jsonrpc": "2.0", "id": None, "error": payload})
        if is_refusal(error):
            return  # an answer the agent asked for (stale, not_found, ...), not a fault
        log.error("%s", error)

    def notify_user(self, message: str, kind: types.MessageType) -> None:
        log.warning("%s", message)
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """Run blocking core work on the thread pool, never on the event loop."""
        return await asyncio.get_running_loop().run_in_executor(self.thread_pool, function, *args)


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


class EditorBuffers:
    """The core's view of documents open in the editor, from pygls' workspace."""

    def __init__(self, server: ReadkeeperServer) -> None:
        self._server = server

    def get(self, real_path: str) -> Buffer | None:
        uri = self._server._open_uris.get(real_path)
        if uri is None:
            return None
        document = self._server.workspace.text_documents.get(uri)
        if document is None:
            return None
        return Buffer(text=document.source, version=document.version)

    # --- edits of open buffers (edits.BufferEditor) ---

    loop: asyncio.AbstractEventLoop | None = None  # set by the edit/write handlers

    def apply_edits(
        self, real_path: str, version: int | None, text: str, changes: Sequence[TextChange]
    ) -> str | None:
        """Apply `changes` to the open document with `workspace/applyEdit`; None when the
        editor applied them, else why not. Runs on a worker thread, which waits for
        the editor's answer while the event loop sends the request."""
        server = self._server
        uri = server._open_uris.get(real_path)
        if uri is None or self.loop is None:
            return "the document is no longer open"
        caps = server.client_capabilities.workspace
        if not (caps and caps.apply_edit):
            return "the editor does not accept workspace/applyEdit"
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


def _real_path(uri: str) -> str | None:
    path = to_fs_path(uri)
    return os.path.realpath(path) if path else None


# --- lifecycle and settings ---------------------------------------------------------------


@server.feature(types.INITIALIZE)
def on_initialize(ls: ReadkeeperServer, params: types.InitializeParams) -> None:
    folders = [f.uri for f in params.workspace_folders or []]
    if not folders and params.root_uri:
        folders = [params.root_uri]
    roots = [p for p in (to_fs_path(uri) for uri in folders) if p]
    if not roots and params.root_path:
        roots = [params.root_path]
    ls.core.workspace.set_roots(roots)
    options = params.initialization_options
    settings = options.get("readkeeper", options) if isinstance(options, dict) else None
    ls.initialization_settings = settings if isinstance(settings, dict) else {}
    apply_settings(ls, {})


def apply_settings(ls: ReadkeeperServer, latest: dict[str, Any]) -> None:
    """Settings from `initializationOptions`, overlaid by the latest the client sent
    (pulled or pushed): a client that sends only some keys keeps the others."""
    for warning in ls.core.configure({**ls.initialization_settings, **latest}):
        ls.notify_user(warning, types.MessageType.Warning)


@server.feature(types.INITIALIZED)
async def on_initialized(ls: ReadkeeperServer, params: types.InitializedParams) -> None:
    ls.client_log.loop = asyncio.get_running_loop()
    # Load the token table now, off the request path, so the first big read is not slow.
    threading.Thread(target=ls.core.tokens.warm_up, name="tiktoken-warmup", daemon=True).start()
    await pull_configuration(ls)
    start_watching(ls)


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
    roots = [to_fs_path(f.uri) for f in ls.workspace.folders.values()]
    ls.core.workspace.set_roots([r for r in roots if r])
    ls.core.roots_changed()


# --- editor documents ---------------------------------------------------------------------


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def on_open(ls: ReadkeeperServer, params: types.DidOpenTextDocumentParams) -> None:
    path = _real_path(params.text_document.uri)
    if path:
        ls._open_uris[path] = params.text_document.uri


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def on_close(ls: ReadkeeperServer, params: types.DidCloseTextDocumentParams) -> None:
    path = _real_path(params.text_document.uri)
    if path:
        ls._open_uris.pop(path, None)


# --- readkeeper/* requests ----------------------------------------------------------------


@server.feature("readkeeper/read")
async def read(ls: ReadkeeperServer, raw: Any) -> Any:
    try:
        params = structure(raw, ReadParams)
        try:
            result = await ls.run(ls.core.read, params)
        except ReadkeeperError as exc:
            if exc.kind != "outside_workspace" or not await ask_to_allow(ls, params, exc):
                raise
            result = await ls.run(ls.core.read, params)
        return unstructure(result)
    except ReadkeeperError as exc:
        raise to_rpc_error(exc) from None


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


@server.feature("readkeeper/forget")
def forget(ls: ReadkeeperServer, raw: Any) -> Any:
    try:
        return ls.core.forget(structure(raw, ForgetParams))
    except ReadkeeperError as exc:
        raise to_rpc_error(exc) from None


@server.feature("readkeeper/stats")
def stats(ls: ReadkeeperServer, raw: Any) -> Any:
    try:
        return ls.core.stats_for(structure(raw, StatsParams))
    except ReadkeeperError as exc:
        raise to_rpc_error(exc) from None


# --- attachments --------------------------------------------------------------------------


@server.feature("readkeeper/attachments")
async def attachments(ls: ReadkeeperServer, raw: Any) -> Any:
    try:
        return await ls.run(ls.core.attachments, structure(raw, AttachmentsParams))
    except ReadkeeperError as exc:
        raise to_rpc_error(exc) from None


@server.feature("readkeeper/didChangeDiagnostics")
def did_change_diagnostics(ls: ReadkeeperServer, raw: Any) -> None:
    try:
        ls.core.did_change_diagnostics(structure(raw, DiagnosticsParams))
    except ReadkeeperError as exc:  # a notification has no reply: tell the log
        log.warning("readkeeper/didChangeDiagnostics ignored: %s", exc.message)


@server.feature(types.SHUTDOWN)
def on_shutdown(ls: ReadkeeperServer, params: None) -> None:
    ls.core.close()


# --- edits and writes ---------------------------------------------------------------------

# How long an edit of an open buffer waits for the editor to answer workspace/applyEdit.
APPLY_EDIT_TIMEOUT_S = 30.0


# A notebook cell edit names a cell instead of old_string/new_string.
NOTEBOOK_EDIT_FIELDS = frozenset({"cell_id", "new_source", "edit_mode"})


@server.feature("readkeeper/edit")
async def edit(ls: ReadkeeperServer, raw: Any) -> Any:
    try:
        if isinstance(raw, dict) and not NOTEBOOK_EDIT_FIELDS.isdisjoint(raw):
            cell_params = structure(raw, NotebookEditParams)
            return unstructure(await ls.run(ls.core.edit_cell, cell_params))
        params = structure(raw, EditParams)
        _editor_buffers(ls).loop = asyncio.get_running_loop()
        since = time.time_ns()
        result = unstructure(await ls.run(ls.core.edit, params))
    except ReadkeeperError as exc:
        raise to_rpc_error(exc) from None
    return await with_diagnostics(ls, params.session, result, since)


async def with_diagnostics(
    ls: ReadkeeperServer, session: str, result: dict[str, Any], since: int
) -> dict[str, Any]:
    """Add the editor's diagnostics for the changed file; a problem here never fails
    the edit or write, which has already happened."""
    try:
        found = await ls.run(ls.core.diagnostics_after_edit, session, result["file_path"], since)
    except Exception:
        log.exception("Diagnostics after the change to %s failed", result["file_path"])
        return result
    if found is not None:
        result["diagnostics"] = found
    return result


@server.feature("readkeeper/write")
async def write(ls: ReadkeeperServer, raw: Any) -> Any:
    try:
        params = structure(raw, WriteParams)
        _editor_buffers(ls).loop = asyncio.get_running_loop()
        since = time.time_ns()
        result = unstructure(await ls.run(ls.core.write, params))
    except ReadkeeperError as exc:
        raise to_rpc_error(exc) from None
    return await with_diagnostics(ls, params.session, result, since)


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

    def notice(session: str, changes: list[FileChange]) -> None:
        if loop.is_closed():  # shutting down
            return
        payload = unstructure(DidChangeReadFilesParams(session, changes))
        loop.call_soon_threadsafe(ls.protocol.notify, DID_CHANGE_READ_FILES, payload)

    ls.core.notices.on_notice = notice
    ls.core.start_watching(log.warning, WatchProgress(ls, loop))


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


@server.feature("readkeeper/changes")
async def changes(ls: ReadkeeperServer, raw: Any) -> Any:
    try:
        return unstructure(await ls.run(ls.core.changes_for, structure(raw, ChangesParams)))
    except ReadkeeperError as exc:
        raise to_rpc_error(exc) from None


@server.feature(types.EXIT)
def on_exit(ls: ReadkeeperServer, params: None) -> None:
    ls.core.close()  # after `shutdown` this finds nothing left to stop


def is_refusal(error: BaseException | None) -> bool:
    """A readkeeper error reply (it carries `data.kind`): an outcome, not a fault."""
    return (
        isinstance(error, JsonRpcException)
        and isinstance(error.data, dict)
        and "kind" in error.data
    )


class _NoRefusalTracebacks(logging.Filter):
    """pygls logs every error reply with a traceback; for readkeeper's own refusals that
    is noise in the editor's log, so they are left out (real faults still show)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and is_refusal(record.exc_info[1]))


def serve(tcp: tuple[str, int] | None = None) -> None:
    for name in ("pygls", "pygls.protocol"):
        # pygls logs every message body at INFO: far too costly for large reads.
        logging.getLogger(name).setLevel(logging.WARNING)
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_NoRefusalTracebacks())
    if tcp is None:
        server.start_io()
    else:
        server.start_tcp(*tcp)
