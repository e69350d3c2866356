"""One budget for git status: a status that ran out of time is not run again on an
unchanged repository.

Whatever holds libgit2 past git_timeout_ms (a FIFO where it opens a loose object or a
pack's index, a small object that inflates to gigabytes, a FIFO `.gitignore` beyond the
bounded look of gitstatus_kinds.stalled_on, or a repository just too large) would hold
every later status as long, and "ask again" would wait again (attack round 26). So a
timeout is remembered per root with a fingerprint of its git folder: the lstat of HEAD,
the index, config, packed-refs, the refs and objects folders, each `objects/??` folder
and each entry of `objects/pack` (stat only: nothing there is opened, a FIFO neither).
While the fingerprint is unchanged and git_timeout_ms not raised, a later status is
answered at once, saying it was not run again and why; a changed git folder (a commit, a
checkout, a staged file, an object put back), a raised git_timeout_ms or `RETRY_SECONDS`
after the last try lets it run once more.

After a timeout, `stalled_in_git_folder` looks (bounded as the work tree's look) for a
loose object or pack file that is not a regular file: one found is named, `corrupt`. An
`objects/pack` entry that is not a regular file is said before libgit2 runs at all
(`fingerprint`), as gitstatus_kinds.check says the git folder's other files.
"""

from __future__ import annotations

import math
import os
import stat
import threading
import time
from dataclasses import dataclass
from typing import Any

from readkeeper import quoting
from readkeeper.errors import ReadkeeperError
from readkeeper.files.beneath import looked_at, open_in

from . import gitstatus_kinds

# A remembered timeout is tried again this long after the last try, changed or not (a
# fix deep in the work tree changes nothing the fingerprint sees).
RETRY_SECONDS = 300.0
# The git folder's entries the fingerprint stats (never opens).
_STATED = (
    "HEAD",
    "index",
    "config",
    "packed-refs",
    "refs",
    "refs/heads",
    "objects",
    "objects/pack",
    "objects/info",
    "objects/info/packs",
    "objects/info/alternates",
    "shallow",
)
# The settings that give a status its time: git's own, or less when the attachments
# source would be cut first (collect.py).
GIT_TIMEOUT = "git_timeout_ms"
ATTACHMENTS_TIMEOUT = "attachments_timeout_ms"
# Of the attachments timeout, what a status that runs out of it keeps to say why (the
# looks for a FIFO after a timeout: `timed_out`).
_SAYS_WHY_S = 0.5
# The entries of objects/pack looked at for one that is not a regular file.
_PACK_ENTRIES = 10_000
# The look after a timeout through objects/: entries looked at, at most, and seconds.
_LOOK_ENTRIES = 200_000
_LOOK_SECONDS = 1.0
_MEMORY_MAX = 100
_O_PATH = getattr(os, "O_PATH", os.O_RDONLY)

Fingerprint = tuple[tuple[str, int, int, int, int, int], ...]


@dataclass
class _Stall:
    fingerprint: Fingerprint
    timeout: float
    tried: float
    found: ReadkeeperError | None  # the file named, or None: only that it ran out of time
    named: str  # that file, relative to the git folder ("" when none)
    setting: str  # the setting that gave it its time


_MEMORY: dict[str, _Stall] = {}
# Roots whose last status answered in time: their statuses take a free worker before
# the others' (gitstatus_workers.Workers.take).
_ANSWERED: set[str] = set()
_lock = threading.Lock()
# After a status ran out of its time, how far past the call's time the looks for what
# it waited on may go (the call's time already keeps `_SAYS_WHY_S` for them).
_LOOKS_PAST_S = 0.25


def _stat_of(name: str, entry: os.stat_result | None) -> tuple[str, int, int, int, int, int]:
    if entry is None:
        return (name, 0, 0, 0, 0, 0)
    return (name, entry.st_mode, entry.st_ino, entry.st_size, entry.st_mtime_ns, entry.st_ctime_ns)


def fingerprint(git_dir: int, work_tree: int, named: str = "") -> Fingerprint:
    """The git folder open as `git_dir` as lstat sees it (and the work tree's top folder):
    what a commit, a checkout, a staged file or a new pack changes. A fixed number of
    lstat calls, never a listing of a folder the repository fills (100,000 junk files in
    objects/pack made each look take 2.5 s, attack round 28); `named`, a file a look
    found, and its folder are looked at too (an object put back)."""
    seen = [_stat_of(".", os.fstat(git_dir)), _stat_of("..", os.fstat(work_tree))]
    extra = (os.path.dirname(named), named) if named else ()
    seen += [_stat_of(name, looked_at(git_dir, name)) for name in (*_STATED, *extra)]
    return tuple(seen)


