"""Keeping ripgrep away from the ignore files it would wait on.

ripgrep opens every `.gitignore`, `.ignore` and `.rgignore` of the folders it walks (and
of the folders above the one searched, up to the root), and each repository's
`.git/info/exclude` (for the folders at and above the one searched, through a `.git`
file's `gitdir:` and `commondir` too), with a plain blocking open following links: a
FIFO planted there makes it wait for a writer that never comes, and a character or
block device is read whole. A hostile repository could so make every search of its tree
run to its deadline. (A socket fails to open and a folder fails to read: ripgrep goes
on, so neither is one.)

So before a run: the folders above and at the one searched are looked at (a few lstats
each: cheap, with or without a watcher), and the folders beneath it that the watcher
named as suspects (watch/suspects.py, no walk here) are looked at again. A folder
beneath holding such a file is kept out of the walk by an anchored `--glob=!/folder`,
which ripgrep applies before entering it (so it never opens its ignore files); a
repository at or above the folder searched whose `info/exclude` is one gets
`--no-ignore-exclude` (that file has no patterns to lose, but the nested repositories'
`info/exclude` are then not applied either: the answer says so); an ignore file at or
above the folder searched cannot be kept out of ripgrep's reach (`--no-ignore-parent`
does not stop it), so the search is refused with the way on. The answer's note names
every folder left out and why. Nothing here opens a suspect: lstat and stat only.

With no watcher's list (the CLI, polling, Watchman, a queue overflowed), only the
folders above are looked at; beneath, the deadline is the bound (a partial answer). A
FIFO planted after the watcher's event was read and before ripgrep opens it costs the
same: the deadline.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Any

from ..errors import ReadkeeperError
from ..quoting import name as shown
from ..watch.suspects import GIT, IGNORE_NAMES
from .kept import _git_dirs

# Folders named in a note at most (the rest counted).
_NAMED = 10
_GLOB_SPECIAL = frozenset("\\*?[]{}")


def waits(path: bytes) -> bool:
    """Whether ripgrep, opening `path` to read it whole, could wait or never end: a FIFO
    or a device, or a link to one. Only stat-ed, never opened."""
    try:
        mode = os.stat(path).st_mode  # follows a link: ripgrep's open does
    except (OSError, ValueError):
        return False  # nothing there (or unreachable): ripgrep's open fails, no wait
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode)


def git_waits(root: bytes, folder: bytes, searched_from: bool) -> bool:
    """Whether ripgrep would wait on a file of `folder`'s repository: a `.git` folder's
    `info/exclude` (a link to a folder is followed, as ripgrep does); for a folder it
    runs in or under (`searched_from`), also a `.git` file's `commondir` and the
    `info/exclude` it leads to (ripgrep reads those only there, never for a `.git`
    file met in its walk)."""
    dot_git = os.path.join(folder, GIT.encode())
    try:
        mode = os.stat(dot_git).st_mode  # follows a link: ripgrep does
    except (OSError, ValueError):
        return False
    if stat.S_ISDIR(mode):
        return waits(os.path.join(dot_git, b"info", b"exclude"))
    if not stat.S_ISREG(mode) or not searched_from:
        return False
    found = _git_dirs(root, folder, dot_git)
    if found and waits(os.path.join(found[0], b"commondir")):
        return True
    return any(waits(os.path.join(git_dir, b"info", b"exclude")) for git_dir in found)


@dataclass
class Avoided:
    """What a run leaves out so that ripgrep never waits."""

    folders: list[str] = field(default_factory=list)  # beneath the folder searched
    exclude_off: bool = False  # `--no-ignore-exclude`

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
            named = ", ".join(map(shown, self.folders[:_NAMED]))
            more = len(self.folders) - _NAMED
            if more > 0:
                named += f" and {more} more"
            notes.append(
                f"Not searched: {named} (an ignore file there is a FIFO or a device, "
                "which ripgrep would wait on); make it a regular file to search there."
            )
        if self.exclude_off:
            notes.append(
                "The repository's .git/info/exclude is a FIFO or a device, so no "
                "info/exclude was applied; make it a regular file."
            )
        return " ".join(notes)


def avoid(root: str, cwd: str, suspects: list[bytes] | None) -> Avoided:
    """What a run of ripgrep in `cwd` (beneath the permitted folder `root`) leaves out,
    `suspects` being the watcher's (watch/suspects.py) beneath `cwd`, or None. Raises
    `unsupported` for an ignore file at or above `cwd` that ripgrep would wait on."""
    top, here = os.fsencode(root), os.fsencode(cwd)
    avoided = Avoided()
    folder = here
    while True:  # from the folder searched up to the root: ripgrep reads them all
        for name in sorted(IGNORE_NAMES):
            path = os.path.join(folder, name.encode())
            if waits(path):
                raise _refused(os.fsdecode(path), os.fsdecode(folder))
        avoided.exclude_off = avoided.exclude_off or git_waits(top, folder, True)
        if folder == top or not folder.startswith(top + b"/"):
            break
        folder = os.path.dirname(folder)
    skipped: set[bytes] = set()
    for suspect in suspects or ():
        beneath, last = os.path.split(suspect)
        if beneath == here or not beneath.startswith(here + b"/"):
            continue  # looked at above
        if waits(suspect) if last != GIT.encode() else git_waits(top, beneath, False):
            skipped.add(beneath[len(here) + 1 :])
    outer = sorted(skipped)
    kept: list[bytes] = []
    for folder in outer:  # one beneath another left out is left out with it
        if not any(folder.startswith(above + b"/") for above in kept):
            kept.append(folder)
    avoided.folders = [os.fsdecode(folder) for folder in kept]
    return avoided


def with_note(result: dict[str, Any], avoided: Avoided) -> dict[str, Any]:
    """`result` with `avoided`'s note added to its own."""
    said = avoided.note()
    if said:
        before = str(result.get("note", "") or "")
        if before in ("No matches.", "No files match."):
            before = f"{before[:-1]} elsewhere."
        result["note"] = f"{before} {said}".strip()
    return result


def _escaped(folder: str) -> str:
    """`folder` as a glob matching that name only. ripgrep takes only UTF-8 globs: a
    byte of the name that is not UTF-8 becomes `?` (which matches one such byte, and
    so maybe a look-alike sibling too: left out as well, never a wait)."""
    return "".join(
        "?" if "\udc80" <= c <= "\udcff" else "\\" + c if c in _GLOB_SPECIAL else c for c in folder
    )


def _refused(path: str, folder: str) -> ReadkeeperError:
    return ReadkeeperError(
        "unsupported",
        f"{shown(path)} is a FIFO or a device, not a regular file: ripgrep reads it as "
        f"an ignore file of {shown(folder)} and would wait on it, so nothing there is "
        "searched. "
        "Make it a regular file (or remove it), then search again; read or list "
        "files meanwhile.",
        file_path=path,
    )


__all__ = ["Avoided", "avoid", "git_waits", "waits", "with_note"]
