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
"""

from __future__ import annotations

import os
import re

from ..errors import ReadkeeperError

# The folders (and for git, the gitdir file) of the version-control systems in use.
METADATA_NAMES = frozenset({".git", ".hg", ".svn", ".jj", ".bzr", "_darcs"})

# Characters HFS+ ignores in a name, and the trailing dots and spaces Windows drops:
# ".g\u200cit" and ".git." name the same folder there as ".git".
_IGNORED = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u206a-\u206f\ufeff]")


def _plain(name: str) -> str:
    return _IGNORED.sub("", name).rstrip(". ").casefold()


def _metadata_name(name: str) -> bool:
    plain = _plain(name)
    return plain in METADATA_NAMES or plain == "git~1"  # git's NTFS short name


def _is_gitdir(folder: str) -> bool:
    """Whether git would take `folder` for a git folder (its own test: a HEAD, and the
    objects folder or, in a linked worktree's gitdir, a commondir file naming it)."""
    return os.path.isfile(os.path.join(folder, "HEAD")) and (
        os.path.isdir(os.path.join(folder, "objects"))
        or os.path.isfile(os.path.join(folder, "commondir"))
    )


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
    below = os.path.relpath(os.path.dirname(real), root)
    for name in ["", *([] if below == "." else below.split(os.sep))]:
        folder = os.path.join(folder, name) if name else folder
        if _is_gitdir(folder):
            return folder
    return None


def refuse_metadata(shown: str, real: str, root: str, verb: str) -> None:
    """Raise `unsupported` when `real` lies in version-control metadata (see above)."""
    holding = metadata_holding(real, root)
    if holding is None:
        return
    where = shown if real == shown else f"{shown} (real path {real})"
    raise ReadkeeperError(
        "unsupported",
        f"{where} lies in the version-control metadata {holding}, and readkeeper never "
        f"{verb}s there: git (like hg and svn) runs programs named in its config and "
        "hooks, so a change there could run code at the user's next git command. Make "
        "that change with git yourself (git config, git commit, a hook manager), or ask "
        "the user; files of the work tree can be changed as ever.",
        file_path=shown,
        real_path=real,
        metadata=holding,
    )


__all__ = ["METADATA_NAMES", "metadata_holding", "refuse_metadata"]
