"""Keeping ripgrep away from the ignore files it would wait on or die reading.

ripgrep opens every `.gitignore`, `.ignore` and `.rgignore` of the folders it walks (and
of the folders above the one searched, up to the root), each repository's
`.git/info/exclude`, and, for every `.git` file it meets (walking or above), the
`commondir` of the git folder its `gitdir:` names and the `info/exclude` of the common
folder that names in turn, with a plain blocking open following links: a
FIFO planted there makes it wait for a writer that never comes, and a character or
block device is read whole. A hostile repository could so make every search of its tree
run to its deadline. A regular file of gigabytes there (sparse: it costs no disk) is
read whole too and takes ripgrep past its memory cap (files/landlock.py): it dies and
the search answers with nothing, so a file over watch/suspects.py's MAX_IGNORE_BYTES
is treated as one it would wait on. (A socket fails to open and a folder fails to read: ripgrep goes
on, so neither is one.)

So before a run: the folders above and at the one searched are looked at (a few lstats
each: cheap, with or without a watcher), and the folders beneath it that the watcher
named as suspects (watch/suspects.py, no walk here) are looked at again. A folder
beneath holding such a file (or whose `.git` leads to one) is kept out of the walk by
an anchored `--glob=!/folder`,
which ripgrep applies before entering it (so it never opens its ignore files); a
repository at or above the folder searched whose `info/exclude` is one gets
`--no-ignore-exclude` (that file has no patterns to lose, but the nested repositories'
`info/exclude` are then not applied either: the answer says so); an ignore file at or
above the folder searched cannot be kept out of ripgrep's reach (`--no-ignore-parent`
does not stop it), so the search is refused with the way on. The answer's note names
every folder left out and the file it would wait on. Nothing here opens a suspect
that could make ripgrep wait: stat only (the `.git` file and a regular `commondir`
beneath the root are read, to follow them as ripgrep would).

The same looks find the ignore files ripgrep reads otherwise than git (a byte-order
mark, a NUL, a POSIX class, a byte that is not UTF-8: watch/suspects.py `reads_apart`;
each a regular file within the size limit, read beneath the root): at or above the
folder searched, a repository's `info/exclude` there, and beneath it those the watcher
named. Their folders are `judged`: search/above.py judges what ripgrep printed there.

With no watcher's list (the CLI, polling, Watchman, a queue overflowed), only the
folders above are looked at; beneath, the deadline is the bound (a partial answer). A
FIFO planted after the watcher's event was read and before ripgrep opens it costs the
same: the deadline.
"""

from __future__ import annotations

import os
import stat
from contextlib import closing, suppress
from dataclasses import dataclass, field
from typing import Any

from ..errors import ReadkeeperError
from ..files.beneath import folders_down, looked_at
from ..files.reach import remembering
from ..quoting import name as shown
from ..watch.suspects import GIT, IGNORE_NAMES, MAX_IGNORE_BYTES, apart_in
from .gitchain import exclude_chain, real_inside
from .rg import landlock_abi

# Folders named in a note at most (the rest counted).
_NAMED = 10
_GLOB_SPECIAL = frozenset("\\*?[]{}")


_WAITED = "a FIFO or a device"


def trouble(path: bytes, confined_to: bytes | None = None) -> str:
    """Why ripgrep, opening `path` to read it whole, could wait, never end or die: "a
    FIFO or a device" (or a link to one), or the size of a regular file over
    MAX_IGNORE_BYTES ("8.0 GiB"); "" when neither. Only stat-ed, never opened. A
    ripgrep `confined_to` a root (rg.py) cannot open a link leading out of it: such a
    link is nothing, and where it leads is never looked at."""
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode) and confined_to is not None:
            inside = real_inside(confined_to, path)
            if inside is None:
                return ""
            path = inside
        info = os.stat(path)  # follows a link: ripgrep's open does
    except (OSError, ValueError):
        return ""  # nothing there (or unreachable): ripgrep's open fails, no wait
    return _mode_trouble(info)


