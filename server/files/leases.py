"""Linux read leases: the guard against in-place writers while a file is replaced.

The kernel grants a read lease (`fcntl(F_SETLEASE, F_RDLCK)`) only when no process has
the file open for writing, and makes any process that opens it for writing wait until
the lease is released. atomic.py holds the file it replaces under one, and asks
(`writer_waiting`) whether a writer is queued behind it just before and after the swap.
Elsewhere (other systems, filesystems that refuse every lease, files of another user)
nothing is leased, and the caller is told so.
"""

from __future__ import annotations

import errno
import os
import secrets
import signal
import sys
import threading
import time
from contextlib import suppress

from .beneath import open_in
from .pending import JOURNAL, TEMP_SUFFIX

if sys.platform == "linux":
    import fcntl

# Lease breaks are signalled to the holder, by default with SIGIO, whose default action
# kills the process. SIGWINCH's default action is to ignore it, and we release leases
# within milliseconds anyway, so a break costs nothing.
_LEASE_SIGNAL = signal.SIGWINCH if hasattr(signal, "SIGWINCH") else 0
# How long to wait for another program to finish writing before giving up (~0.25 s).
_BUSY_BACKOFF_S = (0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128)


class Busy(Exception):
    """Another program has the file open for writing (a save in progress)."""


# Per device: whether leases work there. Some filesystems (overlayfs on older kernels,
# network filesystems) refuse every lease as if the file were busy; a probe tells.
_lease_works: dict[int, bool] = {}
_lease_probe_lock = threading.Lock()


def lease(fd: int, folder: int, device: int, path: str) -> bool:
    """Take a read lease on `fd`, waiting out a writer for a moment (then `Busy`);
    False where leases do not work."""
    if sys.platform != "linux" or _lease_works.get(device) is False:
        return False
    for delay in (0.0, *_BUSY_BACKOFF_S):
        if delay:
            time.sleep(delay)
        outcome = _try_lease(fd)
        if outcome == "held":
            return True
        if outcome == "unavailable":
            return False
        with _lease_probe_lock:
            if device not in _lease_works:
                _lease_works[device] = _probe_leases(folder, os.path.dirname(path))
        if not _lease_works[device]:
            return False
    raise Busy(path)


def _try_lease(fd: int) -> str:
    if sys.platform != "linux":
        return "unavailable"
    try:
        fcntl.fcntl(fd, fcntl.F_SETSIG, _LEASE_SIGNAL)  # before the lease, always
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
    except OSError as exc:
        # EAGAIN: open for writing somewhere. EACCES: not our file. EINVAL: no leases.
        return "busy" if exc.errno == errno.EAGAIN else "unavailable"
    return "held"


def writer_waiting(fd: int, leased: bool) -> bool:
    """Whether a process is blocked opening the leased file `fd` for writing (it resolved
    the name to our inode, and will write there as soon as the lease is released)."""
    if sys.platform != "linux" or not leased:
        return False
    try:
        return fcntl.fcntl(fd, fcntl.F_GETLEASE) != fcntl.F_RDLCK
    except OSError:
        return True  # cannot tell: assume the worst, the caller looks again


def unlease(fd: int) -> None:
    """Release the lease on `fd` (closing it would too)."""
    if sys.platform != "linux":
        return
    with suppress(OSError):  # closing the descriptor drops it anyway
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)


def _probe_leases(folder: int, folder_path: str) -> bool:
    """Whether a file nobody writes can be leased in `folder` (at `folder_path`)."""
    probe = f".rk-lease-probe.{secrets.token_hex(4)}{TEMP_SUFFIX}"
    entry = JOURNAL.add(folder_path, probe)
    try:
        os.close(open_in(folder, probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError:
        JOURNAL.done(entry)
        return False
    try:
        fd = open_in(folder, probe, os.O_RDONLY)
        try:
            works = _try_lease(fd) == "held"
            if works:
                unlease(fd)
            return works
        finally:
            os.close(fd)
    finally:
        with suppress(OSError):
            os.unlink(probe, dir_fd=folder)
        JOURNAL.done(entry)
