"""`readkeeper mcp`: the MCP front end, a thin adapter over `calls` (the dispatch every
front end shares), served with the official `mcp` SDK's low-level `Server`.

Each tool call goes to a backend: the editor's readkeeper when one serves this
workspace (attach mode: its read-state, watcher and unsaved buffers), else a core of
our own. The backend is chosen at the first call, once the roots are known: `--root`
flags, else the client's MCP roots, else the working directory, never the filesystem
root or the home folder unless a `--root` names it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types.version import MODERN_PROTOCOL_VERSIONS as MODERN

from .. import __version__, progress, quoting
from ..attach.client import AttachClient
from ..errors import ReadkeeperError, fault_reason, names_cut, shown_name, too_deep
from ..files.paths import MAX_ROOTS, refused_root, uri_path
from ..files.reach import here
from ..read.loop_guard import OffTheLoop, on_the_loop
from . import facts, filesystem, principals, render
from .backends import AttachedBackend, Backend, LocalBackend
from .early_start import EarlyStart
from .logs import SettingsLog
from .page_images import IMAGES_NOTE_TOKENS, page_images
from .principals import SHARED_HTTP_SESSION
from .progress import sender as progress_sender
from .request_fields import NamedRefusals
from .tools import TOOL_METHODS, TOOL_NAMES, TOOLS, ToolSpec, input_schema, result_meta

log = logging.getLogger("readkeeper")

INSTRUCTIONS = (
    "readkeeper is the file layer for this workspace: read files with its `read` tool "
    "(a re-read of an unchanged range returns a short file_unchanged stub), change them "
    "with `edit` and `write` (refused as stale when the file changed since your read, "
    "so re-read and retry), and call `changes` to see what changed under you."
)
FILESYSTEM_INSTRUCTIONS = (
    "readkeeper, serving the filesystem server's tools: reading a file you already hold "
    "unchanged returns a short note instead of the text (force=true resends it), long "
    "files come back in parts (offset continues), and edit_file/write_file of a file are "
    "refused until you have read it, or as stale when it changed since your read."
)
# The tool sets `readkeeper mcp --tools` offers.
TOOL_SETS = ("readkeeper", "filesystem")


class McpFrontEnd:
    """The tools, and the backend they are served by."""

    def __init__(
        self,
        roots: Sequence[str] = (),
        attach: bool = True,
        tools: str = "readkeeper",
        settings_warnings: Sequence[str] = (),
    ) -> None:
        # As named: a path may name a root by that spelling (a symlink); real in the core.
        self.explicit_roots = [os.path.normpath(os.path.abspath(r)) for r in roots]
        self.attach = attach
        self.tool_set = tools  # one of TOOL_SETS
        self.backend: Backend | None = None
        # The protocol version of the last call the SDK served, and how many reads and
        # edits were served from their stdin line (quick.py) instead.
        self.protocol_version: str | None = None
        self.quick_reads = 0
        self.thread_reads = 0  # quick reads found costly, served on a worker thread (quick.py)
        self.quick_edits = 0
        self._told = False  # whether the agent was told it is not attached, and why
        self._lock = anyio.Lock()
        # The settings warnings said at the start, for a client that reads the log.
        self.log = SettingsLog(list(settings_warnings))
        # With `--root`, the backend is made when the handshake ends (early_start.py).
        roots = self.explicit_roots
        self._early = EarlyStart(lambda: self._backend_for(roots)) if roots else None
        self.core_started = ""  # when: "handshake" or "first_call" (stats)

    # --- the SDK's handlers ---

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        """Every tool, its schema generated from the protocol's params (the drop-in's:
        the reference server's, filesystem/tools.py). A client lists them as its
        handshake ends: the backend is made then (`on_initialized`)."""
        await self.log.on_request(ctx)
        await self.on_initialized(ctx, types.NotificationParams())
        if self.tool_set == "filesystem":
            specs = [(spec, filesystem.SCHEMAS[spec.name]) for spec in filesystem.TOOLS]
        else:
            specs = [(spec, input_schema(spec)) for spec in TOOLS]
        return types.ListToolsResult(tools=[_listed(spec, schema) for spec, schema in specs])

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        """Serve one tool call; a refusal is a tool error with its kind; every answer is
        valid Unicode (a name that is not UTF-8 is escaped)."""
        await self.log.on_request(ctx)
        answered = await self._call_tool(ctx, params)
        if isinstance(answered, types.CallToolResult):
            return render.valid_unicode(answered)
        return answered

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        names = filesystem.TOOL_NAMES if self.tool_set == "filesystem" else TOOL_NAMES
        if params.name not in names:
            error = ReadkeeperError(
                "unsupported",
                f"There is no tool {shown_name(params.name)}; the tools are {sorted(names)}.",
            )
            return render.error_result(error)
        arguments = dict(params.arguments or {})
        given = dict(arguments)  # as the agent sent them: its ways on are said as that call
        try:
            if self.backend is None:
                roots = await self._client_roots(ctx, params)
                if isinstance(roots, types.InputRequiredResult):
                    return roots
                await self._start(roots)
            assert self.backend is not None
            session, principal = principals.connection(ctx)
            backend = principals.for_principal(self.backend, principal)
            if session is not None and arguments.get("session") is None:
                arguments["session"] = session
                if session == SHARED_HTTP_SESSION and params.name in ("read", "read_many"):
                    # Callers we cannot tell apart: none gets a stub for another's read.
                    arguments.setdefault("force", True)
            self.protocol_version = ctx.protocol_version
            if self.tool_set == "filesystem":
                served = filesystem.Served(
                    backend.call,
                    lambda: _reachable(backend),
                    arguments.pop("session", None),
                    force_reads=session == SHARED_HTTP_SESSION,
                )
                answered: types.CallToolResult = await anyio.to_thread.run_sync(
                    filesystem.serve, served, params.name, arguments
                )
                notice = self._notice(backend, params.name)
                if notice is not None:
                    answered.content.insert(0, render.text(notice))
                return answered
            if backend.quick(params.name, arguments):
                with contextlib.suppress(OffTheLoop):  # costly after all: on a thread
                    return self.answer(backend, params.name, arguments, given)
            result = await self._run(ctx, backend, TOOL_METHODS[params.name], arguments)
            images: list[types.ImageContent] = []
            if params.name == "stats" and isinstance(result, dict):
                quick = {
                    "quick_reads": self.quick_reads,
                    "quick_edits": self.quick_edits,
                    "thread_reads": self.thread_reads,
                    "core_started": self.core_started,
                }
                # (the roots named as the core's stats name them: cut, client-named)
                result = {**result, **names_cut(backend.describe()), **quick}
            core = getattr(backend, "core", None)
            settings = core.settings if core is not None else _env_settings()
            if params.name == "read" and isinstance(result, dict) and result.get("type") == "parts":
                # The images within what the text leaves, its note's word on them too.
                text = render.read_text_tokens(result, given) + IMAGES_NOTE_TOKENS
                room = settings.max_tokens - text
                images = await page_images(
                    backend, result, arguments.get("session"), room, settings.image_max_tokens
                )
            budget = facts.budget(params.name, arguments, settings)
            notice, offset = self._notice(backend, params.name), arguments.get("offset")
            return render.tool_result(
                params.name, result, images, notice, offset, budget, given, arguments
            )
        except ReadkeeperError as exc:
            return render.error_result(exc, params.name, given)
        except Exception as exc:
            return _fault(params.name, exc)

    async def _run(
        self, ctx: ServerRequestContext[Any], backend: Backend, tool: str, arguments: dict[str, Any]
    ) -> Any:
        """Serve the call on a worker thread, its long work sent as progress
        notifications when the client asked for them (mcp/progress.py). Attached, the
        work's steps are the editor's: the progress begins past the threshold and ends."""
        send = progress_sender(ctx, tool)
        if send is None:
            return await anyio.to_thread.run_sync(backend.call, tool, arguments)
        core = getattr(backend, "core", None)
        after_ms = (core.settings if core is not None else _env_settings()).progress_after_ms
        title = progress.TITLES[tool]
        try:
            return await anyio.to_thread.run_sync(
                progress.within, send, title, after_ms, backend.call, tool, arguments
            )
        finally:
            await send.settle()

    def _notice(self, backend: Backend, tool: str) -> str | None:
        """What the agent must know when it could not attach to the editor's server
        though one may run (its folder was refused): on its first result, and on every
        edit and write, which may land under unsaved changes it cannot see."""
        why = getattr(backend, "why", "")
        changing = ("edit", "write", "edit_file", "write_file", "move_file")
        if not why or (self._told and tool not in changing):
            return None
        self._told = True
        return (
            f"Note: not attached to the editor's readkeeper ({why}). Unsaved changes in "
            "the editor are not visible to you, and an edit or write goes to disk even "
            "under them: ask the user to save their open files before you change them."
        )

    def answer(
        self, backend: Backend, name: str, arguments: dict[str, Any], given: Any = None
    ) -> types.CallToolResult:
        """Serve a quick call on the event loop (from the SDK's handler, or from its
        stdin line: quick.py): its result, or its refusal, as the tool's result.
        Raises OffTheLoop when the call turns out costly (an outline, a large diff):
        the caller then serves it on a worker thread."""
        args = arguments if given is None else given  # as the agent sent them
        try:
            with on_the_loop():
                result = backend.call(name, arguments)
            notice = self._notice(backend, name)
            return render.tool_result(name, result, [], notice, args=args, served=arguments)
        except ReadkeeperError as exc:
            return render.error_result(exc, name, args)
        except OffTheLoop:
            raise
        except Exception as exc:
            return _fault(name, exc)

    def on_thread(
        self, backend: Backend, name: str, arguments: dict[str, Any]
    ) -> Callable[[], types.CallToolResult]:
        """A call taken from its stdin line to be served on a worker thread (quick.py's
        edits): what the thread runs, the call's result or refusal as the SDK's handler
        makes it (its notice taken now, on the loop)."""
        notice = self._notice(backend, name)

        def serve() -> types.CallToolResult:
            try:
                answered = backend.call(name, arguments)
                return render.tool_result(name, answered, [], notice, args=arguments)
            except ReadkeeperError as exc:
                return render.error_result(exc, name, arguments)
            except Exception as exc:
                return _fault(name, exc)

        return serve

    # --- roots and the backend ---

    async def _client_roots(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> list[str] | types.InputRequiredResult:
        """The client's MCP roots when it has some to give (none when `--root` was
        passed): asked with roots/list, or, on 2026-07-28 connections, as an input
        request the client answers by calling again."""
        if self.explicit_roots:
            return []
        caps = ctx.session.client_capabilities
        if caps is None or caps.roots is None:
            return []
        answer: Any = (params.input_responses or {}).get("roots")
        if answer is None:
            if ctx.session.can_send_request and ctx.protocol_version not in MODERN:
                try:
                    answer = await ctx.session.list_roots()
                except Exception as exc:
                    log.warning("roots/list failed (%s); using the working directory", exc)
                    return []
            else:
                return types.InputRequiredResult(input_requests={"roots": types.ListRootsRequest()})
        roots = getattr(answer, "roots", None) or []
        named = (uri_path(str(root.uri), real=False) for root in roots)
        given = list(dict.fromkeys(p for p in named if p))
        if len(given) > MAX_ROOTS:  # as an editor's folders: the first ones are kept
            log.warning(
                "The client named %d roots; readkeeper keeps at most %d, so those from %s "
                "on are not roots",
                len(given),
                MAX_ROOTS,
                shown_name(given[MAX_ROOTS]),
            )
            given = given[:MAX_ROOTS]
        # A file beside folders (an editor with a loose file open) is no root, and does
        # not refuse the folders; named alone, it is refused as every door refuses it.
        folders = [p for p in given if not (os.path.lexists(p) and not os.path.isdir(p))]
        if folders != given and folders:
            files = [quoting.name(p) for p in given if p not in folders]
            log.warning("Not a folder, so not a root: %s", ", ".join(files))
        return folders or given

    async def on_initialized(
        self, ctx: ServerRequestContext[Any], params: types.NotificationParams
    ) -> None:
        """The handshake ended (`notifications/initialized`; a 2026-07-28 connection has
        none: its `tools/list`): make the backend now when `--root` named the roots."""
        if self._early is not None and self.backend is None:
            self._early.begin()

    async def _start(self, client_roots: list[str]) -> None:
        async with self._lock:
            if self.backend is not None:
                return
            if self._early is not None and self._early.begun:
                self.backend = await anyio.to_thread.run_sync(self._early.take)
                if self.backend is not None:
                    self.core_started = "handshake"
                    return
            self.core_started = "first_call"
            roots = self.explicit_roots or client_roots or [here()]
            if not self.explicit_roots:
                for root in roots:
                    why = refused_root(root, may_be_home=False)  # unless --root names it
                    if why is not None:
                        source = "the client's MCP roots" if client_roots else "the working folder"
                        raise ReadkeeperError(
                            "outside_workspace",
                            f"readkeeper will not serve {root} ({source}): {why}. Start it "
                            "for a project folder: `readkeeper mcp --root /path/to/project` "
                            "(an explicit --root may name any folder).",
                            real_path=root,
                        )
            self.backend = await anyio.to_thread.run_sync(self._backend_for, roots)

    def _backend_for(self, roots: list[str]) -> Backend:
        why = ""
        if self.attach:
            try:
                client = AttachClient.connect(roots)
            except (ReadkeeperError, OSError) as exc:
                why = getattr(exc, "message", None) or str(exc)
                log.warning("Not attaching to the editor's readkeeper: %s", why)
                client = None
            if client is not None:
                return AttachedBackend(client, roots)
        return LocalBackend(roots, why)

    def close(self) -> None:
        """Stop the backend (our own core, or the connection to the editor's)."""
        if self._early is not None:
            self._early.close()
        if self.backend is not None:
            self.backend.close()


def _reachable(backend: Backend) -> list[str]:
    """The folders calls may reach (list_allowed_directories): roots, then allowed paths."""
    described = backend.describe()
    return [*described.get("roots", []), *described.get("allowed_paths", [])]


def _env_settings() -> Any:
    """The settings of this process's environment (the defaults, and READKEEPER_*)."""
    from ..settings import resolve_settings

    return resolve_settings(None)[0]


def _fault(tool: str, exc: Exception) -> types.CallToolResult:
    """A fault in readkeeper itself (logged) as the tool's error; Python's recursion
    limit is the input's nesting, `bad_params`."""
    if isinstance(exc, RecursionError):
        return render.error_result(too_deep(tool))
    log.exception("The MCP tool %s failed unexpectedly", tool)
    reason = fault_reason(exc)
    return render.error_result(
        ReadkeeperError(
            "internal",
            f"{tool} failed on a fault in readkeeper ({reason}); it is not something the "
            "call did wrong, and the server's log has the details.",
            reason=reason,
        )
    )


def build_server(front: McpFrontEnd) -> Server[Any]:
    """The SDK server with readkeeper's tools, and `logging/setLevel` (logs.py)."""
    with warnings.catch_warnings():  # deprecated at 2026-07-28, and the way before it
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        server = Server(
            "readkeeper",
            version=__version__,
            title="readkeeper",
            instructions=FILESYSTEM_INSTRUCTIONS
            if front.tool_set == "filesystem"
            else INSTRUCTIONS,
            on_list_tools=front.list_tools,
            on_call_tool=front.call_tool,
            on_set_logging_level=front.log.set_level,
        )
    server.add_notification_handler(
        "notifications/initialized", types.NotificationParams, front.on_initialized
    )
    server.middleware.append(NamedRefusals())  # the SDK's refusals name the field
    return server


__all__ = ["McpFrontEnd", "build_server"]


def _listed(spec: ToolSpec, schema: dict[str, Any]) -> types.Tool:
    """`spec` as tools/list shows it, with its input `schema`."""
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=schema,
        _meta=result_meta(spec.name),
        annotations=types.ToolAnnotations(
            title=spec.title,
            read_only_hint=spec.read_only,
            destructive_hint=spec.destructive,
            idempotent_hint=spec.idempotent,
            open_world_hint=False,
        ),
    )
