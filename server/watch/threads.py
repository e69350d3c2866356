"""What the watcher's threads share with its inotify observer, kept apart so that
neither module imports the other: OS-level thread names."""

from __future__ import annotations

import ctypes
import sys
from typing import Any

_libc: Any = None


def name_os_thread(name: str) -> None:
    """Give the calling thread an OS-level name (Linux, at most 15 bytes), so that
    `ps -L`, `top -H` and /proc/<pid>/task/*/comm show which threads are the watcher's."""
    global _libc
    if not sys.platform.startswith("linux"):
        return
    try:
        if _libc is None:
            _libc = ctypes.CDLL(None, use_errno=True)
        _libc.prctl(15, name.encode()[:15], 0, 0, 0)  # PR_SET_NAME
    except (OSError, AttributeError):
        pass
