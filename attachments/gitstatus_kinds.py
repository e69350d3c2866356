"""How git status says what is wrong with a repository, as the repository's state.

The kind of each file of a git folder that libgit2 opens by path: a folder where git
keeps one, a regular file elsewhere. One of another kind (a FIFO, a socket, a device)
would hold libgit2 until git_timeout_ms on every call, and the timeout's next steps
(ask again, raise the setting) could never work: it is said at once instead, as the
repository's fault (`corrupt`), naming the file and what it is (attack round 24).

Every OSError met while following the repository's own pointers (a `gitdir:` file,
`commondir`, alternates, HEAD's ref) is the repository's state too, never readkeeper's
fault: `corrupt`, naming the pointer (its text one quoted string), or `stale` when the
repository changed while it was read (attack round 25).

libgit2 opens the work tree's `.gitignore` and `.gitattributes` files in every folder it
walks, a FIFO among them too, where it waits for a writer that never comes. A status
that ran out of time is followed by a bounded look for such a file (`stalled_on`, by
folder listings only, never an open of one); one found is said as `corrupt`, and
remembered, so that the next status of that root is refused at once while it is there.
"""

from __future__ import annotations

import math
import os
import re
import stat
import threading
import time
from collections.abc import Callable

from readkeeper import quoting
from readkeeper.errors import ReadkeeperError, library_words
from readkeeper.files.beneath import Moved, lstat_in, open_in

# The entries of gitstatus._ENTRIES that are folders; the others are files.
FOLDERS = frozenset({"refs", "objects", "objects/info", "objects/pack", "info"})

KINDS = {
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFDIR: "a folder",
    stat.S_IFREG: "a regular file",
}
# HEAD's `ref: refs/heads/main`: the loose ref libgit2 opens next, checked the same way.
_HEAD_REF = re.compile(rb"ref:\s*(refs/[^\0\s]+)\s*")
_LOOK = "The other attachments are not affected; ask the user to look at the repository."
# The work tree's files libgit2 opens in each folder it walks.
_RULE_NAMES = frozenset({".gitignore", ".gitattributes"})
# The look after a timeout: folders listed at most, and for how long (seconds).
_LOOK_FOLDERS = 20_000
_LOOK_SECONDS = 1.0
# Roots whose status waits on a rule file, and that file (relative to the root).
_STALLS: dict[str, str] = {}
_STALLS_MAX = 100
_lock = threading.Lock()


def not_run(most: int) -> ReadkeeperError:
    """A status that did not run to its end in this call for want of a free worker: the
    statuses of other roots held them (up to `most` at a time). Not remembered."""
    return ReadkeeperError(
        "too_large",
        f"git status did not run to its end in this call: the statuses of other roots held "
        f"its workers (up to {most} run at a time) until the call's time (the "
        "attachments_timeout_ms setting) ran out. Nothing is wrong with this repository "
        "that git status found; ask for the attachments again, and the next call tries it.",
    )


def head_ref(folder: int, read: Callable[[int, str], bytes]) -> list[str]:
    """The loose ref HEAD names (`refs/heads/main`), when it is a plain one."""
    entry = lstat_in(folder, "HEAD")
    if entry is None or not stat.S_ISREG(entry.st_mode):
        return []
    found = _HEAD_REF.fullmatch(read(folder, "HEAD"))
    parts = os.fsdecode(found.group(1)).split("/") if found else []
    for end in range(1, len(parts) + 1):  # its folders real ones (no symlink to look through)
        try:
            above = lstat_in(folder, "/".join(parts[:end]))
        except OSError:  # a name too long, a file where a folder would be: libgit2 says
            return []
        if end < len(parts) and (
            above is None or not stat.S_ISDIR(above.st_mode) or parts[end - 1] in ("", "..")
        ):
            return []
    return ["/".join(parts)] if parts and parts[-1] not in ("", "..") else []


def corrupt(said: str, next_step: str = _LOOK) -> ReadkeeperError:
    """The repository's state as git status cannot read it: `said`, and what to do."""
    said = f"git status could not read the repository: {said}. {next_step}"
    return ReadkeeperError("corrupt", said)


def stale() -> ReadkeeperError:
    return ReadkeeperError(
        "stale",
        "git status was not shown: the repository was moved or replaced while it was read. "
        "Ask for the attachments again.",
    )


def dot_git(mode: int) -> ReadkeeperError:
    """`corrupt`: the root's `.git` is neither a folder nor a file (git says "invalid
    gitfile format"): said, never a status that vanishes without a word."""
    what = KINDS.get(stat.S_IFMT(mode), "of an unknown kind")
    return corrupt(f".git at its root is {what}, not a folder nor a file naming one")


def not_a_pointer(text: str) -> ReadkeeperError:
    """`corrupt`: the root's `.git` file names no git folder (empty, or no `gitdir:`)."""
    if not text.strip():
        return corrupt("its .git file is empty (it should name a git folder: gitdir: PATH)")
    first = text.strip().splitlines()[0]
    return corrupt(
        f"its .git file does not name a git folder (its first line {library_words(first)} "
        'does not begin "gitdir:")'
    )


