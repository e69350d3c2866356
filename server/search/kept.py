"""glob's listing of a folder (which files ripgrep listed), kept across calls while the
watcher hears every change that could alter it, so a repeat glob runs no ripgrep.

A listing is kept only when, as ripgrep finished, every folder holding a listed file
(and each folder between it and the one globbed) had a watch, the watcher had told every
change made so far (watch/hears.py `quiet`) and no event had come meanwhile, and every
folder the watcher's rules skip there is one ripgrep ignores too (or a VCS folder): a
folder no watch hears and ripgrep walks could gain a file unseen. It is dropped by any
event but a file's write beneath it (or a write of an ignore file, or any event about a
folder on its way), by a new watcher or a queue overflow (the era), and by a change to
what no watch hears, checked on every use by one lstat each (`unheard`): the ignore
files of the folders from the root down to the one globbed (events beneath the folder
globbed only), each repository's `.git` and the files ripgrep opens for its
`info/exclude` (gitchain.py: for a `.git` file, its `commondir` too), for the watcher
keeps out of `.git`. ripgrep runs confined
to the root (Landlock) for a listing to be kept: nothing above the root (global git
config, parents' ignore files) can then change its answer. In doubt, ripgrep runs.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing, suppress
from dataclasses import dataclass, field
from itertools import islice, repeat
from operator import itemgetter

from ..files.beneath import folders_down
from ..files.fileio import read_small_in
from ..files.ignore import VCS_FOLDERS
from ..files.rgignore import RipgrepRules
from .gitchain import exclude_chain

# The files whose patterns ripgrep honours in each folder (besides `.git/info/exclude`).
IGNORE_NAMES = frozenset({b".gitignore", b".ignore", b".rgignore"})
_VCS = frozenset(os.fsencode(name) for name in VCS_FOLDERS)
# Files written since the order was made that are moved to their places one by one;
# past that the whole order is made again.
MAX_CHANGED = 1000
# Matches a path as ripgrep printed it (a compiled pattern's `match`, or None).
Match = Callable[[bytes], object]
_HEAD = itemgetter(0)
_FOLDERS_AT_ONCE = 4096


@dataclass
class Listing:
    """What ripgrep listed under one folder, and what it depends on that no watch hears."""

    era: object
    names: list[bytes]
    unheard: list[bytes]
    stamps: list[tuple[int, ...] | None]
    order: list[bytes] | None = None  # every name, newest first, once every time is known
    changed: set[bytes] = field(default_factory=set)  # names in `order` written since
    dropped: bool = field(default=False)
    cost: int = 0  # bytes held, as mtimes.MAX_BYTES counts them

    def still(self) -> bool:
        """Whether nothing unheard has changed since it was listed."""
        return not self.dropped and list(map(stamp, self.unheard)) == self.stamps


@dataclass(frozen=True)
class Stamped:
    """What no watch hears that a listing depends on (`unheard`), stamped before
    ripgrep runs: a change made while it walks then fails `Listing.still` (stamped
    after, it would pass as the version listed). For the folders watched then only."""

    folders: set[bytes]  # relative to the folder listed, "" for itself
    paths: list[bytes]
    stamps: list[tuple[int, ...] | None]
    in_repo: bool


def stamped(root: bytes, base: bytes, folders: set[bytes]) -> Stamped:
    """`unheard` of `base` with `folders` (and `base` itself), each path stamped."""
    folders = folders | {b""}
    paths, in_repo = unheard(root, base, folders)
    return Stamped(folders, paths, list(map(stamp, paths)), in_repo)


@dataclass(frozen=True)
class Token:
    """Taken before ripgrep lists, for `FileTimes.keep_listing`: the era and the events
    heard then, and (`before_listing`) what no watch hears, stamped."""

    era: object | None
    events: int
    unheard: Stamped | None = None


def stamp(path: bytes) -> tuple[int, ...] | None:
    """What changes when `path` is created, removed, replaced or written; for a symlink,
    its target's too (ripgrep follows an ignore file's link: its target may change
    with the link untouched)."""
    try:
        st = os.lstat(path)
    except (OSError, ValueError):  # a NUL in a path read from a `.git` file or `commondir`
        return None
    own = (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_mode)
    if not stat.S_ISLNK(st.st_mode):
        return own
    try:
        target = os.stat(path)
    except OSError:
        return (*own, -1)
    return (*own, target.st_ino, target.st_mtime_ns, target.st_ctime_ns, target.st_size)


def heard_ignore_files(suspects: list[bytes] | None) -> bool:
    """Whether every ignore file beneath a folder is one whose changes the watcher hears:
    the suspects are known (watch/suspects.py: ignore-named entries that are not regular
    files), and none is a link, whose target changes unheard. (A FIFO or device leaves
    its folder out of the walk: search/stalls.py.)"""
    if suspects is None:
        return False
    named = (path for path in suspects if os.path.basename(path) in IGNORE_NAMES)
    return not any(map(os.path.islink, named))


def folders_of(names: list[bytes]) -> set[bytes]:
    """The folders (relative, "" for the one globbed) holding `names`, with every folder
    between them and the one globbed."""
    # Each name cut at its last "/" in C (`folder_each`); a few thousand at a time, for
    # the GIL is held through each (search/ahead.py's build runs beside calls).
    folders: set[bytes] = set()
    for start in range(0, len(names), _FOLDERS_AT_ONCE):
        folders.update(folder_each(names[start : start + _FOLDERS_AT_ONCE]))
    for folder in list(folders):
        while folder:
            folder = folder.rpartition(b"/")[0]
            if folder in folders:
                break
            folders.add(folder)
    folders.add(b"")
    return folders


def folder_each(names: Iterable[bytes]) -> Iterator[bytes]:
    """The folder of each of `names` (relative, "" for one without a "/"), in order:
    each cut at its last "/" in C, not by a Python call a name (100,000s of them)."""
    return map(_HEAD, map(bytes.rpartition, names, repeat(b"/")))


def unheard(root: bytes, base: bytes, folders: set[bytes]) -> tuple[list[bytes], bool]:
    """The paths whose changes no watch reports and ripgrep's listing of `base` depends
    on (see the module's docstring), and whether a repository holds `base`."""
    paths: list[bytes] = []
    in_repo = False
    above = base
    while True:  # from the folder globbed up to the root
        paths += [os.path.join(above, name) for name in sorted(IGNORE_NAMES)]
        found = _repository(root, base, above, paths)
        in_repo = in_repo or found
        if above == root or not above.startswith(root + b"/"):
            break
        above = os.path.dirname(above)
    for folder in folders:
        if folder:
            _repository(root, base, os.path.join(base, folder), paths)
    return paths + _global_git_files(), in_repo


def _global_git_files() -> list[bytes]:
    """Git's own files of the user's that ripgrep reads (when the root holds them, it
    can under Landlock: a workspace of the home folder)."""
    home = os.path.expanduser(b"~")
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.fsdecode(home), ".config")
    git = os.path.join(os.fsencode(config), b"git")
    names = (os.path.join(git, b"config"), os.path.join(git, b"ignore"))
    return [os.path.join(home, b".gitconfig"), git, *names]