def _mode_trouble(info: os.stat_result) -> str:
    """`trouble` of the file whose (followed) status is `info`."""
    mode = info.st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return _WAITED
    return _size(info.st_size) if info.st_size > MAX_IGNORE_BYTES else ""


def waits(path: bytes, confined_to: bytes | None = None) -> bool:
    """Whether ripgrep would wait on `path`, never end or die reading it (`trouble`)."""
    return bool(trouble(path, confined_to))


def _confined(real_top: bytes) -> bytes | None:
    """The root a ripgrep run now is confined to (`trouble`), or None (no Landlock)."""
    return real_top if landlock_abi() > 0 else None


def git_files(root: bytes, cwd: bytes, folder: bytes) -> tuple[bytes | None, bool]:
    """Of the files ripgrep (run in `cwd`) opens for the `info/exclude` of `folder`'s
    repository (gitchain.py: a `.git` folder's exclude file, a link to a folder
    followed; for a `.git` file, met in its walk or at or above `cwd` alike, the file
    itself, its git folder's `commondir` and the common folder's exclude file, a
    relative path taken from `cwd` as ripgrep takes it): the first it would wait on
    (None: none), and, when none, whether the exclude file is one it reads otherwise
    than git. A confined ripgrep (rg.py) opens nothing outside the root, so nothing
    there is looked at then."""
    confined = _confined(os.path.realpath(root))
    chain = exclude_chain(root, cwd, folder, confined=confined is not None)
    waited = next((path for path in chain if waits(path, confined)), None)
    exclude = chain[-1] if chain and chain[-1].endswith(b"/info/exclude") else None
    return waited, waited is None and exclude is not None and _apart(root, exclude)


@dataclass
class Avoided:
    """What a run leaves out so that ripgrep never waits."""

    folders: list[str] = field(default_factory=list)  # beneath the folder searched
    # The file ripgrep would wait on, for each of `folders` in turn (as the note shows it).
    files: list[str] = field(default_factory=list)
    exclude_off: bool = False  # `--no-ignore-exclude`
    exclude_file: str = ""  # the file that turned it off
    exclude_why: str = ""  # why: "a FIFO or a device", or its size
    waits: bool = False  # a file of `files` is a FIFO or a device
    big: bool = False  # a file of `files` is over MAX_IGNORE_BYTES
    sizes: list[str] = field(default_factory=list)  # each of `files`'s when over it
    # The folders (relative; "" for all) where an ignore file is one ripgrep reads
    # otherwise than git (watch/suspects.py `reads_apart`): its answer there is judged
    # by the project's rules (search/above.py).
    judged: list[str] = field(default_factory=list)

    def flags(self) -> list[str]:
        """ripgrep's flags, to come after every other glob (the last one matching wins)."""
        globs = [f"--glob=!/{_escaped(folder)}" for folder in self.folders]
        if globs:
            # ripgrep's one-thread walk (chosen for one CPU or `-j1`) opens a folder's
            # ignore files before it applies the exclusion: keep it on the parallel walk.
            # A sort (`--sortr`) walks on one thread whatever this says: not with these.
            globs.append(f"--threads={min(max(os.cpu_count() or 2, 2), 12)}")
        return globs + (["--no-ignore-exclude"] if self.exclude_off else [])

    def note(self) -> str:
        """What the answer says of it ("" when nothing was left out)."""
        notes = []
        if self.folders:
            whys = [f"is {_WAITED}, which ripgrep would wait on"] if self.waits else []
            whys += [f"is larger than ripgrep may read whole ({_LIMIT})"] if self.big else []
            why = ", or ".join(whys or [f"is {_WAITED}"])
            notes.append(
                f"Not searched: {_listed(self.folders)} (an ignore file there {why}: "
                f"{_listed(self.files, self.sizes)}); make it a regular file"
                f"{_UNDER if self.big else ''} to search there."
            )
        if self.exclude_off:
            file = shown(self.exclude_file)
            if self.exclude_why in ("", _WAITED):
                why, under = f"is {_WAITED}", ""
            else:
                why = f"({self.exclude_why}) is larger than ripgrep may read whole ({_LIMIT})"
                under = _UNDER
            notes.append(
                f"The repository's {file} {why}, so no info/exclude was applied; make it a "
                f"regular file{under}."
            )
        return " ".join(notes)


