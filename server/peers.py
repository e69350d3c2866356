"""Which local user is at the other end of a loopback TCP connection, so that a network
front end (`serve --tcp`, `mcp --http`) serves only the user who started it.

A Unix socket tells its peer's uid (SO_PEERCRED); TCP does not, even on loopback. On
Linux the kernel lists every TCP socket of the network namespace in /proc/net/tcp and
/proc/net/tcp6 with its owner's uid. The peer's socket is the one whose local address
is the peer's and whose remote address is ours (loopback connections never leave the
namespace, so it is always listed). Only an ESTABLISHED entry counts: once a client
closes its socket the kernel may keep its address pair as a TIME_WAIT or orphaned
FIN_WAIT entry that shows uid 0, which would pass for root's own client. Anything that
cannot be decided is a refusal (fail closed). Elsewhere (macOS, BSD) there is no such
table, so the network front ends refuse to start (`unsupported`).
"""

from __future__ import annotations

import ipaddress
import os
import socket
import sys

_TABLES = {4: "/proc/net/tcp", 6: "/proc/net/tcp6"}
_ESTABLISHED = b"01"
_Address = tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]

UNSUPPORTED = (
    "needs Linux: it tells which user each connection comes from through /proc/net/tcp, "
    "and this system has none"
)


def unsupported() -> str | None:
    """Why connections cannot be checked here (None: they can)."""
    if sys.platform != "linux" or not os.access(_TABLES[4], os.R_OK):
        return UNSUPPORTED
    return None


def refusal(ours: tuple[object, ...] | None, theirs: tuple[object, ...] | None) -> str | None:
    """Why the connection from `theirs` to `ours` (each (host, port, ...), as a socket
    names them) may not be served: None when its peer runs as this process's uid."""
    if not ours or not theirs:
        return "the connection has no address to tell its user by"
    try:
        uid = peer_uid(_address(ours), _address(theirs))
    except (OSError, ValueError) as exc:
        return f"the peer's user cannot be told ({exc})"
    if uid is None:
        return f"the peer's user cannot be told (no established socket {theirs[0]}:{theirs[1]})"
    if uid != os.geteuid():
        return f"the peer runs as uid {uid}, not as uid {os.geteuid()} who started readkeeper"
    return None


def peer_uid(ours: _Address, theirs: _Address) -> int | None:
    """The uid owning the established socket at `theirs` connected to `ours` (None: no
    such socket is listed)."""
    tables = [4, 6] if theirs[0].version == 4 else [6]  # an IPv4 peer may use either
    # The table is read in chunks, and sockets opened or closed meanwhile may move an
    # entry out of the chunk being read: a miss is looked up once more.
    for _attempt in range(2):
        for version in tables:
            uid = _find(_TABLES[version], _entry_key(version, theirs, ours))
            if uid is not None:
                return uid
    return None


def _find(table: str, key: bytes) -> int | None:
    """The uid of the established entry whose addresses are `key`. The key is searched
    for in the raw table rather than each line parsed: a busy machine lists thousands."""
    try:
        with open(table, "rb") as listing:
            text = listing.read()
    except FileNotFoundError:  # no IPv6 in this kernel
        return None
    at = text.find(key)
    while at >= 0:
        # local, remote, state, tx:rx queues, timer, retransmits, uid, ...
        fields = text[at : text.find(b"\n", at)].split()
        if len(fields) > 6 and fields[2] == _ESTABLISHED:
            return int(fields[6])
        at = text.find(key, at + 1)
    return None


def _entry_key(version: int, local: _Address, remote: _Address) -> bytes:
    """` LOCAL REMOTE ` as the table of IP `version` prints them: the address in 32-bit
    words of host byte order, the port in big-endian, upper-case hex."""
    return b" %s %s " % (_proc_address(version, *local), _proc_address(version, *remote))


def _proc_address(
    version: int, ip: ipaddress.IPv4Address | ipaddress.IPv6Address, port: int
) -> bytes:
    if version == 6 and ip.version == 4:  # an IPv6 socket's IPv4 peer: mapped
        ip = ipaddress.IPv6Address(b"\0" * 10 + b"\xff\xff" + ip.packed)
    raw = ip.packed
    if sys.byteorder == "little":
        raw = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return b"%s:%04X" % (raw.hex().upper().encode(), port)


def _address(named: tuple[object, ...]) -> _Address:
    host, port = str(named[0]), int(str(named[1]))
    return _plain(ipaddress.ip_address(host.split("%", 1)[0])), port


def _plain(
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """An IPv4 address seen through an IPv6 socket is the same address as IPv4."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def loopback_refusal(host: str) -> str | None:
    """Why a network front end may not listen on `host` (None: every address it names
    is loopback, so only this machine can connect)."""
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not bare:
        return "an empty host listens on every interface"
    try:
        found = socket.getaddrinfo(bare, None, proto=socket.IPPROTO_TCP)
    except OSError as exc:
        return f"{host!r} cannot be resolved ({exc})"
    ips = {_plain(ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])) for info in found}
    if any(ip.is_unspecified for ip in ips):
        return f"{host} listens on every interface, reachable from other machines"
    outside = sorted(str(ip) for ip in ips if not ip.is_loopback)
    if outside:
        return f"{host} is reachable from other machines ({', '.join(outside)})"
    return None