def _repository(root: bytes, base: bytes, folder: bytes, into: list[bytes]) -> bool:
    """Add the paths of `folder`'s repository, if it is one, that no watch hears: its
    `.git` and the files ripgrep run in `base` opens for its exclude file (gitchain.py,
    within the root: ripgrep, confined to it, opens none elsewhere)."""
    dot_git = os.path.join(folder, b".git")
    into.append(dot_git)
    if not os.path.lexists(dot_git):
        return False
    into += exclude_chain(root, base, folder, confined=True)
    return True


def skipped_walked(root: str, base: bytes, skipped: list[bytes], in_repo: bool) -> bool:
    """Whether a folder the watcher's rules skip under `base` may be one ripgrep walks
    (not a VCS folder, not ignored by ripgrep's own rules and precedence,
    files/rgignore.py: a root `.ignore` re-including what a nearer `.gitignore` hides
    wins). A folder inside a nested repository (a vendored clone, a
    submodule) may be: ripgrep applies no ignore file of the outer repository there,
    and the watcher's rules are the outer ones."""
    rules = RipgrepRules(root) if in_repo else None
    top = os.fsencode(root)
    nested: dict[bytes, bool] = {}  # folder -> whether a repository is at or above it
    for folder in skipped:
        if os.path.basename(folder) in _VCS:
            continue
        if rules is None or not rules.ignored(os.fsdecode(folder), True):
            return True
        if _in_nested_repository(top, os.path.dirname(folder), nested):
            return True
    return False


