"""The kind of each file of a git folder that libgit2 opens by path: a folder where git
keeps one, a regular file elsewhere. One of another kind (a FIFO, a socket, a device)
would hold libgit2 until git_timeout_ms on every call, and the timeout's next steps
(ask again, raise the setting) could never work: it is said at once instead, as the
repository's fault (`corrupt`), naming the file and what it is (attack round 24)."""

from __future__ import annotations

import stat

from readkeeper import quoting
from readkeeper.errors import ReadkeeperError

# The entries of gitstatus._ENTRIES that are folders; the others are files.
FOLDERS = frozenset({"refs", "objects", "objects/info", "objects/pack", "info"})

_KINDS = {
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFDIR: "a folder",
    stat.S_IFREG: "a regular file",
}


def check(name: str, mode: int) -> None:
    """Nothing when the git folder's entry `name` (not a symlink: gitstatus refuses
    those first) is of its kind; else a `corrupt` error saying what it is."""
    folder = name in FOLDERS
    if stat.S_ISDIR(mode) if folder else stat.S_ISREG(mode):
        return
    what = _KINDS.get(stat.S_IFMT(mode), "of an unknown kind")
    raise ReadkeeperError(
        "corrupt",
        f"git status could not read the repository: {quoting.name(name)} in its git folder "
        f"is {what}, not {'a folder' if folder else 'a regular file'}. The other attachments "
        "are not affected; ask the user to look at the repository.",
    )
