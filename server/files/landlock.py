"""Linux Landlock: a process confines itself (and every program it then runs) to reading
beneath a few folders, so a program that opens files by name (ripgrep, libgit2) cannot be
led out of the workspace by a folder swapped for a symlink while it walks.

Only the standard library is imported: the file also runs as a script, the launcher of
ripgrep (`python -S -P landlock.py ROOT -- PROGRAM ARGS...`: restrict to reading beneath
ROOT, then exec PROGRAM), with no readkeeper import in the way.

Where the kernel has no Landlock (before 5.13, or disabled; macOS), `restrict` returns
False and nothing changes: the race those programs leave is then open (see `stats`).
"""

from __future__ import annotations

import ctypes
import functools
import os
import resource
import sys
from collections.abc import Sequence
from typing import Any

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same on every arch
_VERSION = 1  # landlock_create_ruleset flag: ask for the ABI version
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1, 2, 4, 8
_ABI1_ALL = (1 << 13) - 1  # execute .. make_sym: every right of the first ABI
_REFER, _TRUNCATE, _IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
# The rights a rule on a file (not a folder) may carry.
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | _TRUNCATE | _IOCTL_DEV
# What a program needs to start: its dynamic loader and libraries (system files only).
SYSTEM_LIBRARIES = ("/lib", "/lib64", "/usr/lib", "/usr/lib64", "/etc/ld.so.cache")
# The heap (and every private writable mapping) a confined program may take: ripgrep
# reads a whole ignore file into memory, and a repository's sparse 50 GB `.gitignore`
# (or a device node there) would otherwise grow it until the machine's memory ran out.
# Past it the program dies (an allocation failure aborts it), and its run says so.
DATA_LIMIT_BYTES = 1 << 30


def limit_memory() -> None:
    """Cap this process's data (RLIMIT_DATA: the heap and private writable mappings, not
    the files ripgrep maps to read) at DATA_LIMIT_BYTES, for it and the programs it
    starts."""
    hard = resource.getrlimit(resource.RLIMIT_DATA)[1]
    cap = DATA_LIMIT_BYTES if hard == resource.RLIM_INFINITY else min(hard, DATA_LIMIT_BYTES)
    resource.setrlimit(resource.RLIMIT_DATA, (cap, cap))


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


@functools.cache  # the warm launcher's children find it loaded: no dlopen per call
def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def abi() -> int:
    """The kernel's Landlock ABI version, 0 when it has none."""
    libc = _libc()
    if libc is None:
        return 0
    libc.syscall.restype = ctypes.c_long
    version = int(libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), _VERSION))
    return max(version, 0)


def _handled(version: int) -> int:
    rights = _ABI1_ALL
    if version >= 2:
        rights |= _REFER
    if version >= 3:
        rights |= _TRUNCATE
    if version >= 5:
        rights |= _IOCTL_DEV
    return rights


def restrict(read: Sequence[str | int], run: Sequence[str] = ()) -> bool:
    """Confine this process and its future children, for good: files and folders beneath
    each path of `read` (or folder open as a descriptor there: the very folder a caller
    checked, whatever its name leads to now) may be read, and files beneath `run` also
    executed; nothing else may be read, run, written, made or removed. A path that does
    not exist is skipped. True when Landlock applied; False (nothing changed) where it
    is missing."""
    version = abi()
    libc = _libc()
    if version < 1 or libc is None:
        return False
    handled = _handled(version)
    attr = ctypes.c_uint64(handled)
    ruleset = int(libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(8), 0))
    if ruleset < 0:
        return False
    try:
        rules = [(path, READ_FILE | READ_DIR) for path in read]
        rules += [(path, READ_FILE | READ_DIR | EXECUTE) for path in run]
        for path, rights in rules:
            try:
                fd = os.dup(path) if isinstance(path, int) else os.open(path, os.O_PATH)
            except OSError:
                continue
            try:
                if not os.path.isdir(f"/proc/self/fd/{fd}"):
                    rights &= _FILE_RIGHTS
                rule = _PathBeneath(rights & handled, fd)
                if libc.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0):
                    err = ctypes.get_errno()
                    raise OSError(err, f"landlock_add_rule {path}: {os.strerror(err)}")
            finally:
                os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0):
            return False
        if libc.syscall(_RESTRICT_SELF, ruleset, 0):
            err = ctypes.get_errno()
            raise OSError(err, f"landlock_restrict_self: {os.strerror(err)}")
    finally:
        os.close(ruleset)
    return True


def launch(argv: Sequence[str]) -> None:
    """`[--parent PID] ROOT... -- PROGRAM ARGS...`: tie this process to PID's life
    (lifeline.py: the kernel's SIGKILL when PID ends, kept across exec), restrict to
    reading beneath each ROOT, then become PROGRAM (a Landlock domain is inherited
    across exec). Exit 125 when Landlock was asked for and could not be applied: the
    caller knew the kernel has it."""
    argv = list(argv)
    if argv[:1] == ["--parent"]:
        _lifeline().hold(int(argv[1]))
        argv = argv[2:]
    split = argv.index("--")
    roots, command = argv[:split], argv[split + 1 :]
    limit_memory()
    if not restrict(roots, [command[0], *SYSTEM_LIBRARIES]):
        sys.stderr.write("readkeeper: Landlock could not be applied\n")
        os._exit(125)
    os.execv(command[0], command)


def _lifeline() -> Any:
    """lifeline.py beside this file, loaded by its path: run as a program, this file
    imports nothing of readkeeper's package (`-S -P -E`)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lifeline.py")
    spec = importlib.util.spec_from_file_location("_readkeeper_lifeline", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    launch(sys.argv[1:])