def _in_nested_repository(root: bytes, folder: bytes, known: dict[bytes, bool]) -> bool:
    """Whether `folder` or a folder between it and `root` (not the root) holds `.git`."""
    if folder == root or not folder.startswith(root + b"/"):
        return False
    found = known.get(folder)
    if found is None:
        found = os.path.lexists(os.path.join(folder, b".git")) or _in_nested_repository(
            root, os.path.dirname(folder), known
        )
        known[folder] = found
    return found


# The most of an ignore file read to tell whether its patterns are plain.
_PLAIN_BYTES = 64 * 1024


def plain_above(root: bytes, base: bytes) -> bool:
    """Whether every ignore pattern of the folders above `base` (from `root` down to
    its parent: ignore files, a repository's `info/exclude`) names a file or folder by
    name alone (no "/" but a last one, no "**"). ripgrep run in `base` applies such a
    parent's patterns with a slash unlike ripgrep run in `root` does (ripgrep issues
    1757, 2770, 2778): only with plain ones is its listing of `base` the root's
    listing beneath it."""
    above = os.path.dirname(base)
    if above != root and not above.startswith(root + b"/"):
        return True
    # Each folder opened from the one above it (a path looked up a name at a time
    # costs its depth: 2,000 folders above were 4,000,000 names, round 46).
    try:
        down = folders_down(os.fsdecode(root), os.fsdecode(above[len(root) + 1 :]))
        with closing(down):
            return all(_plain_in(fd) for _, fd in down)
    except OSError:  # a link or a file on the way, or a folder that cannot be read
        return False


def _plain_in(folder: int) -> bool:
    with suppress(OSError):
        if stat.S_ISREG(os.stat(b".git", dir_fd=folder).st_mode):
            return False  # a worktree's or submodule's git folder: not looked into
    if not all(_plain_file(folder, name) for name in IGNORE_NAMES):
        return False
    try:
        info = os.open(b".git/info", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=folder)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    try:
        return _plain_file(info, b"exclude")
    finally:
        os.close(info)


def _plain_file(folder: int, name: bytes) -> bool:
    try:
        text = read_small_in(folder, name, _PLAIN_BYTES + 1)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return len(text) <= _PLAIN_BYTES and all(map(_plain, text.splitlines()))


def _plain(line: bytes) -> bool:
    pattern = line.strip()
    if not pattern or pattern.startswith(b"#"):
        return True
    pattern = pattern.removeprefix(b"!").removesuffix(b"/")
    return b"/" not in pattern and b"**" not in pattern


def touches(base: bytes, path: bytes, kind: str, is_dir: bool) -> bool:
    """Whether an event about `path` may change the listing of `base`."""
    if kind == "modified" and not is_dir and os.path.basename(path) not in IGNORE_NAMES:
        return False  # a file written: its time goes (mtimes.py), the listing stays
    return path.startswith(base + b"/") or base.startswith(path + b"/") or path == base


def order_of(names: list[bytes], times: dict[bytes, int]) -> list[bytes]:
    """Every name, newest first (ties: the greater name first, as mtimes.py orders a
    page), by two sorts in C: by name, then stably by time."""
    return sorted(sorted(names, reverse=True), key=times.__getitem__, reverse=True)


def reorder(order: list[bytes], changed: set[bytes], times: dict[bytes, int]) -> list[bytes]:
    """`order` with each name of `changed` moved to its place by its new time."""
    kept = [name for name in order if name not in changed]
    for name in changed:
        key = (times[name], name)
        low, high = 0, len(kept)
        while low < high:  # the first place whose (time, name) is below the name's
            middle = (low + high) // 2
            if (times[kept[middle]], kept[middle]) > key:
                low = middle + 1
            else:
                high = middle
        kept.insert(low, name)
    return kept


def first(
    order: list[bytes], time_of: Callable[[bytes], int], count: int, match: Match | None
) -> list[tuple[int, bytes]]:
    """The first `count` of `order` that `match`, with their times: in C, and it stops
    at the `count`th."""
    chosen = list(islice(order if match is None else filter(match, order), count))
    return list(zip(map(time_of, chosen), chosen, strict=True))
