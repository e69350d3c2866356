"""Which local user is at the other end of a loopback TCP connection, so that a network
front end (`serve --tcp`, `mcp --http`) serves only the user who started it.

A Unix socket tells its peer's uid (SO_PEERCRED); TCP does not, even on loopback. On
Linux the kernel knows each TCP socket's owner: sock_diag (netlink) looks a socket up
by its address pair, and /proc/net/tcp and /proc/net/tcp6 list them all (the fallback:
milliseconds instead of microseconds on a busy machine). The peer's socket is the one
whose local address is the peer's and whose remote address is ours (loopback
connections never leave the network namespace, so it is always there). Only an
ESTABLISHED socket counts: once a client closes its socket the kernel may keep its
address pair as a TIME_WAIT or orphaned FIN_WAIT entry owned by uid 0, which would pass
for root's own client. Anything that cannot be decided is a refusal (fail closed).
Elsewhere (macOS, BSD) there is neither, so the network front ends refuse to start
(`unsupported`).
"""

from __future__ import annotations

import ipaddress
import os
import socket
import struct
import sys
from errno import ENOENT

_TABLES = {4: "/proc/net/tcp", 6: "/proc/net/tcp6"}
_ESTABLISHED = b"01"
_IP = ipaddress.IPv4Address | ipaddress.IPv6Address
_Address = tuple[_IP, int]
_ESTABLISHED_STATE = 1

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
    such socket exists)."""
    try:
        return _diag_uid(ours, theirs)
    except OSError:  # no sock_diag (a kernel without it, a sandbox): the table
        return table_uid(ours, theirs)


def table_uid(ours: _Address, theirs: _Address) -> int | None:
    """`peer_uid` from /proc/net/tcp and /proc/net/tcp6."""
    tables = [4, 6] if theirs[0].version == 4 else [6]  # an IPv4 peer may use either
    # The table is read in chunks, and sockets opened or closed meanwhile may move an
    # entry out of the chunk being read: a miss is looked up once more.
    for _attempt in range(2):
        for version in tables:
            uid = _find(_TABLES[version], _entry_key(version, theirs, ours))
            if uid is not None:
                return uid
    return None


# sock_diag (netlink): the kernel looks the socket up by its address pair, in
# microseconds, where reading /proc/net/tcp takes milliseconds on a busy machine.
_NETLINK_SOCK_DIAG = 4
_SOCK_DIAG_BY_FAMILY = 20
_NLM_F_REQUEST = 1
_NLMSG_ERROR = 2
_NO_COOKIE = 0xFFFFFFFF
_HEADER = struct.Struct("=IHHII")  # nlmsghdr: length, type, flags, seq, pid
_ERRNO = struct.Struct("=i")
_STATE = 17  # inet_diag_msg: family, state, ...
_UID = struct.Struct("=I")
_UID_AT = 16 + 4 + 48 + 12  # after the header, the id and expires, rqueue, wqueue


def _diag_uid(ours: _Address, theirs: _Address) -> int | None:
    """`peer_uid` through sock_diag; OSError when the kernel offers none."""
    families = [socket.AF_INET, socket.AF_INET6] if theirs[0].version == 4 else [socket.AF_INET6]
    for family in families:
        version = 4 if family == socket.AF_INET else 6
        local, remote = _in(version, theirs[0]), _in(version, ours[0])
        request = struct.pack("=BBBBI", family, socket.IPPROTO_TCP, 0, 0, 0xFFFFFFFF)
        request += struct.pack("!HH", theirs[1], ours[1])
        request += local.packed.ljust(16, b"\0") + remote.packed.ljust(16, b"\0")
        request += struct.pack("=III", 0, _NO_COOKIE, _NO_COOKIE)
        header = _HEADER.pack(
            _HEADER.size + len(request), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST, 1, 0
        )
        with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _NETLINK_SOCK_DIAG) as link:
            link.settimeout(5)
            link.send(header + request)
            answer = link.recv(8192)
        if _HEADER.unpack_from(answer)[1] == _NLMSG_ERROR:
            errno = -_ERRNO.unpack_from(answer, _HEADER.size)[0]
            if errno != ENOENT:
                raise OSError(errno, os.strerror(errno))
            continue  # no such socket in this family
        if answer[_STATE] == _ESTABLISHED_STATE:
            return int(_UID.unpack_from(answer, _UID_AT)[0])
        return None  # closing, or a TIME_WAIT entry (listed as uid 0)
    return None


def _in(version: int, ip: _IP) -> _IP:
    """`ip` as a socket of IP `version` names it: IPv4 through IPv6 is mapped."""
    if version == 6 and ip.version == 4:
        return ipaddress.IPv6Address(b"\0" * 10 + b"\xff\xff" + ip.packed)
    return ip


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
    raw = _in(version, ip).packed
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
