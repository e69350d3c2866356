"""`readkeeper/stat`: what a file or folder is (kind, size, times, permissions) without
its content. The path is checked as a read checks it (inside a root or an allowed
folder, symlinks resolved first, did-you-mean when missing) and looked at beneath its
root's open descriptor; a FIFO or device is described, never opened."""

from __future__ import annotations

import stat
from datetime import UTC, datetime
from typing import Any

from ..files.beneath import Moved
from ..files.fileio import moved
from ..protocol.files import StatParams
from ..read.services import ReadServices


def file_info(services: ReadServices, params: StatParams) -> dict[str, Any]:
    """Serve `readkeeper/stat`."""
    where = services.workspace.resolve(params.path, params.session)
    try:
        found = where.lstat()
    except Moved:
        raise moved(where.path) from None
    if found is None:
        raise services.workspace.not_found(where.path)
    mode = found.st_mode
    if stat.S_ISLNK(mode):  # the real path had none here: one planted since
        raise moved(where.path)
    kind = "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"
    info: dict[str, Any] = {
        "path": where.path,
        "kind": kind,
        "size": found.st_size,
        "modified": _when(found.st_mtime_ns),
        "accessed": _when(found.st_atime_ns),
        "changed": _when(found.st_ctime_ns),
        "permissions": f"{stat.S_IMODE(mode):03o}",
    }
    born = getattr(found, "st_birthtime_ns", None)
    if born:
        info["created"] = _when(born)
    if stat.S_ISREG(mode):
        record = services.read_states.get(params.session, where.path)
        info["read_by_session"] = record is not None
    return info


def _when(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, UTC).isoformat(timespec="seconds")


__all__ = ["file_info"]