def avoid(root: str, cwd: str, suspects: list[bytes] | None) -> Avoided:
    """What a run of ripgrep in `cwd` (beneath the permitted folder `root`) leaves out,
    `suspects` being the watcher's (watch/suspects.py) beneath `cwd`, or None. Raises
    `unsupported` for an ignore file at or above `cwd` that ripgrep would wait on."""
    with remembering():  # every folder above `cwd` is looked in: walked once
        return _avoid(root, cwd, suspects)


def _avoid(root: str, cwd: str, suspects: list[bytes] | None) -> Avoided:
    top, here = os.fsencode(root), os.fsencode(cwd)
    real_top = os.path.realpath(top)
    confined = _confined(real_top)
    avoided = Avoided()
    looked = _looked(real_top, here, top, confined)
    folder = here
    apart = False  # an ignore file at or above the folder searched reads apart
    while True:  # from the folder searched up to the root: ripgrep reads them all
        seen = looked.get(folder, (None, False))
        if isinstance(seen, ReadkeeperError):
            raise seen  # the nearest refusal, as ripgrep would meet it first
        own, folder_apart = seen
        apart = apart or folder_apart
        if not avoided.exclude_off:
            avoided.exclude_off = own is not None
            avoided.exclude_file = _shown_from(top, own or b"")
            avoided.exclude_why = trouble(own, confined) if own else ""
        if folder == top or not folder.startswith(top + b"/"):
            break
        folder = os.path.dirname(folder)
    skipped: dict[bytes, bytes] = {}  # a folder left out -> the file it would wait on
    judged: set[bytes] = {b""} if apart else set()
    for suspect in suspects or ():
        beneath, last = os.path.split(suspect)
        if beneath == here or not beneath.startswith(here + b"/"):
            continue  # looked at above
        if last != GIT.encode():
            waited: bytes | None = suspect if waits(suspect, confined) else None
            apart = waited is None and _apart(real_top, suspect)
        else:
            waited, apart = git_files(real_top, here, beneath)
        if waited is not None:
            skipped.setdefault(beneath[len(here) + 1 :], waited)
        elif apart:
            judged.add(beneath[len(here) + 1 :])
    avoided.judged = [os.fsdecode(folder) for folder in sorted(judged)]
    kept: list[bytes] = []
    for folder in sorted(skipped):  # one beneath another left out is left out with it
        if not any(folder.startswith(above + b"/") for above in kept):
            kept.append(folder)
    avoided.folders = [os.fsdecode(folder) for folder in kept]
    for folder in kept:
        why = trouble(skipped[folder], confined)
        avoided.big = avoided.big or why not in ("", _WAITED)
        avoided.waits = avoided.waits or why == _WAITED
        avoided.files.append(_shown_from(top, skipped[folder]))
        avoided.sizes.append("" if why == _WAITED else why)
    return avoided


_Looked = tuple[bytes | None, bool] | ReadkeeperError


def _looked(
    real_top: bytes, here: bytes, top: bytes, confined: bytes | None
) -> dict[bytes, _Looked]:
    """What `_look_in` finds in the root `top` and each folder down to `here`, by
    folder; a folder not there, or beneath a link, is not looked in."""
    if here != top and not here.startswith(top + b"/"):
        return {}  # not the root's: nothing there is looked at
    looked: dict[bytes, _Looked] = {}
    down = folders_down(os.fsdecode(real_top), os.fsdecode(here[len(top) + 1 :]))
    with suppress(OSError), closing(down):  # a link or a file on the way: none beneath
        for relative, fd in down:
            folder = os.path.join(top, os.fsencode(relative)) if relative else top
            try:
                looked[folder] = _look_in(fd, real_top, here, folder, confined)
            except ReadkeeperError as refused:
                looked[folder] = refused
    return looked


