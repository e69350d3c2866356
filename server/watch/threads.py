"""What the watcher's threads share with its inotify observer, kept apart so that
neither module imports the other: OS-level thread names and the look into a folder."""

from __future__ import annotations

import ctypes
import os
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


def is_folder(entry: os.DirEntry[bytes]) -> bool:
    """Whether a scanned entry is a folder itself (a link to one is not); False when it
    vanished before it could be looked at."""
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def folders_in(folder: bytes, files: list[bytes] | None = None) -> list[bytes]:
    """The folders in `folder` (`is_folder`); with `files`, its other entries are added
    to that list. Raises OSError when `folder` cannot be listed."""
    found = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if is_folder(entry):
                found.append(entry.path)
            elif files is not None:
                files.append(entry.path)
    return found
