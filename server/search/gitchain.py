"""The files ripgrep opens to find a repository's `info/exclude`, as ripgrep 14 reads
them (crates/ignore/src/dir.rs, `resolve_git_commondir`; each step checked against
the `rg` installed here, tests/search/test_git_chain.py).

For a `.git` folder (a link to one is followed): its `info/exclude`. For a `.git`
regular file (a linked worktree's, a submodule's): its first line, which must start
with "gitdir: " (the rest taken as it is, no space trimmed); that git folder's
`commondir` (a submodule's git folder has none: then no `info/exclude` at all, not
even the git folder's own); its first line, joined to the git folder when it starts
with "." and taken as it is otherwise; and the `info/exclude` of the folder it names.

A relative `gitdir:` (and a `commondir` not starting with ".") is taken by ripgrep from
its own working folder, not from the `.git` file's folder as git takes it (setup.c,
`read_gitfile_gently`): ripgrep run in a worktree with `gitdir: ../main/.git/worktrees/wt`
applies the exclude file, ripgrep run in the worktree's parent does not. What ripgrep
opens is what a listing depends on (kept.py) and what it could wait on (stalls.py), so
git's reading is not followed here.
"""

from __future__ import annotations

import os
import stat

from ..files.fileio import read_small
from ..files.reach import Reach, walk

_GITDIR = b"gitdir: "
# A `.git` file's or a `commondir`'s first line is a path: PATH_MAX bounds it.
_LINE_BYTES = 4096


def exclude_chain(root: bytes, cwd: bytes, folder: bytes, confined: bool) -> list[bytes]:
    """The files ripgrep, run in `cwd`, opens for the `info/exclude` of the repository
    whose `.git` is in `folder`, in the order it opens them (the `.git` file, its git
    folder's `commondir`, the exclude file), as far as the chain is known: [] when there
    is no `.git`, a `.git` folder's exclude file alone. `confined`: ripgrep can open
    nothing outside `root` (Landlock), so the chain ends before a path out of it.
    Only files beneath `root` are read (regular ones, no link at their last name);
    a path out of it is named, never opened."""
    real_root = os.path.realpath(root)
    dot_git = os.path.join(folder, b".git")
    # A link is followed, as ripgrep does; a confined one cannot go out, nor looks here.
    followed = real_inside(real_root, dot_git) if confined else dot_git
    try:
        mode = os.stat(followed).st_mode if followed is not None else 0
    except (OSError, ValueError):  # ValueError: a NUL in a path read from a git file
        return []
    if stat.S_ISDIR(mode):
        return _reached(real_root, [os.path.join(dot_git, b"info", b"exclude")], confined)
    if not stat.S_ISREG(mode):
        return []
    chain = [dot_git]
    line = _first_line(real_root, dot_git)
    if line is None or not line.startswith(_GITDIR):
        return _reached(real_root, chain, confined)
    git_dir = os.path.join(cwd, line[len(_GITDIR) :])
    commondir = os.path.join(git_dir, b"commondir")
    chain.append(commondir)
    common = _first_line(real_root, commondir)
    if common is not None:
        base = git_dir if common.startswith(b".") else cwd
        chain.append(os.path.join(base, common, b"info", b"exclude"))
    return _reached(real_root, chain, confined)


def _reached(real_root: bytes, chain: list[bytes], confined: bool) -> list[bytes]:
    """`chain` up to its first path ripgrep cannot open (out of the root, confined)."""
    if not confined:
        return chain
    for index, path in enumerate(chain):
        if not _beneath(real_root, path):
            return chain[:index]
    return chain


def real_inside(real_root: bytes, path: bytes) -> bytes | None:
    """The real path of `path` when it, and every link on its way, stays beneath
    `real_root`, found looking at nothing outside it (files/reach.py); None when its
    text or a link leads out (or it cannot be followed: a loop, a NUL)."""
    root = os.fsdecode(real_root)
    try:
        real = walk(os.path.normpath(os.fsdecode(path)), [Reach(root, root)])
    except (OSError, ValueError):
        return None
    return os.fsencode(real) if isinstance(real, str) else None


def _beneath(real_root: bytes, path: bytes) -> bool:
    return real_inside(real_root, path) is not None


def _first_line(real_root: bytes, path: bytes) -> bytes | None:
    """The first line of the regular file at `path` without its line break (a link
    followed, within the root only: readkeeper opens nothing outside by name), or None
    when there is none to read: absent, empty, not regular, or out of the root."""
    real = real_inside(real_root, path)
    if real is None:
        return None
    try:
        data = read_small(real, _LINE_BYTES)
    except (OSError, ValueError):
        return None
    if not data:
        return None  # ripgrep reads no line from an empty file
    return data.split(b"\n", 1)[0].removesuffix(b"\r")
