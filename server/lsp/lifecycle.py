"""The session's life and the workspace: `initialize` (the roots, the first settings),
`initialized` (settings pulled, the watcher and the attach socket started), settings
pulled or pushed later, workspace folders added or removed, and `shutdown`.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Sequence
from typing import Any

from lsprotocol import types

from .. import quoting
from ..errors import shown_name
from ..files.paths import MAX_ROOTS, refused_root, uri_path
from . import agent_tools
from .server import ReadkeeperServer
from .watching import start_watching

log = logging.getLogger("readkeeper")

# Settings warnings remembered as shown (so not shown again at every pull or push), and
# how much of one is shown: a warning quotes the value the client sent, and a client
# sending ever new values must not grow the server or flood the user with them.
MAX_WARNINGS_KEPT = 256
MAX_WARNING_CHARS = 1_000


def on_initialize(ls: ReadkeeperServer, params: types.InitializeParams) -> None:
    """Fix the workspace roots and take the settings the client sent along."""
    folders = [f.uri for f in params.workspace_folders or []]
    if not folders and params.root_uri:
        folders = [params.root_uri]
    # As the editor names them: a path may name a root by that spelling (a symlink).
    roots = [p for p in (uri_path(f, real=False) for f in folders) if p]
    if not folders and params.root_path:
        roots = [os.path.abspath(params.root_path)]
    # Fixed here: a second initialize is refused (ReadkeeperProtocol.lsp_initialize).
    ls.core.workspace.set_roots(permitted_roots(ls, roots, may_be_home=True))
    options = params.initialization_options
    settings = options.get("readkeeper", options) if isinstance(options, dict) else None
    ls.initialization_settings = dict(settings) if isinstance(settings, dict) else {}
    trusted = ls.initialization_settings.pop("trusted", None)
    if isinstance(options, dict) and "trusted" in options:
        trusted = options["trusted"]
    # The tools the client's agent calls readkeeper with: its next steps name them.
    tools = ls.initialization_settings.pop(agent_tools.OPTION, None)
    if isinstance(options, dict) and agent_tools.OPTION in options:
        tools = options[agent_tools.OPTION]
    ls.endpoint.agent_tools = agent_tools.tools_of(tools)
    # Only `initialize` says whether the editor trusts the workspace, and only `false`
    # (or anything but `true`) restricts: the editor restarts the server to lift it.
    ls.core.trusted = trusted is None or trusted is True
    if not ls.core.trusted:
        log.info("restricted mode: allowed_paths, program-naming settings and git status off")
    apply_settings(ls, {})


def permitted_roots(ls: ReadkeeperServer, paths: Sequence[str], may_be_home: bool) -> list[str]:
    """`paths` without the ones `refused_root` refuses, each refusal told to the user."""
    roots: list[str] = []
    for path in paths:
        why = refused_root(path, may_be_home)
        if why is None:
            roots.append(path)
        else:
            ls.notify_user(
                f"{shown_name(path)} is not a workspace root for readkeeper: {why}. Files "
                "there are read only with your permission; open a project folder to work in.",
                types.MessageType.Warning,
            )
    return roots


def shown_warning(warning: str) -> str:
    """A settings warning as shown: one over `MAX_WARNING_CHARS` is cut (between two
    escapes) and marked `(cut)` among readkeeper's words before the value it quotes,
    which end with a colon, as the diagnostics' mark: a mark after the value (it was
    " … [cut]") was one a value could end with."""
    if len(warning) <= MAX_WARNING_CHARS:
        return warning
    words = warning.removeprefix("readkeeper: ")
    return "readkeeper (cut): " + quoting.cut_escaped(words, MAX_WARNING_CHARS)


def apply_settings(ls: ReadkeeperServer, latest: dict[str, Any]) -> None:
    """Settings from `initializationOptions`, overlaid by the latest the client sent
    (pulled or pushed): a client that sends only some keys keeps the others."""
    # `trusted` is heard at `initialize` only: a later message can neither lift nor set it.
    # So is `agent_tools`.
    latest = {k: v for k, v in latest.items() if k not in ("trusted", agent_tools.OPTION)}
    for warning in ls.core.configure({**ls.initialization_settings, **latest}):
        key = hash(warning)
        if key in ls.settings_warned:  # not again at every pull or push
            ls.settings_warned.move_to_end(key)
            continue
        ls.settings_warned[key] = None
        while len(ls.settings_warned) > MAX_WARNINGS_KEPT:
            ls.settings_warned.popitem(last=False)
        ls.notify_user(shown_warning(warning), types.MessageType.Warning)


async def on_initialized(ls: ReadkeeperServer, params: types.InitializedParams) -> None:
    """Mirror warnings to the editor's log, pull the settings, start the watcher and the
    attach socket.

    What serving needs beyond `initialize` is imported meanwhile, on a thread
    (`ReadkeeperServer.load`): a read sent right after `initialized` waits for the read
    pipeline's modules only, not for the watcher's behind them."""
    ls.client_log.loop = asyncio.get_running_loop()
    loading = asyncio.ensure_future(asyncio.to_thread(ls.load))
    await pull_configuration(ls)
    await loading
    ls.start_attach()
    await start_watching(ls)


async def pull_configuration(ls: ReadkeeperServer) -> None:
    """Ask the client for the `readkeeper` settings section, when it can answer."""
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


async def on_configuration(
    ls: ReadkeeperServer, params: types.DidChangeConfigurationParams
) -> None:
    """Settings pushed with the notice, or pulled when the notice carries none."""
    pushed = params.settings.get("readkeeper") if isinstance(params.settings, dict) else None
    if isinstance(pushed, dict):
        apply_settings(ls, pushed)
    else:
        await pull_configuration(ls)


def on_folders(ls: ReadkeeperServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    """Workspace folders added or removed: the roots, the watcher and the attach socket
    follow."""
    # From the roots we hold, not pygls' folder list: that one keeps what was refused.
    removed = {uri_path(f.uri) for f in params.event.removed}
    roots = [r for r in ls.core.workspace.roots if r not in removed]
    named = (uri_path(f.uri, real=False) for f in params.event.added)  # as for initialize
    added = list({os.path.realpath(p): p for p in named if p}.values())
    added = [p for p in added if os.path.realpath(p) not in roots]
    room = max(0, MAX_ROOTS - len(roots))
    if len(added) > room:  # cut before checking each: one message, not one per folder
        ls.notify_user(
            f"readkeeper keeps at most {MAX_ROOTS} workspace roots, so {len(added) - room} "
            f"added folder(s) are not roots, from {shown_name(added[room])} on: remove folders "
            "first.",
            types.MessageType.Warning,
        )
        ls.core.stats.client_state_dropped("workspace_folders", len(added) - room)
        added = added[:room]
    added = permitted_roots(ls, added, may_be_home=False)
    taken = {*roots, *map(os.path.realpath, added)}
    for folder in params.event.added:  # pygls' own list keeps only the roots taken
        if uri_path(folder.uri) not in taken:
            ls.workspace.remove_folder(folder.uri)
    ls.core.workspace.set_roots([*roots, *added])
    ls.core.roots_changed()
    if ls.attach is not None:
        ls.attach.set_roots(list(ls.core.workspace.roots))


def on_shutdown(ls: ReadkeeperServer, params: None) -> None:
    """Close the attach socket and stop the core's background work."""
    ls.stop_attach()
    ls.core.close()


# The LSP methods served here, as the server registers them.
FEATURES: dict[str, Callable[..., Any]] = {
    types.INITIALIZE: on_initialize,
    types.INITIALIZED: on_initialized,
    types.WORKSPACE_DID_CHANGE_CONFIGURATION: on_configuration,
    types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS: on_folders,
    types.SHUTDOWN: on_shutdown,
}
