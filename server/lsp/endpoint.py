"""readkeeper's pygls protocol: the `transport.Endpoint` the stream reader hands messages
to, with the LSP lifecycle rules pygls leaves out (refusals before `initialize` and
after `shutdown`, one `initialize`, the exit code), readkeeper/* params kept as plain
JSON for `protocol.structure`, quick reads answered on the spot (`quick`), and every
message written with orjson.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

import attrs
import orjson
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError
from pygls.protocol import LanguageServerProtocol, lsp_method

from .. import quoting
from ..calls import METHODS
from ..core import Readkeeper
from ..state import later
from . import agent_tools, document_changes
from .cancels import Works
from .framing import FRAME_HEADER
from .messages import INVALID_REQUEST
from .order import SessionOrder
from .quick import READ, Refused, Result, quick_read
from .rpc_errors import SERVER_NOT_INITIALIZED, with_kind

log = logging.getLogger("readkeeper")

NAMESPACE = "readkeeper/"
# The requests every front end serves: each gets exactly one reply.
ANSWERED = frozenset(METHODS)
# What a request in flight may ask the client and wait for.
WAITED_ON = frozenset({types.WORKSPACE_APPLY_EDIT, types.WINDOW_SHOW_MESSAGE_REQUEST})
# LSP's notifications (`$/cancelRequest`, `initialized`, `exit`, ...): pygls reads one
# sent with an id as the notification and drops the id, so the request would never be
# answered. readkeeper's own notification (methods.DID_CHANGE_DIAGNOSTICS) alike: sent
# with an id it was run and answered `result: null` even when its params were refused.
NOTIFICATIONS = frozenset(
    method
    for method, (message, *_) in types.METHOD_TO_TYPES.items()
    if message.__name__.endswith("Notification")
) | {"readkeeper/didChangeDiagnostics"}
METHOD_NOT_FOUND = -32601


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
    """A readkeeper notification with its params kept as plain JSON."""

    method: str
    jsonrpc: str
    params: Any = None


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
        self.core: Readkeeper | None = None  # set by the server: quick reads are its
        # The client's agent's tools, by the method each serves (agent_tools.py): set at
        # `initialize`; empty, every next step is said as the method.
        self.agent_tools: dict[str, str] = {}
        # Requests received and not yet answered, and who to tell when one is: the
        # stream reader stops reading while too many are (transport.py).
        self.in_flight: set[Any] = set()
        self.on_settled: Callable[[], None] | None = None
        self.awaiting: set[Any] = set()  # ids of our requests a request in flight waits on
        self.works = Works()  # what a cancel may stop of each request (cancels.py)
        self.order = SessionOrder()  # a forget after what came before it (order.py)
        self._loop: asyncio.AbstractEventLoop | None = None

    # --- transport.Endpoint ---

    def receive(self, data: dict[str, Any]) -> None:
        """Handle one well-formed JSON-RPC message (`transport.Endpoint`)."""
        self._loop = asyncio.get_running_loop()
        self._count(data)
        self._dispatch(data)

    def _dispatch(self, data: dict[str, Any]) -> None:
        if self._refused(data) or self._not_a_request(data):
            return
        if self.order.hold(data) or self._read_inline(data):
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

    def _count(self, data: dict[str, Any]) -> None:
        method = data.get("method")
        if not isinstance(method, str):  # a response to a request of ours
            if isinstance(data.get("id"), (str, int)):
                self.awaiting.discard(data["id"])
            return
        msg_id = data.get("id")
        # Only readkeeper's own requests, each answered once whatever happens: a message
        # pygls never answers (a notification sent with an id) would otherwise hold a
        # place for good. A cancel settles nothing: work started runs on to its end
        # (cancels.py), and every request, cancelled or not, is settled by its one
        # answer (`_send_data`).
        ours = method.startswith(NAMESPACE) and method[len(NAMESPACE) :] in ANSWERED
        if ours and isinstance(msg_id, (str, int)) and not isinstance(msg_id, bool):
            self.in_flight.add(msg_id)
            self.order.received(data)

    def may_hold(self) -> bool:
        """Whether the stream may stop being read for the requests in flight: not
        while one of them waits for an answer of the client's (applyEdit, a permission
        asked), which only reading can bring."""
        return not self.awaiting

    def _settle(self, msg_id: Any) -> None:
        if isinstance(msg_id, (str, int)) and msg_id in self.in_flight:
            self.in_flight.discard(msg_id)
            due = self.order.answered(msg_id)
            if due and self._loop is not None:  # answered maybe from a worker thread
                self._loop.call_soon_threadsafe(self._release, due)
            if self.on_settled is not None:
                self.on_settled()

    def _release(self, due: list[dict[str, Any]]) -> None:
        """Serve, in order, the requests a forget held (order.py)."""
        for data in due:
            self._dispatch(data)

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

    def _not_a_request(self, data: dict[str, Any]) -> bool:
        """A notification's method sent with an id is answered, not run: LSP answers a
        `$/` request with MethodNotFound, and every request gets its one reply."""
        method = data.get("method")
        if "id" not in data or method not in NOTIFICATIONS:
            return False
        why = (
            f"There is no request {method}: {method} is a notification, so it was not run; "
            "send it without an id."
        )
        self.send_error(data["id"], METHOD_NOT_FOUND, why, "unsupported")
        return True

    def _read_inline(self, data: dict[str, Any]) -> bool:
        """Answer a quick read here (`quick`); False when the request is left to pygls."""
        answer = None if self.core is None else quick_read(self.core, data)
        if answer is None:
            return False
        msg_id, asked = data["id"], agent_tools.asked(READ, data.get("params"))
        if isinstance(answer, Result):
            # What pygls makes of a handler's result (`JsonRPCResponseMessage`), unconverted.
            said = agent_tools.result(self.agent_tools, answer.value, asked)
            self._send_data({"id": msg_id, "jsonrpc": "2.0", "result": said})
        elif isinstance(answer, Refused):  # the handler asks the user, asynchronously
            self.handle_message(RawRequest(msg_id, READ, data["jsonrpc"], answer))
        else:
            error = agent_tools.reply(self.agent_tools, answer, asked)
            self._send_response(msg_id, error=error.to_response_error())
        return True

    def send_error(self, msg_id: Any, code: int, message: str, kind: str) -> None:
        """Send an error reply (`msg_id` None: JSON-RPC's null id)."""
        # Plain JSON: lsprotocol's converter would drop JSON-RPC's null id.
        error = {"code": code, "message": message, "data": {"kind": kind}}
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": error})

    def ended(self) -> int:
        """The client closed the stream without `exit`: LSP's code as if it had sent it."""
        return 0 if self._shutdown else 1

    # --- pygls overrides ---

    def structure_message(self, data: dict[str, Any]) -> Any:
        """pygls' typed message, except readkeeper/* ones: their params stay JSON."""
        method = data.get("method")
        if isinstance(method, str) and method.startswith(NAMESPACE):
            if "id" in data:
                return RawRequest(data["id"], method, data["jsonrpc"], data.get("params"))
            return RawNotification(method, data["jsonrpc"], data.get("params"))
        if isinstance(method, str) and "params" not in data and not self.get_message_type(method):
            # JSON-RPC lets `params` be left out; pygls' fallback types need the key, and
            # would make an unknown method without it an internal error, not MethodNotFound.
            data = {**data, "params": None}
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
            later.answered()  # what the call left for after its answer may run now
            if self.in_flight:
                if isinstance(data, dict):
                    asking, msg_id = "method" in data, data.get("id")
                else:
                    asking, msg_id = hasattr(data, "method"), getattr(data, "id", None)
                method = (
                    data.get("method") if isinstance(data, dict) else getattr(data, "method", None)
                )
                if not asking:
                    self._settle(msg_id)
                elif msg_id is not None and method in WAITED_ON:
                    self.awaiting.add(msg_id)  # its answer must be read: no holding
                    if self.on_settled is not None:
                        self.on_settled()
        except BrokenPipeError:
            raise  # the connection ends (transport.py)
        except Exception as error:
            log.exception("Sending a message failed")
            self._server._report_server_error(error, JsonRpcInternalError)

    def handle_message(self, message: Any) -> None:
        """pygls' own, except that after `shutdown` the client's answers to our requests
        are still taken (pygls drops every message but `exit`): a change in flight that
        waits for `workspace/applyEdit` finishes, and says what the editor did."""
        if self._shutdown and getattr(message, "method", None) is None:
            error = getattr(message, "error", None)
            if message.jsonrpc == "2.0" and getattr(message, "id", None) is not None:
                self._handle_response(message.id, getattr(message, "result", None), error)
            return
        super().handle_message(message)

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        """`$/cancelRequest`: the request is withdrawn as far as its answer stays honest
        (cancels.py), not cancelled outright as pygls does."""
        # Typed as concurrent futures by pygls: a handler's is an asyncio task.
        request: Any = self._request_futures.get(msg_id)
        # pygls keeps our own requests to the client (applyEdit) in the same table: a
        # cancel naming one is not the client's to send, and would fail the change
        # waiting for it.
        if not isinstance(request, asyncio.Future):
            log.debug("Cancel of %r: no such request in flight", msg_id)
            return
        del self._request_futures[msg_id]
        self.works.withdraw(request)

    def _run_generator(self, future: Any, *, gen: Any, result_future: Any) -> None:
        """pygls' own, except that a step cancelled (`shutdown` cancels `initialized`'s
        handler while it runs) cancels the whole handler: pygls asked the step for its
        result, and the CancelledError escaped into the event loop (a traceback at exit)."""
        if future is not None and future.cancelled():
            gen.close()
            result_future.cancel()
            return
        super()._run_generator(future, gen=gen, result_future=result_future)

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Any:
        """pygls' `shutdown`, with every other request in flight withdrawn as a cancel
        withdraws it (cancels.py) rather than cancelled outright."""
        handler = self.fm.features.get(types.SHUTDOWN)
        if handler is not None:
            yield handler, args, None
        this = self.msg_id
        requests: list[tuple[Any, Any]] = list(self._request_futures.items())
        for msg_id, request in requests:
            # Not our own requests to the client: a change in flight waits for them.
            if msg_id != this and isinstance(request, asyncio.Future) and not request.done():
                self.works.withdraw(request)
        self._shutdown = True

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Any:
        """pygls' `initialize`, accepted once: the workspace roots are fixed by it."""
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

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Any:
        """pygls' `didChange`, for documents it holds only: one it never took or has
        let go (past the caps on open documents, lsp/documents.py) stays untracked."""
        document = self.workspace.text_documents.get(unquote(params.text_document.uri))
        if document is None:
            return None
        # pygls' own applies each change to the whole text (document_changes.py).
        followed = document_changes.follow(document)
        if document_changes.apply(followed, params.content_changes):
            followed.version = params.text_document.version
        else:  # past the budget of work: lsp/documents.py marks it lost
            self.workspace.remove_text_document(params.text_document.uri)
        handler = self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)
        if handler is not None:
            yield handler, (params,), None
        return None

    # readkeeper reads notebooks from the disk and keeps no editor copy of them: pygls'
    # own would be one more store the client could grow without end.

    @lsp_method(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def lsp_notebook_document__did_open(self, params: Any) -> None:
        """Not kept: see above."""

    @lsp_method(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def lsp_notebook_document__did_change(self, params: Any) -> None:
        """Not kept: see above."""

    @lsp_method(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def lsp_notebook_document__did_close(self, params: Any) -> None:
        """Not kept: see above."""

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> Any:  # pygls' is a generator; either kind runs
        """`exit`: the connection ends with LSP's code (0 after `shutdown`, else 1)."""
        self.exit_code = 0 if self._shutdown else 1


def to_json(data: Any, default: Callable[[Any], Any]) -> bytes:
    """`data` as JSON, objects that are not JSON (lsprotocol's types) through `default`
    (pygls' converter). What orjson refuses (text with lone surrogates: a file name that
    is not UTF-8) is written by the standard library, each surrogate as the escape text
    readkeeper names it with (quoting.valid_json): a message is valid Unicode."""
    try:
        return orjson.dumps(data, default=default)
    except orjson.JSONEncodeError:
        text = json.dumps(data, default=default, ensure_ascii=False)
        return quoting.valid_json(text).encode()
