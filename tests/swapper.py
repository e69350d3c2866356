"""A process that swaps two names as fast as the kernel can, for the sandbox's race tests
(sandbox_helpers.py) and its benchmark (bench/bench_sandbox.py).

It is a separate process (not a thread), so the GIL never takes turns with the server's
requests: the names really change between any two system calls.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

SWAPPER_READY_S = 15.0

# Exchanges two names atomically (renameat2 RENAME_EXCHANGE) in a tight loop until
# killed; dies with its parent (PR_SET_PDEATHSIG), so no run leaves one behind.
_SWAPPER = r"""
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
rename = libc.renameat2
rename.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
a, b = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
AT_FDCWD, RENAME_EXCHANGE = -100, 2
for _ in range(2):
    if rename(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
        sys.exit("renameat2: " + os.strerror(ctypes.get_errno()))
os.write(1, b"ready\n")
while True:
    rename(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
"""


def exchange(a: Path, b: Path) -> None:
    """Trade the names `a` and `b` once, as the swapper does (after it stopped)."""
    aside = a.with_name(a.name + ".aside")
    os.rename(a, aside)
    os.rename(b, a)
    os.rename(aside, b)


@contextmanager
def swapping(a: Path, b: Path) -> Iterator[subprocess.Popen[bytes]]:
    """While the block runs, `a` and `b` trade places continuously (a file with a
    symlink, a folder with a symlink). The swapper is killed on the way out, whatever
    happens; it must still be running then, or the block did not race anything."""
    process = subprocess.Popen(
        [sys.executable, "-c", _SWAPPER, str(a), str(b)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + SWAPPER_READY_S
        while True:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"the swapper did not start within {SWAPPER_READY_S:g} s"
            ready, _, _ = select.select([process.stdout], [], [], remaining)
            if ready:
                line = os.read(process.stdout.fileno(), 64)
                if line.startswith(b"ready"):
                    break
                _, err = process.communicate(timeout=SWAPPER_READY_S)
                raise AssertionError(f"the swapper failed: {err.decode(errors='replace')}")
        yield process
        assert process.poll() is None, "the swapper stopped before the tries ended"
    finally:
        process.kill()
        process.wait()


def races(
    a: Path,
    b: Path,
    look: Callable[[], str],
    leaked: str,
    seen: str,
    tries: int,
    seconds: float,
    enough: int,
) -> tuple[int, int]:
    """A race test's loop: while `a` and `b` trade places (`swapping`), up to `tries`
    looks within `seconds`, until `enough` of them leaked. What `look` shows counts as
    a leak when it holds `leaked`, as seen when it holds `seen`: (leaks, seen)."""
    leaks = found = 0
    ends = time.monotonic() + seconds
    with swapping(a, b):
        for _ in range(tries):
            if time.monotonic() > ends or leaks >= enough:
                break
            shown = look()
            leaks += leaked in shown
            found += seen in shown
    return leaks, found
