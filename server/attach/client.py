"""The agent's side of attach mode: connect to the editor's server for a root and
forward calls to it.

Before connecting, the socket file itself is checked (a socket, owned by this user,
mode 0600, in the private folder): a socket someone else could have made is never
trusted with the agent's edits.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import socket
import threading
from typing import Any

from ..errors import ReadkeeperError
from . import discovery, framing

CONNECT_TIMEOUT_S = 2.0


class AttachClient:
    """One connection to an editor's readkeeper; `call` is safe from any thread."""

    def __init__(self, found: discovery.Found, sock: socket.socket, hello: dict[str, Any]) -> None:
        self.found = found
        self.pid: int = hello["pid"]
        self.roots: list[str] = list(hello.get("roots", []))
        self.session: str = hello.get("session", "")
        self._sock = sock
        self._lock = threading.Lock()
        self._ids = itertools.count(1)

    @classmethod
    def connect(cls, roots: list[str], viewer: bool = False) -> AttachClient | None:
        """A connection to the editor's server for the first of `roots` (or a folder
        above it), or None when none runs. A socket that fails the checks, or a server
        that will not serve all of `roots`, raises `ReadkeeperError`. The server holds
        the connection to `roots` (scope.py): never the editor's wider workspace. A
        `viewer` (`readkeeper stats`) sees every session's history and calls only stats;
        an agent's connection is a principal of its own (state/sessions.py)."""
        try:
            found = discovery.find(roots[0])
        except ReadkeeperError as exc:
            if exc.kind == "not_found":
                return None  # no private folder yet: no editor server ever published
            raise
        if found is None:
            return None
        if os.path.dirname(found.socket) != discovery.runtime_dir(create=False):
            raise ReadkeeperError(
                "unsupported",
                f"The discovery file for {found.root} names a socket outside readkeeper's "
                f"private folder ({found.socket}): it was not written by readkeeper.",
            )
        discovery.check_private(found.socket, is_dir=False)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(CONNECT_TIMEOUT_S)
        try:
            sock.connect(found.socket)
            asked: dict[str, Any] = {"roots": list(roots)}
            if viewer:
                asked["viewer"] = True
            hello = {"id": 0, "method": "hello", "params": asked}
            answer = framing.exchange(sock, hello)
        except (OSError, framing.FrameError):
            sock.close()
            return None  # gone since it published: run on our own
        if not answer or not isinstance(answer.get("result"), dict):
            sock.close()
            error = (answer or {}).get("error") or {}
            raise ReadkeeperError(
                "unsupported",
                f"The editor's readkeeper (pid {found.pid}) refused to attach: "
                f"{error.get('message', 'no answer')}",
            )
        sock.settimeout(None)
        return cls(found, sock, answer["result"])

    def call(self, method: str, params: dict[str, Any], principal: str | None = None) -> Any:
        """Forward one call (in the sessions of `principal` within this connection's, when
        given); its result, or its error as a `ReadkeeperError`."""
        with self._lock:
            msg_id = next(self._ids)
            try:
                message: dict[str, Any] = {"id": msg_id, "method": method, "params": params}
                if principal is not None:
                    message["principal"] = principal
                answer = framing.exchange(self._sock, message)
            except (OSError, framing.FrameError) as exc:
                raise ReadkeeperError(
                    "internal",
                    f"The connection to the editor's readkeeper (pid {self.pid}) broke "
                    f"({exc or type(exc).__name__}), so {method} may or may not have "
                    "happened: check (read the file), then call again.",
                    reason="broken",
                ) from None
        if answer is None:
            raise ReadkeeperError(
                "internal",
                f"The editor's readkeeper (pid {self.pid}) closed the connection, so "
                f"{method} may or may not have happened: check (read the file), then call "
                "again (the next call connects to the editor's server again).",
                reason="closed",
            )
        if "error" in answer:
            error = answer["error"]
            data = dict(error.get("data") or {})
            kind = data.pop("kind", "internal")
            raise ReadkeeperError(kind, str(error.get("message", "")), **data)
        return answer.get("result")

    def close(self) -> None:
        """End the connection."""
        with contextlib.suppress(OSError):
            self._sock.close()


__all__ = ["AttachClient"]
