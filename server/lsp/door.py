"""Who `serve --tcp` lets in: one client, of the user who started the server, that
speaks LSP from its first byte.

Anything on the machine can connect to a loopback port: another local user's process,
or a web page in the user's own browser (a no-cors `fetch` POST is written straight to
the socket, LSP frames in its body). So each connection is checked before a byte of it
reaches the server: its peer must run as our uid (`peers`, from the kernel's socket
table), and its first bytes must be an LSP header (`Content-Length:` or
`Content-Type:`). An HTTP request line or any other junk closes the connection instead
of being skipped (the stdio stream still resynchronises past junk: there the peer is
the editor that started us). A refused connection is closed and logged in one line; it
never ends the server, so a refusal cannot be used to stop the user's server.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from .. import peers

log = logging.getLogger("readkeeper.lsp.door")

_HEADER_NAMES = (b"content-length:", b"content-type:")
_LONGEST = max(len(name) for name in _HEADER_NAMES)


def starts_with_a_header(head: bytes) -> bool | None:
    """Whether a stream starting with `head` starts with an LSP header (None: too few
    bytes yet to tell)."""
    start = head[:_LONGEST].lower()
    if any(start.startswith(name) for name in _HEADER_NAMES):
        return True
    if any(name.startswith(start) for name in _HEADER_NAMES):
        return None
    return False


class Door:
    """The one client a TCP server serves: the first connection that passes."""

    def __init__(self, serve: Callable[[], asyncio.Protocol]) -> None:
        self._serve = serve  # makes the protocol that serves the client
        self.taken = False

    def keeper(self) -> Keeper:
        """A protocol for a new connection (for `loop.create_server`)."""
        return Keeper(self)

    def admit(self) -> asyncio.Protocol:
        self.taken = True
        return self._serve()


class Keeper(asyncio.Protocol):
    """One connection: checked, then handed to the server's protocol or closed."""

    def __init__(self, door: Door) -> None:
        self._door = door
        self._transport: asyncio.Transport | None = None
        self._inner: asyncio.Protocol | None = None
        self._head = b""
        self._peer = "?"

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Refuse a peer of another user, or any peer once a client is served."""
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        theirs = transport.get_extra_info("peername")
        if theirs:
            self._peer = f"{theirs[0]}:{theirs[1]}"
        why = peers.refusal(transport.get_extra_info("sockname"), theirs)
        if why is None and self._door.taken:
            why = "readkeeper serves one client per TCP server, and has one"
        if why is not None:
            self._refuse(why)

    def data_received(self, data: bytes) -> None:
        """Before the client is admitted, its first bytes decide."""
        if self._inner is not None:
            self._inner.data_received(data)
            return
        if self._transport is None or self._transport.is_closing():
            return
        self._head += data
        verdict = starts_with_a_header(self._head)
        if verdict is None:
            return
        if not verdict:
            self._refuse(
                f"its first bytes {self._head[:24]!r} are not an LSP header (an LSP client "
                "starts with Content-Length:; an HTTP request, e.g. from a web page, does not)"
            )
            return
        if self._door.taken:
            self._refuse("readkeeper serves one client per TCP server, and has one")
            return
        self._inner = self._door.admit()
        self._inner.connection_made(self._transport)
        head, self._head = self._head, b""
        self._inner.data_received(head)

    def eof_received(self) -> bool | None:
        """The peer closed its end: the client's connection decides; else close."""
        return self._inner.eof_received() if self._inner is not None else False

    def connection_lost(self, exc: Exception | None) -> None:
        """Gone: only the client's connection ending ends the server."""
        if self._inner is not None:
            self._inner.connection_lost(exc)

    def pause_writing(self) -> None:
        """Forwarded to the client's connection (its backpressure)."""
        if self._inner is not None:
            self._inner.pause_writing()

    def resume_writing(self) -> None:
        """Forwarded to the client's connection."""
        if self._inner is not None:
            self._inner.resume_writing()

    def _refuse(self, why: str) -> None:
        log.warning("Refused a TCP connection from %s: %s", self._peer, why)
        assert self._transport is not None
        self._transport.close()
