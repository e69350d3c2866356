"""The readkeeper/* methods: one table of how the LSP front end serves each request, and
one decorator (`answering`) that turns a request's failure into the error reply its
kind names (`rpc_errors`).

A request's params type and the core call behind it are `calls.METHODS`' (one dispatch
for every front end); what is LSP's own is here: where the call runs (bookkeeping that
touches no file inline on the event loop, in the order it came; the rest on the thread
pool), the event loop lent to an edit or write so that an edit of an open buffer can
send `workspace/applyEdit`, and the user asked about a read outside the workspace.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import Any

from lsprotocol import types

from .. import calls, progress, quoting
from ..errors import ReadkeeperError
from ..progress import TITLES
from ..protocol import DiagnosticsParams, ReadParams, structure
from . import agent_tools
from .progress import sender
from .quick import Refused
from .rpc_errors import error_reply
from .server import ReadkeeperServer

log = logging.getLogger("readkeeper")

# (server, method, raw params) -> the JSON-ready result, or a coroutine of it.
Serve = Callable[[ReadkeeperServer, str, Any], Any]
# What pygls calls: (server, raw params).
Handler = Callable[[ReadkeeperServer, Any], Any]


def on_the_loop(ls: ReadkeeperServer, method: str, raw: Any) -> Any:
    """Serve the request inline on the event loop: bookkeeping that touches no file."""
    return calls.call(ls.core, method, raw)


async def in_the_pool(ls: ReadkeeperServer, method: str, raw: Any) -> Any:
    """Serve the request on the thread pool, its long work shown as progress."""
    return await reporting(ls, method, raw, calls.call, ls.core, method, raw)


async def reporting(ls: ReadkeeperServer, method: str, raw: Any, work: Any, *args: Any) -> Any:
    """Run `work(*args)` on the thread pool with its steps sent as work-done progress
    (lsp/progress.py), when the request has long work and the client shows progress."""
    send = sender(ls, method, raw)
    if send is None:
        return await ls.run(work, *args)
    title = TITLES[method.removeprefix("readkeeper/")]
    after_ms = ls.core.settings.progress_after_ms
    try:
        return await ls.run(progress.within, send, title, after_ms, work, *args)
    finally:
        await send.settle()


async def changing(ls: ReadkeeperServer, method: str, raw: Any) -> Any:
    """Serve an edit or write on the thread pool, with the event loop lent for
    `workspace/applyEdit`."""
    params = calls.params_for(method, raw)
    ls.lend_loop()
    return await ls.run(calls.run, ls.core, method, params)


async def read(ls: ReadkeeperServer, method: str, raw: Any) -> Any:
    """Serve a read on the thread pool; a file outside the workspace is read when the
    user allows it."""
    if isinstance(raw, Refused):  # already read on the event loop (quick.py)
        params, refusal = raw
    else:
        params = calls.params_for(method, raw)
        try:
            return await reporting(ls, method, raw, calls.run, ls.core, method, params)
        except ReadkeeperError as exc:
            refusal = exc
    if refusal.kind != "outside_workspace" or not await ask_to_allow(ls, params, refusal):
        raise refusal
    return await ls.run(calls.run, ls.core, method, params)


async def ask_to_allow(ls: ReadkeeperServer, params: ReadParams, exc: ReadkeeperError) -> bool:
    """Ask the user whether the agent may read a file outside the workspace."""
    window_caps = ls.client_capabilities.window
    path = exc.data.get("file_path")
    if not (window_caps and window_caps.show_message) or "roots" not in exc.data:
        return False  # nothing the user could allow (a root replaced by a link)
    if not isinstance(path, str):
        return False
    # The path as the agent gave it: nothing outside was looked up to answer the agent,
    # and the user's answer is what lets readkeeper look (Workspace.grant).
    link, target = exc.data.get("link"), exc.data.get("link_target")
    via = ""
    if isinstance(link, str) and isinstance(target, str):
        by = "a symbolic link" if link == path else f"through the link {quoting.name(link)},"
        via = f" ({by} to {quoting.name(target)})"
    once, session, deny = "Allow once", "Allow for this session", "Deny"
    try:
        choice = await ls.window_show_message_request_async(
            types.ShowMessageRequestParams(
                type=types.MessageType.Warning,
                message=f"The agent wants to read {quoting.name(path)}{via}, outside the "
                "workspace.",
                actions=[types.MessageActionItem(t) for t in (once, session, deny)],
            )
        )
    except Exception as error:
        log.warning("window/showMessageRequest failed: %s", error)
        return False
    title = choice.title if choice is not None else deny
    if title == once:
        ls.core.workspace.grant(params.session, path, once=True)
    elif title == session:
        ls.core.workspace.grant(params.session, path)
    return title in (once, session)


# Every readkeeper/* request (`calls.METHODS`, under the `readkeeper/` prefix) and how
# it is served.
REQUESTS: dict[str, Serve] = {
    "readkeeper/read": read,
    "readkeeper/edit": changing,
    "readkeeper/write": changing,
    "readkeeper/attachments": in_the_pool,
    "readkeeper/changes": in_the_pool,
    "readkeeper/forget": in_the_pool,  # resolves each path: a deep one costs milliseconds
    "readkeeper/stats": on_the_loop,
    "readkeeper/readMany": in_the_pool,
    "readkeeper/grep": in_the_pool,
    "readkeeper/glob": in_the_pool,
    "readkeeper/list": in_the_pool,
    "readkeeper/stat": in_the_pool,
    "readkeeper/move": changing,
    "readkeeper/mkdir": changing,
    "readkeeper/patch": changing,
    "readkeeper/undo": changing,
}


def answering(method: str, serve: Serve) -> Handler:
    """`serve` as pygls' handler of `method`. Its `ReadkeeperError` becomes the error
    reply its kind names, any other exception an `internal` one: every failure the
    agent sees says what happened. Its next steps are said in the words of the client's
    agent's tools, when the client named them (agent_tools.py)."""
    if inspect.iscoroutinefunction(serve):

        async def answer_async(ls: ReadkeeperServer, raw: Any) -> Any:
            tools = ls.endpoint.agent_tools
            try:
                said = agent_tools.asked(method, raw)
                return agent_tools.result(tools, await serve(ls, method, raw), said)
            except Exception as exc:
                said = agent_tools.asked(method, raw)
                raise agent_tools.reply(tools, error_reply(method, exc), said) from None

        return answer_async

    def answer(ls: ReadkeeperServer, raw: Any) -> Any:  # answered inline, in order
        tools = ls.endpoint.agent_tools
        try:
            return agent_tools.result(tools, serve(ls, method, raw), agent_tools.asked(method, raw))
        except Exception as exc:
            said = agent_tools.asked(method, raw)
            raise agent_tools.reply(tools, error_reply(method, exc), said) from None

    return answer


DID_CHANGE_DIAGNOSTICS = "readkeeper/didChangeDiagnostics"


def did_change_diagnostics(ls: ReadkeeperServer, raw: Any) -> None:
    """The editor's diagnostics, forwarded by the extension."""
    ls.core.did_change_diagnostics(structure(raw, DiagnosticsParams))


def logging_failures(method: str, handle: Handler) -> Handler:
    """`handle` as pygls' handler of the notification `method`: there is no reply, so
    a failure goes to the log."""

    def handle_logged(ls: ReadkeeperServer, raw: Any) -> None:
        try:
            handle(ls, raw)
        except ReadkeeperError as exc:
            log.warning("%s ignored: %s", method, exc.message)
        except Exception:
            log.exception("%s failed unexpectedly", method)

    return handle_logged


# Every readkeeper/* method, as the server registers it.
METHODS: dict[str, Handler] = {
    **{method: answering(method, serve) for method, serve in REQUESTS.items()},
    DID_CHANGE_DIAGNOSTICS: logging_failures(DID_CHANGE_DIAGNOSTICS, did_change_diagnostics),
}
