"""The paths a front end is handed for roots and documents: a `file:` URI's real path,
a real path found again when a link on its way is swapped as it is looked at, and why a
folder may not be a workspace root."""

from __future__ import annotations

import os
from urllib.parse import unquote_to_bytes, urlsplit

from .fileio import moved
from .reach import realpath, within

_REALPATH_TRIES = 3


def real_path(path: str) -> str:
    """`realpath` (EINVAL when a link on the way is swapped as it looks): again, then `stale`."""
    for _ in range(_REALPATH_TRIES):
        try:
            return realpath(path)
        except OSError:
            continue
    raise moved(path)


def uri_path(uri: str, *, real: bool = True) -> str | None:
    """The real path a `file:` URI names, the key the core uses for files: parsed and
    percent-decoded (to bytes, then the filesystem encoding, so any name round-trips),
    with the `localhost` authority accepted and symlinks resolved (not `real`: the path
    as named, for a root a path may name by that spelling). None for other schemes
    (untitled:, a remote host)."""
    try:
        parts = urlsplit(uri)
    except ValueError:
        return None
    if parts.scheme.lower() != "file" or parts.netloc.lower() not in ("", "localhost"):
        return None
    path = os.fsdecode(unquote_to_bytes(parts.path))
    if not path.startswith("/") or "\x00" in path:
        return None
    return realpath(path) if real else os.path.normpath(path)


def refused_root(path: str, may_be_home: bool) -> str | None:
    """Why `path` (by its real path) may not be a workspace root, or None: not what is not a
    folder (a file; a folder not made yet may come), the filesystem root, a folder holding
    the home folder, nor home unless a person chose it (opened it, or named it in `--root`)."""
    path = realpath(path)
    if os.path.lexists(path) and not os.path.isdir(path):
        return "it is not a folder"
    home = realpath(os.path.expanduser("~"))
    if os.path.dirname(path) == path:
        return "it is the filesystem root"
    if path == home:
        return None if may_be_home else "it is your home folder"
    if within(home, path):
        return "it contains your home folder"
    return None
