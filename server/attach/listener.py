"""The editor's server side of attach mode: a Unix socket that serves the calls of
`readkeeper mcp` processes through the same dispatch and core as LSP.

Security: the socket is made with mode 0600 in the private folder of `discovery`, and
every connection's peer is checked with SO_PEERCRED: a process of another uid is
refused even if it could reach the socket. Each connection runs on its own thread,
one request at a time, and is its own read-state session unless a call names one; a
bad frame gets an error answer (a fatal one also ends that connection), never a stuck
server.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import socket
import struct
import threading
from collections.abc import Callable
from typing import Any

from .. import __version__, calls
from ..attachments import cut_notes
from ..core import Readkeeper
from ..errors import ReadkeeperError, fault_reason, too_deep
from ..protocol import unstructure
from ..state import dropped as session_dropped
from ..state import later, sessions
from . import discovery, framing
from .scope import Scope

log = logging.getLogger("readkeeper")

MAX_CONNECTIONS = 64
_UCRED = struct.Struct("3i")  # pid, uid, gid


def peer_credentials(conn: socket.socket) -> tuple[int, int]:
    """The (pid, uid) of the process at the other end of a Unix socket."""
    raw = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
    pid, uid, _gid = _UCRED.unpack(raw)
    return pid, uid


class Listener:
    """Serve attach connections for `core` until `close`."""

    def __init__(
        self,
        core: Readkeeper,
        before_call: Callable[[str], None] | None = None,
        max_frame: int = framing.MAX_FRAME,
    ) -> None:
        self.core = core
        self.before_call = before_call  # e.g. lend the editor's event loop for applyEdit
        self.max_frame = max_frame
        self.folder = ""
        self.socket_path = ""
        self._sock: socket.socket | None = None
        self._published: list[str] = []
        self._lock = threading.Lock()
        self._count = itertools.count(1)
        self._open = 0
        self._closed = False
        self.refused = ""  # why the private folder may not be used (for the user)

    def start(self, roots: list[str]) -> bool:
        """Listen and publish discovery files for `roots`; False (with a warning in
        the log) when the private folder may not be used."""
        why = discovery.unsupported()
        if why is not None:  # not a fault of the user's set-up: no warning
            log.info("Agents outside the editor cannot attach to readkeeper: %s", why)
            return False
        try:
            self.folder = discovery.runtime_dir()
        except (ReadkeeperError, OSError) as exc:
            self.refused = getattr(exc, "message", None) or str(exc)
            log.warning("Agents outside the editor cannot attach to readkeeper: %s", self.refused)
            return False
        swept = discovery.sweep(self.folder)
        if swept:
            log.info("Removed %d entries of dead readkeeper servers from %s", swept, self.folder)
        self.socket_path = os.path.join(self.folder, f"{os.getpid()}.sock")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.socket_path)  # a dead server's, with our recycled pid
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_mask = os.umask(0o177)  # the socket is born 0600: no moment open to others
        try:
            sock.bind(self.socket_path)
        finally:
            os.umask(old_mask)
        os.chmod(self.socket_path, 0o600)
        sock.listen(16)
        self._sock = sock
        threading.Thread(target=self._accept, name="readkeeper-attach", daemon=True).start()
        self.set_roots(roots)
        return True

    def set_roots(self, roots: list[str]) -> None:
        """Publish discovery files for exactly these roots."""
        if self._sock is None:
            return
        with self._lock:
            discovery.unpublish(self._published)
            self._published = discovery.publish(self.folder, roots, self.socket_path)

    def close(self) -> None:
        """Stop listening; remove the socket and the discovery files."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            sock, self._sock = self._sock, None
            discovery.unpublish(self._published)
            self._published = []
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.socket_path)

    def _accept(self) -> None:
        while True:
            sock = self._sock
            if sock is None:
                return
            try:
                conn, _ = sock.accept()
            except OSError:
                return  # closed
            threading.Thread(
                target=self._serve, args=(conn,), name="readkeeper-attach-conn", daemon=True
            ).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            pid, uid = peer_credentials(conn)
            if uid != os.geteuid():
                log.warning("Refused an attach connection from uid %d (pid %d)", uid, pid)
                self._refuse(conn, f"readkeeper serves only uid {os.geteuid()}, not uid {uid}.")
                return
            with self._lock:
                if self._open >= MAX_CONNECTIONS:
                    busy = True
                else:
                    busy = False
                    self._open += 1
            if busy:
                self._refuse(conn, f"Too many attached agents ({MAX_CONNECTIONS}); try later.")
                return
            try:
                self._converse(conn, next(self._count), pid)
            finally:
                with self._lock:
                    self._open -= 1

    def _refuse(self, conn: socket.socket, why: str) -> None:
        with contextlib.suppress(OSError):
            framing.send(conn, {"id": None, "error": {"message": why, "data": {"kind": "refused"}}})

    def _converse(self, conn: socket.socket, number: int, pid: int) -> None:
        # The connection is a principal of its own (state/sessions.py): its session
        # names are its own, whatever another connection or the editor names theirs.
        session = f"mcp-{pid}-{number}"
        scope: list[Scope] = []  # set by the hello: the roots this connection may reach
        while True:
            try:
                message = framing.receive(conn, self.max_frame)
            except framing.FrameError as exc:
                error = {"message": f"Bad frame: {exc}.", "data": {"kind": "bad_params"}}
                with contextlib.suppress(OSError):
                    framing.send(conn, {"id": None, "error": error})
                if exc.fatal:
                    return
                continue
            except OSError:
                return
            if message is None:
                return
            try:
                framing.send(conn, self.answer(message, session, scope, f"attach-{number}"))
                later.answered()
            except OSError:
                return

    def answer(
        self, message: dict[str, Any], session: str, scope: list[Scope], principal: str
    ) -> dict[str, Any]:
        """The answer frame to one request frame. The connection's first frame must be a
        hello naming its roots (`scope`, filled here); every later call is held to them,
        in `principal`'s sessions (or, for the user's own viewer, `stats` only)."""
        msg_id = message.get("id")
        method = message.get("method")
        params = message.get("params")
        try:
            if not isinstance(method, str):
                raise ReadkeeperError("bad_params", "A request frame needs a method (a string).")
            if method == "hello":
                return {"id": msg_id, "result": self._hello(params, session, scope, principal)}
            if not scope:
                raise ReadkeeperError(
                    "bad_params",
                    f"{method} came before hello: send hello with your roots first.",
                )
            if params is None:
                params = {}
            if isinstance(params, dict) and params.get("session") is None:
                params = {**params, "session": session}
            name = calls.method_named(method).name
            scope[0].principal = _principal(scope[0].owner, message.get("principal"))
            if scope[0].principal == sessions.VIEWER and name != "stats":
                raise ReadkeeperError(
                    "unsupported",
                    f"{name} is not served to `readkeeper stats`' connection, which only "
                    "looks: attach as an agent (`readkeeper mcp`) to call it.",
                    method=name,
                )
            if isinstance(params, dict):
                params = scope[0].params(name, params)
            if self.before_call is not None:
                self.before_call(name)
            try:
                result = self._call(name, params, scope[0])
            except ReadkeeperError as exc:
                raise scope[0].error(exc) from None
            return {"id": msg_id, "result": scope[0].result(name, result)}
        except ReadkeeperError as exc:
            return {"id": msg_id, "error": {"message": exc.message, "data": exc.to_data()}}
        except RecursionError:  # the input's nesting, never a fault of ours
            refused = too_deep(str(method))
            return {"id": msg_id, "error": {"message": refused.message, "data": refused.to_data()}}
        except Exception as exc:
            log.exception("An attached %s failed unexpectedly", method)
            reason = fault_reason(exc)
            data = {"kind": "internal", "reason": reason}
            text = (
                f"{method} failed on a fault in readkeeper ({reason}); the editor's "
                "readkeeper log has the details. Other requests work."
            )
            return {"id": msg_id, "error": {"message": text, "data": data}}

    def _call(self, name: str, params: Any, scope: Scope) -> Any:
        if name != "changes":
            # The scope checked the paths by name; the core opens them beneath the
            # connection's own roots, so a link swapped since cannot lead beyond them.
            # An attached MCP server's tools take a session: the notes name it.
            session = params.get("session") if isinstance(params, dict) else None
            with self.core.serving(scope.workspace), cut_notes.in_session(session):
                return calls.call(self.core, name, params, scope.principal)
        # Notices of files beyond the connection's roots stay pending (the session's own
        # calls through a wider door, were there one): not taken here and thrown away.
        typed = calls.scoped_params(scope.principal, calls.params_for(name, params))
        self.core.enter(typed.session)
        dropped = self.core.sessions.evicted(typed.session)  # told so, as calls.run does
        found = unstructure(self.core.changes_for(typed, within=scope.reaches))
        found = session_dropped.told(name, found) if dropped else found
        return calls.shown(scope.principal, typed.session, name, found)

    def _hello(
        self, params: Any, session: str, scope: list[Scope], principal: str
    ) -> dict[str, Any]:
        if scope:
            raise ReadkeeperError("bad_params", "hello was already sent on this connection.")
        asked = params.get("roots") if isinstance(params, dict) else None
        scope.append(Scope.declared(asked, self.core.workspace, self.core.outputs.existing))
        viewer = isinstance(params, dict) and params.get("viewer") is True
        scope[0].owner = scope[0].principal = sessions.VIEWER if viewer else principal
        roots = scope[0].roots
        return {"pid": os.getpid(), "roots": roots, "version": __version__, "session": session}


def _principal(owner: str, within: Any) -> str:
    """Whose sessions a call's are: the connection's, or one of the principals the
    process behind it tells apart (`readkeeper mcp --http`'s clients, each its own),
    never beyond the connection's."""
    if within is None or owner == sessions.VIEWER:
        return owner
    if not isinstance(within, str) or not 0 < len(within) <= 128 or "\x00" in within:
        raise ReadkeeperError(
            "bad_params",
            "A frame's principal is a name of 1 to 128 characters without NUL.",
            field="principal",
        )
    return f"{owner}/{within}"


__all__ = ["Listener", "peer_credentials"]
