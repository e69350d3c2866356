"""Version-control metadata, which readkeeper never writes.

git runs programs that its metadata names: hooks (`.git/hooks/pre-commit`), and
settings in `.git/config` such as `core.fsmonitor`, `core.pager` or a diff driver. A
prompt-injected agent that may write anything inside the workspace could plant one of
those, to be run by the user's next `git status` or commit, outside every sandbox the
agent runs in. Mercurial (`.hg/hgrc` hooks), Subversion, Jujutsu, Bazaar and darcs keep
settings and hooks of the same kind in their own folders. So any path that really lies
in such metadata is refused for every change, whatever name reaches it: the check sees
the real path (symlinks followed, `..` resolved), compares names without case and
without the characters that macOS and Windows ignore in names (as git's own
`verify_path` does), and also finds a git folder kept apart from its work tree, which a
`.git` file names (`gitdir: ...`): `git worktree`, `--separate-git-dir`, submodules.
Reading stays allowed: nothing is run by reading, and the agent may read anything else
inside the workspace anyway.

A repository need not be named `.git`: git takes any folder for one (a bare repository
found by `git -C folder`, or a gitdir a `.git` file names) when it holds a valid HEAD
and, in it or in the folder its `commondir` file names, `objects/` and `refs/` (setup.c,
`is_git_directory`). Refusing that only once all three exist would let the agent build
one in any other order, or move the last part in under another name. So HEAD, the one
part git looks for in the folder itself and that no source tree needs, is the keystone:

- the agent never gives a file or a link a name git could read as HEAD (compared as
  `.git` is, so `head` and `HE\u200dAD` too, which are HEAD on macOS and Windows); a
  folder may be named so, as git never takes a folder for HEAD;
- a folder that holds a HEAD which is not a folder (the user's, by the filesystem's own
  matching of names) is metadata, like a `.git` folder: nothing in it is changed,
  made, or moved in or out, and it is not moved itself.

Config files, `objects/` and `refs/` folders stay as free to make as any other name.
"""

from __future__ import annotations

import os
import re
import stat

from .. import quoting
from ..errors import ReadkeeperError

# The folders (and for git, the gitdir file) of the version-control systems in use.
# Sapling keeps hooks in `.sl/config`, Pijul in `.pijul`, and a Fossil checkout is the
# database `.fslckout` (`_fossil_` on Windows) that names its repository.
METADATA_NAMES = frozenset(
    {".git", ".hg", ".svn", ".jj", ".bzr", "_darcs", ".sl", ".pijul", ".fslckout", "_fossil_"}
)

# Characters HFS+ ignores in a name, and the trailing dots and spaces Windows drops:
# ".g\u200cit" and ".git." name the same folder there as ".git".
_IGNORED = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u206a-\u206f\ufeff]")


def _plain(name: str) -> str:
    # On NTFS, `name:stream` (`.git::$INDEX_ALLOCATION`, `HEAD::$DATA`) is `name` itself.
    return _IGNORED.sub("", name).split(":", 1)[0].rstrip(". ").casefold()


def _metadata_name(name: str) -> bool:
    plain = _plain(name)
    return plain in METADATA_NAMES or plain == "git~1"  # git's NTFS short name


def names_head(name: str) -> bool:
    """Whether `name` could be git's HEAD on some filesystem (see above)."""
    return _plain(name) == "head"


def _holds_head(folder: str) -> bool:
    """Whether `folder` holds a HEAD git could read: a file or a link (lstat finds
    `head` too where the filesystem ignores case, as git would)."""
    try:
        found = os.lstat(os.path.join(folder, "HEAD"))
    except OSError:
        return False
    return not stat.S_ISDIR(found.st_mode)


def metadata_holding(real: str, root: str) -> str | None:
    """The version-control folder or gitdir file that real path `real` lies in (or is),
    looking for git folders kept apart from `root` (the folder it is permitted beneath)
    down; None for a file of a work tree."""
    parts = real.split(os.sep)
    for depth, name in enumerate(parts):
        if name and _metadata_name(name):
            return os.sep.join(parts[: depth + 1]) or os.sep
    if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
        return None
    folder = root
    below = os.path.relpath(real, root)
    for name in ["", *([] if below == "." else below.split(os.sep))]:
        folder = os.path.join(folder, name) if name else folder
        if _holds_head(folder):
            return folder
    return None


def refuse_metadata(shown: str, real: str, root: str, verb: str, *, folder: bool = False) -> None:
    """Raise `unsupported` when `real` lies in version-control metadata, or (unless the
    entry made or changed there is a `folder`) would be a HEAD (see above)."""
    holding = metadata_holding(real, root)
    # Names by the naming rule: the real path comes from the tree (a link's target).
    where = (
        quoting.name(shown)
        if real == shown
        else f"{quoting.name(shown)} (real path {quoting.name(real)})"
    )
    if holding is None:
        if folder or not (
            names_head(os.path.basename(real)) or names_head(os.path.basename(shown))
        ):
            return
        raise ReadkeeperError(
            "unsupported",
            f"{where} would be named HEAD, and readkeeper never {verb}s a file or link git "
            "could read as HEAD: beside objects/ and refs/ it makes its folder a git "
            "repository, whose config can run a command at the user's next git command "
            "there. Use another name, or ask the user to make the repository.",
            file_path=shown,
            real_path=real,
        )
    raise ReadkeeperError(
        "unsupported",
        f"{where} lies in the version-control metadata {quoting.name(holding)}, and "
        f"readkeeper never {verb}s there: git (like hg and svn) runs programs named in "
        "its config and hooks, so a change there could run code at the user's next git "
        "command. Ask the user to make that change; files of the work tree can be changed "
        "as ever.",
        file_path=shown,
        real_path=real,
        metadata=holding,
    )


__all__ = ["METADATA_NAMES", "metadata_holding", "names_head", "refuse_metadata"]
