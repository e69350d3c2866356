"""`peers`: the uid at the other end of a real loopback TCP connection, told from the
kernel's socket table; anything it cannot tell (a peer gone, an address not listed) is
a refusal, never a pass; and which hosts count as loopback.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
from collections.abc import Iterator

import pytest

from helpers import NOBODY, needs_root, run_as_nobody
from readkeeper import peers


@pytest.fixture(params=[socket.AF_INET, socket.AF_INET6], ids=["ipv4", "ipv6"])
def listening(request: pytest.FixtureRequest) -> Iterator[socket.socket]:
    family = request.param
    address = "127.0.0.1" if family == socket.AF_INET else "::1"
    sock = socket.socket(family)
    try:
        sock.bind((address, 0))
    except OSError:
        sock.close()
        pytest.skip("no IPv6 loopback here")
    sock.listen(4)
    with sock:
        yield sock


def test_our_own_connection_is_ours(listening: socket.socket) -> None:
    with socket.create_connection(listening.getsockname()[:2]) as client:
        accepted, _ = listening.accept()
        with accepted:
            ours, theirs = accepted.getsockname(), accepted.getpeername()
            assert peers.refusal(ours, theirs) is None
            assert client.getsockname()[:2] == theirs[:2]


def test_an_ipv4_client_of_a_dual_stack_server_is_found() -> None:
    server = socket.socket(socket.AF_INET6)
    try:
        server.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        server.bind(("::", 0))
    except OSError:
        server.close()
        pytest.skip("no dual-stack IPv6 here")
    server.listen(1)
    with server, socket.create_connection(("127.0.0.1", server.getsockname()[1])):
        accepted, peer = server.accept()
        with accepted:
            assert peer[0] == "::ffff:127.0.0.1"  # the IPv4 peer, seen through IPv6
            assert peers.refusal(accepted.getsockname(), peer) is None


def test_the_table_tells_the_same_uid_as_sock_diag(listening: socket.socket) -> None:
    # The fallback where netlink's sock_diag is missing: /proc/net/tcp{,6}.
    client = socket.create_connection(listening.getsockname()[:2])
    accepted, peer = listening.accept()
    with accepted:
        ours = peers._address(accepted.getsockname())
        theirs = peers._address(peer)
        assert peers.table_uid(ours, theirs) == peers.peer_uid(ours, theirs) == os.geteuid()
        client.close()
        assert peers.table_uid(ours, theirs) is None  # closing: never taken for root
        assert peers.peer_uid(ours, theirs) is None


def test_an_ipv6_client_of_an_ipv4_server_is_found() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        client = socket.socket(socket.AF_INET6)
        try:
            client.connect(("::ffff:127.0.0.1", server.getsockname()[1]))
        except OSError:
            client.close()
            pytest.skip("no IPv6 sockets here")
        accepted, peer = server.accept()
        with client, accepted:
            assert peers.refusal(accepted.getsockname(), peer) is None
            ours, theirs = peers._address(accepted.getsockname()), peers._address(peer)
            assert peers.table_uid(ours, theirs) == os.geteuid()


def test_a_peer_that_closed_is_refused_not_taken_for_root(listening: socket.socket) -> None:
    # A closed client's address pair may linger as a TIME_WAIT or orphaned FIN_WAIT
    # entry listed with uid 0: that must not pass for root's own client.
    client = socket.create_connection(listening.getsockname()[:2])
    accepted, _ = listening.accept()
    with accepted:
        client.close()
        why = peers.refusal(accepted.getsockname(), accepted.getpeername())
        assert why is not None
        assert "cannot be told" in why


def test_an_address_with_no_socket_is_refused(listening: socket.socket) -> None:
    why = peers.refusal(listening.getsockname(), ("127.0.0.1", 9))
    assert why is not None
    assert "cannot be told" in why
    assert peers.refusal(listening.getsockname(), None) is not None


@needs_root
def test_a_connection_of_another_uid_names_that_uid(listening: socket.socket) -> None:
    address = listening.getsockname()[:2]
    family = listening.family
    verdict: list[str | None] = []
    table: list[int | None] = []

    def as_nobody() -> bytes:
        with socket.socket(family) as client:
            client.settimeout(30)
            client.connect(address)
            return client.recv(100)  # stays connected until the parent has looked

    def check() -> None:
        accepted, _ = listening.accept()
        with accepted:
            verdict.append(peers.refusal(accepted.getsockname(), accepted.getpeername()))
            ours, theirs = accepted.getsockname(), accepted.getpeername()
            table.append(peers.table_uid(peers._address(ours), peers._address(theirs)))
            accepted.sendall(b"done")

    checker = threading.Thread(target=check)
    checker.start()
    assert run_as_nobody(as_nobody) == b"done"
    checker.join()
    assert verdict[0] is not None
    assert f"uid {NOBODY}, not as uid {os.geteuid()}" in verdict[0]
    assert table == [NOBODY]  # the fallback tells the same


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"])
def test_loopback_hosts(host: str) -> None:
    assert peers.loopback_refusal(host) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "", "[::]", "192.0.2.7", "::ffff:192.0.2.7"])
def test_hosts_other_machines_reach_are_refused(host: str) -> None:
    assert peers.loopback_refusal(host) is not None


@pytest.mark.skipif(sys.platform != "linux", reason="the socket table is Linux's")
def test_linux_can_tell() -> None:
    assert peers.unsupported() is None