def pointer(what: str, text: str) -> str:
    """`what` ("its commondir names") and the pointer's own text, one quoted string."""
    return f"{what} {library_words(text.strip())}"


def unreadable(what: str, exc: OSError) -> ReadkeeperError:
    """An OSError met following `what` (a pointer, or a file of the repository): `stale`
    when a symlink stood where a folder was seen, else `corrupt` saying why."""
    if isinstance(exc, Moved):
        return stale()
    return corrupt(f"{what}, which cannot be opened ({exc.strerror or type(exc).__name__})")


def unreadable_file(exc: OSError) -> ReadkeeperError:
    """Any other OSError met reading the repository's files: `unreadable`, naming the
    file the system named (the repository's text, one quoted string)."""
    named = exc.filename if isinstance(exc.filename, str) else ""
    return unreadable(pointer("a file of it,", named) if named else "a file of it", exc)


def check(name: str, mode: int) -> None:
    """Nothing when the git folder's entry `name` (not a symlink: gitstatus refuses
    those first) is of its kind; else a `corrupt` error saying what it is."""
    folder = name in FOLDERS
    if stat.S_ISDIR(mode) if folder else stat.S_ISREG(mode):
        return
    what = KINDS.get(stat.S_IFMT(mode), "of an unknown kind")
    raise corrupt(
        f"{quoting.name(name)} in its git folder is {what}, not "
        f"{'a folder' if folder else 'a regular file'}"
    )


def _stall(relative: str, mode: int) -> ReadkeeperError:
    what = KINDS.get(stat.S_IFMT(mode), "of an unknown kind")
    return corrupt(
        f"{quoting.name(relative)} in its work tree is {what}, not a regular file, and git "
        "status waits on it for ever",
        "The other attachments are not affected; ask the user to remove or replace it.",
    )


def _waits(mode: int) -> bool:
    """Whether opening a file of this mode (its lstat's) to read it waits for ever or
    never ends: a FIFO or a device (a socket fails to open, a folder to read)."""
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode)


def known_stall(root: str, work_tree: int) -> None:
    """`corrupt` at once when a status of `root` ran out of time on a rule file that is
    still not a regular file (one lstat); forgotten once it is one, or gone."""
    with _lock:
        relative = _STALLS.get(root)
    if relative is None:
        return
    try:
        entry = lstat_in(work_tree, relative)
    except OSError:
        entry = None
    if entry is not None and _waits(entry.st_mode):
        raise _stall(relative, entry.st_mode)
    with _lock:
        _STALLS.pop(root, None)


def stalled_on(root: str, work_tree: int, until: float = math.inf) -> ReadkeeperError | None:
    """After a status of `root` ran out of time: `corrupt` naming a `.gitignore` or
    `.gitattributes` of the work tree that is a FIFO or a device (a symlink to one is
    refused before libgit2 runs: gitstatus_worker), found by listing at most
    `_LOOK_FOLDERS` folders for at most `_LOOK_SECONDS` (and not past `until`), each
    opened beneath its parent
    (no symlink entered, nor `.git`); None when none was found (the status is slow)."""
    try:
        top = open_in(work_tree, ".", os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    look = _Look(min(time.monotonic() + _LOOK_SECONDS, until))
    try:
        found = look.folder(top, "", 0)
    finally:
        os.close(top)
    if found is None:
        return None
    with _lock:
        if len(_STALLS) >= _STALLS_MAX:
            _STALLS.clear()
        _STALLS[root] = found[0]
    return _stall(*found)


class _Look:
    """One bounded look through the work tree for a rule file libgit2 would wait on."""

    def __init__(self, stop: float) -> None:
        self.stop = stop
        self.listed = 0

    def folder(self, fd: int, relative: str, depth: int) -> tuple[str, int] | None:
        """The path and mode of such a file in the folder open as `fd` or beneath it."""
        self.listed += 1
        try:
            entries = list(os.scandir(fd))
        except OSError:
            return None
        deeper = []
        for entry in entries:  # every rule file of a folder before its subfolders
            try:
                if entry.name != ".git" and entry.is_dir(follow_symlinks=False):
                    deeper.append(entry.name)
                elif entry.name in _RULE_NAMES:
                    mode = os.stat(entry.name, dir_fd=fd, follow_symlinks=False).st_mode
                    if _waits(mode):  # an lstat: nothing is opened
                        return os.path.join(relative, entry.name), mode
            except OSError:
                continue
        for name in deeper:
            if self.listed >= _LOOK_FOLDERS or time.monotonic() > self.stop or depth >= 100:
                return None
            try:
                inner = open_in(fd, name, os.O_RDONLY | os.O_DIRECTORY)
            except OSError:
                continue
            try:
                found = self.folder(inner, os.path.join(relative, name), depth + 1)
            finally:
                os.close(inner)
            if found is not None:
                return found
        return None
