"""A deadline for each HTTP request to arrive, and a bound on the connections waiting.

uvicorn gives a connection as long as it likes to send a request's headers and body,
and the app sees a request only once its headers are in: a client that sends half a
request and stops held its connection (and, before this, one of the 32 places of the
requests in flight, http_limits.py) for ever. So a connection is *waiting* from the
moment it is accepted until its request has wholly arrived (http_limits.py reads the
body before the request is counted, and says so here), and again from the moment an
answer is done until the next request has arrived. A connection waiting longer than
`REQUEST_DEADLINE_S` is closed. The connections waiting are bounded, from one peer
and in all; one over either bound closes the one of that peer (or of all) that has
waited longest, so a newcomer is always heard and a flood of stalled connections
evicts only itself.

This wraps uvicorn's protocol through asyncio's Protocol interface alone (what
`uvicorn.Config(http=...)` accepts), so uvicorn's parser and its own timers are kept.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Any

# The time a whole request (its headers and its body) has to arrive.
REQUEST_DEADLINE_S = 10.0
# Connections waiting for a request, from one peer address and in all.
MAX_WAITING_PER_PEER = 64
MAX_WAITING = 256

Peer = tuple[str, int]


class Waiting:
    """The connections waiting for their request to arrive, oldest first."""

    def __init__(self) -> None:
        self._waiting: OrderedDict[Peer, _Deadlined] = OrderedDict()
        self._all: dict[Peer, _Deadlined] = {}

    def wait(self, peer: Peer, connection: _Deadlined) -> None:
        """`connection` waits (again) for a request, under a fresh deadline; the one
        that has waited longest goes when a bound is passed."""
        self._all[peer] = connection
        self._waiting.pop(peer, None)
        self._waiting[peer] = connection
        connection.arm()
        same = [key for key in self._waiting if key[0] == peer[0]]
        if len(same) > MAX_WAITING_PER_PEER:
            self._waiting[same[0]].expire()
        if len(self._waiting) > MAX_WAITING:
            self._waiting[next(iter(self._waiting))].expire()

    def arrived(self, peer: Any) -> None:
        """The request of the connection from `peer` (ASGI's `client`) is all in."""
        connection = self._waiting.pop(_key(peer), None) if peer else None
        if connection is not None:
            connection.disarm()

    def done(self, peer: Any) -> None:
        """The connection's answer is written: it waits for its next request."""
        connection = self._all.get(_key(peer)) if peer else None
        if connection is not None and not connection.closed:
            self.wait(_key(peer), connection)

    def gone(self, peer: Peer) -> None:
        self._waiting.pop(peer, None)
        self._all.pop(peer, None)

    def __len__(self) -> int:
        return len(self._waiting)


def _key(peer: Any) -> Peer:
    return (str(peer[0]), int(peer[1]))


class _Deadlined(asyncio.Protocol):
    """uvicorn's protocol for one connection, closed when it waits past its deadline."""

    def __init__(self, inner: asyncio.Protocol, waiting: Waiting) -> None:
        self.inner = inner
        self.waiting = waiting
        self.peer: Peer | None = None
        self.transport: asyncio.BaseTransport | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.inner.connection_made(transport)
        peer = transport.get_extra_info("peername")
        if isinstance(peer, tuple) and len(peer) >= 2:
            self.peer = _key(peer)
            self.waiting.wait(self.peer, self)

    def data_received(self, data: bytes) -> None:
        if not self.closed:
            self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.disarm()
        if self.peer is not None:
            self.waiting.gone(self.peer)
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def arm(self) -> None:
        self.disarm()
        loop = asyncio.get_running_loop()
        self.timer = loop.call_later(REQUEST_DEADLINE_S, self.expire)

    def disarm(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def expire(self) -> None:
        """Close the connection: its request did not arrive in time, or it waited
        longest when too many did."""
        self.disarm()
        if self.peer is not None:
            self.waiting.gone(self.peer)
        self.closed = True
        if self.transport is not None:
            self.transport.close()


def deadlined(protocol: type[asyncio.Protocol], waiting: Waiting) -> Any:
    """A protocol class for `uvicorn.Config(http=...)`: `protocol` under the deadline."""

    def make(*args: Any, **kwargs: Any) -> asyncio.Protocol:
        return _Deadlined(protocol(*args, **kwargs), waiting)

    return make


__all__ = ["REQUEST_DEADLINE_S", "Waiting", "deadlined"]
