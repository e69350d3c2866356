"""Where the editor's server can be found: a private folder, a socket, a discovery file.

The folder is `$XDG_RUNTIME_DIR/readkeeper`, else `<temp dir>/readkeeper-<uid>`, made
with mode 0700; one that exists but is not a real folder owned by this user, or is open
to the group or others, is refused (another user could plant a socket there, or read
our discovery files). Each workspace root served has a discovery file there, named by
a hash of the root's real path, holding the socket's path and the server's pid; a file
or socket whose pid is gone is stale and is removed by whoever finds it, and every
server's start sweeps the folder of them (`sweep`), so a folder shared by many editor
sessions does not fill with the entries of dead ones.

The folder in the temporary directory is the one another local user could make first
(it is a predictable name in a folder everyone may write): it is then refused, loudly
(the editor shows it, and `readkeeper mcp` tells the agent in its tool results that
it does not see the editor's unsaved buffers), never used and never silently replaced.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import stat
from dataclasses import dataclass
from typing import Any

from ..errors import ReadkeeperError
from ..files.fileio import read_small
from ..files.reach import realpath


def unsupported() -> str | None:
    """Why attach mode cannot run on this system, or None: it needs Unix sockets and
    Linux's SO_PEERCRED to check who connects (Windows named pipes are not done)."""
    if not hasattr(socket, "AF_UNIX") or not hasattr(socket, "SO_PEERCRED"):
        return "attach mode needs Unix sockets with SO_PEERCRED (Linux)"
    return None


def runtime_dir(create: bool = True) -> str:
    """The private folder for sockets and discovery files (made when `create`), or a
    `ReadkeeperError` saying why it may not be used."""
    why = unsupported()
    if why is not None:
        raise ReadkeeperError("unsupported", why + ".")
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base and os.path.isabs(base):
        folder = os.path.join(base, "readkeeper")
    else:
        import tempfile  # here: it and what it imports cost a few ms of every start

        folder = os.path.join(tempfile.gettempdir(), f"readkeeper-{os.geteuid()}")
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, 0o700)  # atomic: made by us, or refused below if not ours
    check_private(folder, is_dir=True)
    return folder


def sweep(folder: str) -> int:
    """Remove the discovery files, sockets and half-written files of dead servers from
    `folder` (the private one); how many entries went."""
    removed = 0
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    for name in names:
        path = os.path.join(folder, name)
        if name.endswith(".json"):
            if _live(path, folder) is None and not os.path.lexists(path):
                removed += 1
            continue
        pid = _pid_in(name)
        if pid is not None and not pid_alive(pid):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
                removed += 1
    return removed


def _pid_in(name: str) -> int | None:
    """The pid a socket (`<pid>.sock`) or a half-written discovery file
    (`<key>.json.<pid>.tmp`) is named after, or None."""
    if name.endswith(".sock"):
        digits = name[: -len(".sock")]
    elif name.endswith(".tmp"):
        digits = name[: -len(".tmp")].rpartition(".")[2]
    else:
        return None
    return int(digits) if digits.isdigit() and 0 < int(digits) < 1 << 31 else None


def check_private(path: str, is_dir: bool) -> None:
    """Refuse `path` unless it is (not a symlink to) a folder or socket owned by this
    user that no one else may open."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise ReadkeeperError("not_found", f"{path} does not exist.", file_path=path) from None
    what = "folder" if is_dir else "socket"
    right_type = stat.S_ISDIR(info.st_mode) if is_dir else stat.S_ISSOCK(info.st_mode)
    if not right_type:
        raise ReadkeeperError(
            "unsupported",
            f"{path} is not a {what} (a symlink or another kind of file): readkeeper will "
            "not use it for the editor's socket. Remove it, and start the editor again.",
            file_path=path,
        )
    if info.st_uid != os.geteuid():
        raise ReadkeeperError(
            "unsupported",
            f"The {what} {path} belongs to uid {info.st_uid}, not to you (uid "
            f"{os.geteuid()}): readkeeper will not use it. Remove it, or set "
            "XDG_RUNTIME_DIR to a folder of your own.",
            file_path=path,
        )
    if info.st_mode & 0o077:
        raise ReadkeeperError(
            "unsupported",
            f"The {what} {path} has mode {stat.S_IMODE(info.st_mode):o}, open to other "
            f"users: readkeeper will not use it. Run `chmod {'700' if is_dir else '600'} "
            f"{path}`, or remove it.",
            file_path=path,
        )


def root_key(root: str) -> str:
    """The discovery name of a workspace root: a hash of its real path."""
    return _key(realpath(root))


def _key(real: str) -> str:
    return hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:24]


def discovery_path(folder: str, root: str) -> str:
    """The discovery file of `root` in `folder`."""
    return os.path.join(folder, f"{root_key(root)}.json")


@dataclass(frozen=True)
class Found:
    """A live editor server for a root: its socket and pid."""

    socket: str
    pid: int
    root: str


def pid_alive(pid: int) -> bool:
    """Whether process `pid` exists (signal 0 checks without sending anything)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def publish(folder: str, roots: list[str], socket_path: str) -> list[str]:
    """Write a discovery file for each root (atomically, mode 0600); their paths."""
    written = []
    for root in roots:
        path = discovery_path(folder, root)
        payload = {"socket": socket_path, "pid": os.getpid(), "root": realpath(root)}
        temporary = f"{path}.{os.getpid()}.tmp"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as out:
            json.dump(payload, out)
        os.replace(temporary, path)
        written.append(path)
    return written


def unpublish(paths: list[str]) -> None:
    """Remove the discovery files that still name this process (a newer server for
    the same root may have replaced one)."""
    for path in paths:
        entry = _load(path)
        if entry is not None and entry.get("pid") == os.getpid():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)


def find(root: str) -> Found | None:
    """The live editor server of `root` or of a folder holding it, if any; stale
    discovery files (their pid is gone) are removed on the way."""
    folder = runtime_dir(create=False)
    current = realpath(root)
    while True:
        # Each folder above a real path is its own real path: its key is hashed as it is
        # (its realpath looked at every name again: a root 1,000 deep took 11 s, round 47).
        found = _live(os.path.join(folder, f"{_key(current)}.json"), folder)
        if found is not None:
            return found
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _live(path: str, folder: str) -> Found | None:
    entry = _load(path)
    if entry is None:
        return None
    pid, socket_path = entry.get("pid"), entry.get("socket")
    if not isinstance(pid, int) or not isinstance(socket_path, str):
        return None
    if not pid_alive(pid):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        if os.path.dirname(socket_path) == folder:  # never a path elsewhere it names
            with contextlib.suppress(FileNotFoundError):
                os.unlink(socket_path)
        return None
    return Found(socket_path, pid, str(entry.get("root", "")))


def _load(path: str) -> dict[str, Any] | None:
    # A regular file only: a FIFO planted in its place would block the open for good.
    try:
        entry = json.loads(read_small(path, 1 << 16))
    except (OSError, ValueError):
        return None
    return entry if isinstance(entry, dict) else None


__all__ = ["Found", "check_private", "find", "publish", "runtime_dir", "sweep", "unpublish"]
