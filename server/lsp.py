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
import threading
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

import attrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest, JsonRpcParseError
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import to_fs_path

from . import __version__
from .core import Buffer, Readkeeper
from .errors import ReadkeeperError
from .protocol import ForgetParams, ReadParams, StatsParams, structure, unstructure

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
        self.client_log = ClientLogHandler(self)
        log.addHandler(self.client_log)

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
            error = {"code": reply.code, "message": reply.message}
            self.protocol._send_data({"jsonrpc": "2.0", "id": None, "error": error})
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
    for warning in ls.core.configure(settings):
        ls.notify_user(warning, types.MessageType.Warning)


@server.feature(types.INITIALIZED)
async def on_initialized(ls: ReadkeeperServer, params: types.InitializedParams) -> None:
    ls.client_log.loop = asyncio.get_running_loop()
    # Load the token table now, off the request path, so the first big read is not slow.
    threading.Thread(target=ls.core.tokens.warm_up, name="tiktoken-warmup", daemon=True).start()
    await pull_configuration(ls)


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
        for warning in ls.core.configure(section):
            ls.notify_user(warning, types.MessageType.Warning)


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def on_configuration(
    ls: ReadkeeperServer, params: types.DidChangeConfigurationParams
) -> None:
    pushed = params.settings.get("readkeeper") if isinstance(params.settings, dict) else None
    if isinstance(pushed, dict):
        for warning in ls.core.configure(pushed):
            ls.notify_user(warning, types.MessageType.Warning)
    else:
        await pull_configuration(ls)


@server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
def on_folders(ls: ReadkeeperServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    roots = [to_fs_path(f.uri) for f in ls.workspace.folders.values()]
    ls.core.workspace.set_roots([r for r in roots if r])


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


def serve(tcp: tuple[str, int] | None = None) -> None:
    for name in ("pygls", "pygls.protocol"):
        # pygls logs every message body at INFO: far too costly for large reads.
        logging.getLogger(name).setLevel(logging.WARNING)
    if tcp is None:
        server.start_io()
    else:
        server.start_tcp(*tcp)