def check_pack(git_dir: int) -> None:
    """`corrupt` when one of the first `_PACK_ENTRIES` entries of `objects/pack` is not a
    regular file or a link (libgit2 would wait on a FIFO there): by the listing's own
    entry types, an lstat only where it has none."""
    try:
        fd = open_in(git_dir, "objects/pack", os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        with os.scandir(fd) as entries:
            for looked, entry in enumerate(entries):
                if looked >= _PACK_ENTRIES:
                    return
                if entry.is_file(follow_symlinks=False) or entry.is_symlink():
                    continue
                mode = _entry_stat(entry)
                if mode is not None:
                    raise found_file(f"objects/pack/{entry.name}", mode.st_mode, "git folder")
    except OSError:
        return
    finally:
        os.close(fd)


def _entry_stat(entry: os.DirEntry[str]) -> os.stat_result | None:
    try:
        return entry.stat(follow_symlinks=False)
    except OSError:
        return None


def found_file(relative: str, mode: int, where: str) -> ReadkeeperError:
    """`corrupt`, naming the file of the git folder or work tree that git status waits on."""
    what = gitstatus_kinds.KINDS.get(stat.S_IFMT(mode), "of an unknown kind")
    return gitstatus_kinds.corrupt(
        f"{quoting.name(relative)} in its {where} is {what}, not a regular file, and git "
        "status waits on it for ever",
        "The other attachments are not affected; ask the user to remove or replace it "
        "(git status runs again once its git folder changes).",
    )


def known(root: str, git_dir: int, work_tree: int, timeout: float) -> Fingerprint:
    """The git folder's fingerprint, after raising at once the answer of the last status
    of `root` when it ran out of time on this very git folder, with no more time given
    and `RETRY_SECONDS` not yet past."""
    with _lock:
        stall = _MEMORY.get(root)
    print_ = fingerprint(git_dir, work_tree, stall.named if stall is not None else "")
    if stall is None:
        return print_
    if (
        stall.fingerprint != print_
        or timeout > stall.timeout
        or time.monotonic() - stall.tried > RETRY_SECONDS
    ):
        forget(root)
        return fingerprint(git_dir, work_tree) if stall.named else print_
    if stall.found is not None:  # its words after "could not read the repository"
        said = stall.found.message.split(": ", 1)[-1]
        raise ReadkeeperError(
            stall.found.kind,
            "git status could not read the repository (not run again: the last status ran "
            f"out of time, and the git folder has not changed since): {said}",
        )
    raise ReadkeeperError(
        "too_large",
        f"git status was not run again: the last one ran out of time ({stall.timeout:g} s, "
        f"{_GIVEN[stall.setting]}) and the git folder has not changed since. "
        f"{next_step(stall.setting)}",
    )


def remember(
    root: str,
    print_: Fingerprint,
    timeout: float,
    found: ReadkeeperError | None,
    setting: str = GIT_TIMEOUT,
    named: str = "",
    git_dir: int = -1,
) -> None:
    """Remember that the status of `root` ran out of time on the git folder whose
    fingerprint was `print_`; `named` (with `git_dir`, to look at it now) the file of
    the git folder a look found."""
    if named:
        print_ += tuple(
            _stat_of(name, looked_at(git_dir, name)) for name in (os.path.dirname(named), named)
        )
    with _lock:
        if len(_MEMORY) >= _MEMORY_MAX:
            _MEMORY.clear()
        _MEMORY[root] = _Stall(print_, timeout, time.monotonic(), found, named, setting)


def forget(root: str, answered: bool = False) -> None:
    """Forget that `root`'s status ran out of time; `answered`: its status was shown."""
    with _lock:
        _MEMORY.pop(root, None)
        if answered:
            if len(_ANSWERED) >= _MEMORY_MAX:
                _ANSWERED.clear()
            _ANSWERED.add(root)


def answered(root: str) -> bool:
    """Whether the last status of `root` answered in time."""
    with _lock:
        return root in _ANSWERED


def call_until(deadline: float, settings: Any) -> float:
    """The time git status may run to in a call whose sources are cut at `deadline`
    (collect.py): what the looks after a timeout need kept, or half the call's time
    when that is shorter."""
    return deadline - min(_SAYS_WHY_S, float(settings.attachments_timeout_ms) / 2000)


# The setting that gave a status its time, as a refusal says it.
_GIVEN = {
    GIT_TIMEOUT: "the git_timeout_ms setting",
    ATTACHMENTS_TIMEOUT: "what the attachments_timeout_ms setting leaves it, below git_timeout_ms",
}
_RAISE = {
    GIT_TIMEOUT: "git_timeout_ms (READKEEPER_GIT_TIMEOUT_MS)",
    ATTACHMENTS_TIMEOUT: "attachments_timeout_ms (READKEEPER_ATTACHMENTS_TIMEOUT_MS)",
}


def given(settings: Any) -> tuple[float, str]:
    """The seconds a status is given, and the setting they come from. One rule for both
    timeouts: a status the attachments timeout would cut is given what that leaves it,
    less `_SAYS_WHY_S`, so that it ends and is remembered as one that ran out of
    git_timeout_ms (every call waited 3 s and nothing was remembered, attack round 28)."""
    git = settings.git_timeout_ms / 1000
    left = settings.attachments_timeout_ms / 1000 - _SAYS_WHY_S
    if left < git:
        return max(left, _SAYS_WHY_S), ATTACHMENTS_TIMEOUT
    return git, GIT_TIMEOUT


def next_step(setting: str) -> str:
    """What helps a status that ran out of the time `setting` gave it."""
    return (
        "It runs again once the git folder changes (a commit, a checkout, a staged file) or "
        f"{RETRY_SECONDS / 60:g} minutes after the last try. Ask the user to look at the "
        "repository: a file git reads may never end (a named pipe) or be huge (an object that "
        "inflates to gigabytes); if the repository is only large, they may raise "
        f"{_RAISE[setting]}."
    )


def timed_out(
    root: str,
    git_dir: int,
    work_tree: int,
    print_: Fingerprint,
    timeout: float,
    setting: str = GIT_TIMEOUT,
    until: float = math.inf,
) -> ReadkeeperError:
    """What a status of `root` that ran out of the time `setting` gave it says: `corrupt`
    naming a FIFO rule file of the work tree (remembered by gitstatus_kinds, while it is
    one), or a loose object the look found, else `too_large`; these two remembered with
    the git folder's fingerprint as it was before. The timeout is remembered before the
    looks: a call cut meanwhile (attachments_timeout_ms) still finds it remembered. The
    looks end by `until` (the call's time) and a little."""
    remember(root, print_, timeout, None, setting)
    with _lock:
        _ANSWERED.discard(root)
    in_tree = gitstatus_kinds.stalled_on(root, work_tree, until + _LOOKS_PAST_S)
    if in_tree is not None:
        forget(root)
        return in_tree
    found = stalled_in_git_folder(git_dir, until + _LOOKS_PAST_S)
    if found is not None:
        remember(root, print_, timeout, found[1], setting, found[0], git_dir)
        return found[1]
    return ReadkeeperError(
        "too_large",
        f"git status took longer than {timeout:g} s ({_GIVEN[setting]}) and was "
        f"stopped; it is not run again on an unchanged repository. {next_step(setting)}",
    )


def stalled_in_git_folder(
    git_dir: int, until: float = math.inf
) -> tuple[str, ReadkeeperError] | None:
    """After a timeout: `corrupt` naming a loose object of the git folder open as
    `git_dir` that is not a regular file (a FIFO libgit2 waits on), found by listing the
    `objects/??` folders (d_type, or an lstat: nothing opened), at most `_LOOK_ENTRIES`
    entries for at most `_LOOK_SECONDS` (and not past `until`); None when none was found."""
    stop = min(time.monotonic() + _LOOK_SECONDS, until)
    looked = 0
    try:
        store = open_in(git_dir, "objects", os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    try:
        for folder in sorted(os.scandir(store), key=lambda entry: entry.name):
            if len(folder.name) != 2 or not folder.is_dir(follow_symlinks=False):
                continue
            try:
                inner = open_in(store, folder.name, os.O_RDONLY | os.O_DIRECTORY)
            except OSError:
                continue
            try:
                for entry in os.scandir(inner):
                    looked += 1
                    if looked > _LOOK_ENTRIES or time.monotonic() > stop:
                        return None
                    if entry.is_file(follow_symlinks=False) or entry.is_symlink():
                        continue
                    mode = _entry_stat(entry)
                    if mode is not None:
                        relative = f"objects/{folder.name}/{entry.name}"
                        return relative, found_file(relative, mode.st_mode, "git folder")
            finally:
                os.close(inner)
    except OSError:
        return None
    finally:
        os.close(store)
    return None
