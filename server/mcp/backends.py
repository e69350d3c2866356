"""Where the MCP front end's tool calls are served (server.py chooses): a core of our
own, or the editor's readkeeper over its attach socket."""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING, Any, Protocol

from .. import calls
from ..attach.client import AttachClient
from ..attachments import cut_notes
from ..errors import ReadkeeperError
from ..read.joined import count_joined
from ..rendered_tokens import as_sent
from .render import with_left_as_sent

if TYPE_CHECKING:
    from ..read.tokens import TokenCounter

log = logging.getLogger("readkeeper")


class Backend(Protocol):
    """Where tool calls are served: the editor's server, or a core of our own."""

    def quick(self, tool: str, arguments: dict[str, Any]) -> bool:
        """Whether the call is sure to be quick enough to serve on the event loop."""
        ...

    def describe(self) -> dict[str, Any]:
        """Which backend this is, for `stats`."""
        ...

    def call(self, method: str, params: dict[str, Any], principal: str = "") -> Any:
        """Serve one call (blocking) in `principal`'s sessions (state/sessions.py): its
        JSON result, or a `ReadkeeperError`."""
        ...

    def close(self) -> None:
        """Release what it holds."""
        ...


class LocalBackend:
    """A core of our own (no editor serves this workspace)."""

    def __init__(self, roots: list[str], why: str = "") -> None:
        # Imported here, on the thread that chooses the backend at the first call:
        # `initialize` is answered without waiting for the core's modules.
        from ..core import Readkeeper

        self.core = Readkeeper(roots=roots)
        # An MCP server is read through: its reads count exactly, waiting for the table.
        self.core.tokens.load_ahead()
        self.why = why  # why not attached, when there was a reason worth telling
        self.core.start_watching(log.warning)

    def describe(self) -> dict[str, Any]:
        """Stand-alone, its roots, and why it did not attach (if there was a reason)."""
        mode: dict[str, Any] = {"mode": "standalone", "roots": list(self.core.workspace.roots)}
        if self.core.workspace.allowed:
            mode["allowed_paths"] = list(self.core.workspace.allowed)
        if self.why:
            mode["not_attached"] = self.why
        return mode

    def call(self, method: str, params: dict[str, Any], principal: str = "") -> Any:
        """Serve the call with our own core; a read's `tokens` counts the text MCP sends
        of it (rendered_tokens.py)."""
        counter = self.core.tokens
        joined = functools.partial(count_joined, counter)
        with cut_notes.in_session(params.get("session")):  # MCP's tools take a session
            answered = calls.call(self.core, method, params, principal)
        answer = as_sent(method, answered, counter.count, joined)
        return _left_as_sent(method, params, answer, counter.count)

    def quick(self, tool: str, arguments: dict[str, Any]) -> bool:
        """A read of a text file by its lines once the token table is loaded (the first
        count loads it, in a few hundred milliseconds): `calls.quick`."""
        return calls.quick(self.core, tool, arguments)

    def close(self) -> None:
        """Stop the core's watcher and pools."""
        self.core.close()


class AttachedBackend:
    """The editor's readkeeper, over its socket. When the connection breaks (the editor
    reloaded its window), the call fails and the next one connects again, to the
    editor's new server for the same root if one runs: a call is never sent twice."""

    def __init__(self, client: AttachClient, roots: list[str]) -> None:
        self.client = client
        self.roots = roots
        self._broken = False
        self._counter: TokenCounter | None = None  # made for the first read counted here

    def quick(self, tool: str, arguments: dict[str, Any]) -> bool:
        """Never: every call waits for the editor's server, however busy it is."""
        return False

    def describe(self) -> dict[str, Any]:
        """Attached, to which server (pid) and its roots."""
        client = self.client
        return {"mode": "attached", "pid": client.pid, "roots": client.roots}

    def call(self, method: str, params: dict[str, Any], principal: str = "") -> Any:
        """Forward the call to the editor's server, which serves it in this connection's
        sessions, or in those of `principal` within it (an HTTP client's)."""
        if self._broken:
            client = AttachClient.connect(self.roots)
            if client is None:
                raise ReadkeeperError(
                    "internal",
                    f"The editor's readkeeper (pid {self.client.pid}) has gone, and none "
                    f"serves {self.roots[0]} now. Reopen the folder in the editor, or restart "
                    "this MCP server to run on its own.",
                    reason="detached",
                )
            self.client.close()
            self.client, self._broken = client, False
        try:
            answered = self.client.call(method, params, principal or None)
            answer = as_sent(method, answered, self._count)
            return _left_as_sent(method, params, answer, self._count)
        except ReadkeeperError as exc:
            if exc.kind == "internal" and exc.data.get("reason") in ("closed", "broken"):
                self._broken = True
            raise

    def _count(self, text: str) -> int:
        """The editor's server counts what its LSP front end sends; what MCP sends of a
        notebook, an outline or rendered pages is counted here, in the same encoding
        (the environment's settings: the editor's may differ, and then so does it)."""
        if self._counter is None:
            from ..read.tokens import TokenCounter
            from ..settings import resolve_settings

            self._counter = TokenCounter(resolve_settings(None)[0].token_encoding)
        return self._counter.count(text)

    def close(self) -> None:
        """End the connection."""
        self.client.close()


def _left_as_sent(method: str, params: dict[str, Any], answer: Any, count: Any) -> Any:
    """A readMany's budget left as the text MCP sends of it spends it (the core spent
    its own words of that text: read/many.py)."""
    if method != "readMany":
        return answer
    return with_left_as_sent(answer, params, count)