def _look_in(
    fd: int, real_top: bytes, here: bytes, folder: bytes, confined: bytes | None
) -> tuple[bytes | None, bool]:
    """One folder at or above the one searched, open as `fd`: refused (`unsupported`)
    when an ignore file there is one ripgrep would wait on; else the file of its
    repository's exclude chain ripgrep would wait on (`git_files`) and whether a file
    there reads apart. Its names are looked at in it (a path looked up a name at a time
    costs its depth: 2,000 folders above cost 40,000,000 names, round 46); a link
    among them is followed as `trouble` follows one."""
    apart = False
    for name in sorted(IGNORE_NAMES):
        entry = looked_at(fd, name)
        if entry is None:
            continue
        path = os.path.join(folder, name.encode())
        if stat.S_ISLNK(entry.st_mode):
            why = trouble(path, confined)
            regular = not why and _apart(real_top, path)
        else:
            why = _mode_trouble(entry)
            regular = not why and stat.S_ISREG(entry.st_mode) and apart_in(fd, name)
        if why:
            raise _refused(os.fsdecode(path), os.fsdecode(folder), why)
        apart = apart or regular
    if looked_at(fd, GIT) is None:
        return None, apart  # no repository here: no exclude chain
    own, exclude_apart = git_files(real_top, here, folder)
    return own, apart or exclude_apart


def _apart(real_top: bytes, path: bytes) -> bool:
    """`apart_in` of the file at `path` when it lies beneath the root (a link followed
    within it only: readkeeper opens, and looks up, nothing outside by name)."""
    real = real_inside(real_top, path)
    return real is not None and real.startswith(real_top + b"/") and apart_in(None, real)


def with_note(result: dict[str, Any], avoided: Avoided) -> dict[str, Any]:
    """`result` with `avoided`'s note added to its own."""
    said = avoided.note()
    if said:
        before = str(result.get("note", "") or "")
        if before in ("No matches.", "No files match."):
            before = f"{before[:-1]} elsewhere."
        result["note"] = f"{before} {said}".strip()
    return result


def _listed(names: list[str], sizes: list[str] | None = None) -> str:
    """`names` shown, each with its size when `sizes` gives one, the first _NAMED only."""
    sized = zip(names[:_NAMED], sizes or [""] * len(names), strict=False)
    listed = ", ".join(shown(n) + (f" of {size}" if size else "") for n, size in sized)
    more = len(names) - _NAMED
    return f"{listed} and {more} more" if more > 0 else listed


def _shown_from(root: bytes, path: bytes) -> str:
    """`path` as a note shows it: from the root when beneath it."""
    path = os.path.normpath(path) if path else path
    return os.fsdecode(path[len(root) + 1 :] if path.startswith(root + b"/") else path)


def _escaped(folder: str) -> str:
    """`folder` as a glob matching that name only. ripgrep takes only UTF-8 globs: a
    byte of the name that is not UTF-8 becomes `?` (which matches one such byte, and
    so maybe a look-alike sibling too: left out as well, never a wait)."""
    return "".join(
        "?" if "\udc80" <= c <= "\udcff" else "\\" + c if c in _GLOB_SPECIAL else c for c in folder
    )


def _size(size: int) -> str:
    """`size` bytes as a note says it."""
    for unit, shift in (("GiB", 30), ("MiB", 20)):
        if size >= 1 << shift:
            return f"{size / (1 << shift):.1f} {unit}"
    return f"{size} bytes"


_LIMIT = _size(MAX_IGNORE_BYTES).replace(".0 ", " ")
_UNDER = f" under {_LIMIT}"


def _refused(path: str, folder: str, why: str) -> ReadkeeperError:
    if why == _WAITED:
        what, fate, under = f"is {_WAITED}, not a regular file", "would wait on it", ""
    else:
        what = f"is of {why}, more than ripgrep may read whole ({_LIMIT})"
        fate, under = "would die at its memory cap reading it", _UNDER
    return ReadkeeperError(
        "unsupported",
        f"{shown(path)} {what}: ripgrep reads it as an ignore file of {shown(folder)} and "
        f"{fate}, so nothing there is searched. "
        f"Make it a regular file{under} (or remove it), then search again; read or list "
        "files meanwhile.",
        file_path=path,
    )


__all__ = ["Avoided", "avoid", "git_files", "trouble", "waits", "with_note"]
