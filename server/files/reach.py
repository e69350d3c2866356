"""Where a user-given path leads, found without looking at anything outside the folders
calls may reach.

A path is judged by its text first: made absolute (against the first root), normalised
by name (`..`, `.`, repeated slashes), and when no permitted folder (a root, an
`allowed_paths` folder, a path the user allowed) holds that text, it is refused before
anything is looked up: the answer is the same whether something is there or not, so
no call learns what lies outside (a file's existence, where a link there points).

A path whose text is inside is then resolved one name at a time from its folder's real
path, as `os.path.realpath` resolves it, but looking (lstat, readlink) only at entries
inside a permitted folder. A symlink inside whose text leads out ends the walk there:
its target is never looked at, and what the caller is told is the link and its text
(workspace content), never where the target leads or whether it exists. The folders
above a permitted folder are passed by name on the way back in (a link written as the
root's absolute path), never looked at either.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass

from .. import quoting
from ..errors import ReadkeeperError
from .beneath import goes_up, no_link_beneath

# Symlinks followed in one path before it is called a loop (Linux's own limit, ELOOP).
MAX_LINKS = 40


@dataclass(frozen=True)
class Reach:
    """A folder (or a single file the user allowed) calls may reach: its real path,
    and the spelling a path may name it by (the folder as the user or the editor gave
    it, when that is a symlink: `~/proj` for `/data/proj`)."""

    real: str
    spelled: str


@dataclass(frozen=True)
class LeadsOut:
    """A path beyond every permitted folder: by its text (`link` None), or through the
    symlink `link` (inside), whose own text is `target`."""

    link: str | None = None
    target: str | None = None


@dataclass(frozen=True)
class Loop:
    """A path with more symlinks on its way than the system follows (a link loop); `link`
    is the one where the walk stopped."""

    link: str


def lexical(path: str, base: str) -> str:
    """`path` made absolute against `base` and normalised by name alone: no lookup.
    `~` and `~/...` are the user's home folder (`~name` is a plain name: whether such
    a user exists is not looked up either)."""
    if path == "~" or path.startswith("~" + os.sep):
        path = os.path.expanduser(path)
    absolute = os.path.normpath(os.path.join(base, path))
    if absolute.startswith("//"):  # POSIX keeps two leading slashes; Linux means one
        absolute = os.sep + absolute.lstrip(os.sep)
    return absolute


# The longest name a folder entry can have, and the longest path one system call takes
# (Linux's NAME_MAX and PATH_MAX, with its NUL), in bytes.
NAME_MAX = 255
PATH_MAX = 4096


def too_long(path: str) -> bool:
    """Whether no file can have the absolute path `path`, by its text: a name over
    NAME_MAX bytes, or the whole over PATH_MAX - 1."""
    encoded = os.fsencode(path)
    return len(encoded) >= PATH_MAX or any(len(n) > NAME_MAX for n in encoded.split(b"/"))


def within(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or lies beneath it, by name alone."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def holder(path: str, folders: Sequence[Reach]) -> Reach | None:
    """The permitted folder whose real path or spelling holds `path` by its text (the
    deepest, when several do), or None: the path is outside."""
    best: tuple[int, Reach] | None = None
    for folder in folders:
        for prefix in (folder.real, folder.spelled):
            if within(path, prefix) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), folder)
    return best[1] if best is not None else None


def by_name(path: str, folders: Sequence[Reach]) -> str | None:
    """`path` (absolute, normalised) with the spelling of the folder holding it replaced
    by its real path, or None when no permitted folder holds it. Nothing is looked up."""
    folder = holder(path, folders)
    if folder is None:
        return None
    if within(path, folder.real):
        return path
    return folder.real + path[len(folder.spelled.rstrip(os.sep)) :]


# What the walks of one operation learnt of the folders on their way (`remembering`):
# the folders they stepped through by name, no link among them (each its own real path).
Walked = set[str]
_MEMO: ContextVar[dict[tuple[Reach, ...], Walked] | None] = ContextVar("walked", default=None)


@contextmanager
def remembering() -> Iterator[None]:
    """Within the block (on this thread), a walk of a path whose folder an earlier walk
    of the block passed looks at its last name only: for an operation that looks at a
    name in every folder above a deep path (ignore files, memory files), which walked it
    once a level (2,000 levels took 2,000,000 lstats, round 44). What the block learnt
    is forgotten at its end: a later operation looks afresh. A block within another (a
    call's) shares the outer one's."""
    if _MEMO.get() is not None:
        yield
        return
    token = _MEMO.set({})
    try:
        yield
    finally:
        _MEMO.reset(token)


def _memo(folders: Sequence[Reach]) -> Walked | None:
    """The block's memo of walks among `folders` (None: outside `remembering`)."""
    held = _MEMO.get()
    return None if held is None else held.setdefault(tuple(folders), set())


def walk(path: str, folders: Sequence[Reach], *, follow_last: bool = True) -> str | LeadsOut | Loop:
    """The real path of `path` (absolute, normalised), resolved as `os.path.realpath`
    resolves it, looking only at entries inside `folders`; `LeadsOut` when its text or
    a symlink on its way leads beyond them, `Loop` for a link loop. With `follow_last`
    False a symlink as the last name is the path itself (a move takes the link).
    An entry that is missing or cannot be looked at is taken by name, as realpath does;
    OSError when a symlink is replaced while it is read (a race). Within
    `remembering`, the folders it passes by their own names are kept for the next."""
    start = by_name(path, folders)
    if start is None:
        return LeadsOut()
    folder = holder(start, folders)
    assert folder is not None  # by_name found it
    current = folder.real
    home: str | None = current  # the permitted folder `current` lies in (None: none)
    memo = _memo(folders)
    base = current
    if memo:  # the nearest folder on its way walked before, however far up (round 46:
        above = start  # 64 roots nested 31 levels apart, each walked whole, 10 s)
        while True:
            above = os.path.dirname(above)
            if above == folder.real or not within(above, folder.real):
                break
            if above in memo:
                current = base = above
                break
    # Only the names below where the walk starts are split: a memo hit a level up
    # costs a name, not the whole path's (2,000 levels split 8,000 times, round 46).
    pending = _names(start[len(base.rstrip(os.sep)) :])
    plain = memo is not None  # no link followed yet: the folders met are kept in `memo`
    # A deep path is looked at through descriptors; a shallow one by whole paths (an
    # lstat each: cheaper there than a descriptor's opening).
    looker = Looker() if start.count(os.sep) > _DEEP else None
    try:
        links = 0
        last = LeadsOut()
        looks = True  # whether the system's look passes names (`_passed`) on this walk
        while pending:
            if looks and home is not None and len(pending) > _DEEP:
                passed = _passed(current, pending, memo if plain else None)
                looks, current = passed is not None, passed or current
                if not pending:
                    break
            name = pending.pop()
            if name == "..":
                plain = False
                current = os.path.dirname(current)
                home = _home(current, folders)
                continue
            step = os.path.join(current, name)
            if home is None:
                home = _home(step, folders)
            if home is None:
                plain = False
                mapped = by_name(step, folders)
                if mapped is not None:
                    current = mapped  # a folder's spelling: its real path, not looked at
                    home = _home(current, folders)
                elif any(within(f.real, step) or within(f.spelled, step) for f in folders):
                    current = step  # a folder above a permitted one, on the way back in
                else:
                    return last
                continue
            if not pending and not follow_last:
                current = step
                break
            if looker is not None:
                mode = looker.mode(current, name)
            else:
                try:
                    mode = os.lstat(step).st_mode
                except OSError:
                    mode = 0  # missing or not looked into: taken by name
            if not stat.S_ISLNK(mode):
                current = step
                if plain and memo is not None and len(memo) < _MEMO_MOST:
                    memo.add(current)
                continue
            plain = False
            links += 1
            if links > MAX_LINKS:
                return Loop(step)
            target = os.readlink(step)
            last = LeadsOut(step, target)
            if os.path.isabs(target):
                current, home = os.sep, _home(os.sep, folders)
            pending.extend(_names(target))
        if home is None:
            return last
        return current
    finally:
        if looker is not None:
            looker.close()


# A folder of more names is looked in through its descriptor (`Looker`), and more names
# ahead of a walk are passed by the system's look (`_passed`).
_DEEP = 64
# The most folders one memo keeps (each by its path, up to 4,096 characters): walks of
# paths that share no folder kept every folder of each (found beside round 47: a forget
# of 100 paths in chains 2,000 deep with a link at the bottom, 435 MB).
_MEMO_MOST = 4_096


def _passed(current: str, pending: list[str], memo: Walked | None) -> str | None:
    """`current` (a real folder inside) moved by the names ending `pending` with no link
    on their way, as the system finds them (`no_link_beneath`, halving to the first link),
    taken off `pending`, kept in `memo` as steps are; None when it cannot say (a step a
    name: 1,000 paths 2,000 deep made 2,000,000, round 47)."""
    ahead: list[str] = []
    for name in reversed(pending):
        if name == "..":
            break
        ahead.append(name)
    if len(ahead) <= _DEEP:
        return current
    plain, link = 0, len(ahead) + 1  # the most names known plain, the fewest not
    while link - plain > 1:
        tried = len(ahead) if plain == 0 and link > len(ahead) else (plain + link) // 2
        found = no_link_beneath(current, os.sep.join(ahead[:tried]))
        if found is None:
            return None
        plain, link = (tried, link) if found else (plain, tried)
    del pending[len(pending) - plain :]
    for name in ahead[:plain]:
        current = os.path.join(current, name)
        if memo is not None and len(memo) < _MEMO_MOST:
            memo.add(current)
    return current


_FOLDER = os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC


class Looker:
    """A walk's looks: the mode of a name in a folder (0 when missing or not looked
    into). In a folder of fewer than `_DEEP` names, an lstat of the whole path; in a
    deeper one, through the folder's descriptor, opened from the one above it when the
    walk stepped down into it (a whole path costs the system a lookup a name: a walk
    2,000 folders deep looked up 2,000,000 names, round 46). Beneath a folder found
    missing (or a file) nothing is looked at: nothing is there."""

    def __init__(self) -> None:
        self.folder = ""  # the folder `fd` is open on
        self.fd = -1
        self.gone = ""  # a folder that is not there

    def mode(self, folder: str, name: str) -> int:
        if folder != self.folder:
            parent, _, last = folder.rpartition(os.sep)
            stepped = self.fd >= 0 and parent == self.folder  # a step down: no count
            if not stepped:
                if self.gone and within(folder, self.gone):
                    return 0
                if folder.count(os.sep) < _DEEP:
                    return _lstat_mode(os.path.join(folder, name))
            if not self._open(folder, last if stepped else ""):
                return 0
        try:
            return os.stat(name, dir_fd=self.fd, follow_symlinks=False).st_mode
        except OSError:
            return 0

    def _open(self, folder: str, entry: str) -> bool:
        """Hold `folder` open: as the `entry` of the folder held when the walk stepped
        down into it (no link: the walk looked), else by its path (as an lstat of a name
        in it would go)."""
        fd = -1
        if entry:
            with suppress(OSError):  # swapped since it was looked at: by its path
                fd = os.open(entry, _FOLDER | os.O_NOFOLLOW, dir_fd=self.fd)
        if fd < 0:
            try:
                fd = os.open(folder, _FOLDER)
            except (FileNotFoundError, NotADirectoryError):
                self.gone = folder
                return False
            except OSError:
                return False
        self.close()
        self.folder, self.fd = folder, fd
        return True

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        self.folder = ""


def realpath(path: str) -> str:
    """`os.path.realpath(path)`: for an absolute path of more than `_DEEP` names and no
    `..`, found by `walk` with every folder permitted, a name at a time through folder
    descriptors (realpath looks at each name by its whole path: a root 2,000 folders
    deep took 30 ms, 64 of them nested in one hello 10 s, round 46)."""
    if not path.startswith(os.sep) or path.count(os.sep) <= _DEEP or goes_up(path):
        return os.path.realpath(path)
    try:
        found = walk(os.path.normpath(path), [Reach(os.sep, os.sep)])
    except OSError:  # a link replaced as it was read: as realpath meets it
        found = None
    return found if isinstance(found, str) else os.path.realpath(path)


def _lstat_mode(path: str) -> int:
    try:
        return os.lstat(path).st_mode
    except OSError:
        return 0


def outside(
    candidate: str,
    leads: LeadsOut,
    roots: Sequence[str],
    advice: str,
    guesses: Sequence[str] = (),
    **data: object,
) -> ReadkeeperError:
    """The refusal of a path beyond what calls may reach, made of its text alone and of
    the link inside that leads out (workspace content, each name quoted by the one
    rule, quoting.name): nothing outside is looked up for it, so it reads the same
    whether anything is there or not. `guesses` are files inside to offer instead."""
    where = f"({', '.join(roots) or 'none'})"
    shown = quoting.name(candidate)
    if leads.link is None:
        said = f"{shown} is outside the workspace roots {where}."
    elif leads.link == candidate:
        said = (
            f"{shown} is a symbolic link to {quoting.name(leads.target or '')}, which leads "
            f"outside the workspace roots {where}."
        )
    else:
        said = (
            f"{shown} leads outside the workspace roots {where} through the symbolic link "
            f"{quoting.name(leads.link)} (to {quoting.name(leads.target or '')})."
        )
    if guesses:
        said += f" Did you mean {guesses[0]}?"
        data = {**data, "suggestions": list(guesses)}
    if leads.link is not None:
        data = {**data, "link": leads.link, "link_target": leads.target}
    return ReadkeeperError(
        "outside_workspace",
        f"{said} {advice}".strip(),
        file_path=candidate,
        roots=list(roots),
        **data,
    )


def spellings(
    given: list[str], reals: list[str], before: dict[str, str], kept: Iterable[str]
) -> dict[str, str]:
    """The spellings (by real path) after `given` folders became `reals`: each given
    path that is not its real path, with those of the folders `kept` (the other kind)."""
    spelled = {real: before[real] for real in kept if real in before}
    for path, real in zip(given, reals, strict=True):
        named = os.path.normpath(os.path.abspath(os.path.expanduser(path)))
        if named != real:
            spelled[real] = named
    return spelled


def _home(path: str, folders: Sequence[Reach]) -> str | None:
    """The real path of the permitted folder `path` lies in, by name; None when none."""
    return next((f.real for f in folders if within(path, f.real)), None)


def _names(relative: str) -> list[str]:
    """The names of a relative path, last first (popped from the end), `.` and empty
    names dropped."""
    return [n for n in reversed(relative.split(os.sep)) if n and n != "."]


def here() -> str:
    """The working folder as the user's shell names it: `$PWD` when it is the same folder
    as the kernel's `getcwd()` (which always gives the real path). A project entered
    through a symlink is a root by that spelling, so the paths the user gives by it
    are inside (a path is judged by its text first)."""
    cwd = os.getcwd()
    pwd = os.environ.get("PWD", "")
    if pwd and os.path.isabs(pwd) and pwd != cwd:
        with suppress(OSError):
            if os.path.samefile(pwd, cwd):
                return os.path.normpath(pwd)
    return cwd


__all__ = [
    "MAX_LINKS",
    "LeadsOut",
    "Looker",
    "Loop",
    "Reach",
    "by_name",
    "here",
    "holder",
    "lexical",
    "outside",
    "realpath",
    "spellings",
    "too_long",
    "walk",
    "within",
]
