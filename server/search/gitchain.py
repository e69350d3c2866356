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
    try:
        mode = os.stat(dot_git).st_mode  # follows a link: ripgrep does
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


def _beneath(real_root: bytes, path: bytes) -> bool:
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return False
    return real == real_root or real.startswith(real_root + b"/")


def _first_line(real_root: bytes, path: bytes) -> bytes | None:
    """The first line of the regular file at `path` without its line break (a link
    followed, within the root only: readkeeper opens nothing outside by name), or None
    when there is none to read: absent, empty, not regular, or out of the root."""
    if not _beneath(real_root, path):
        return None
    try:
        data = read_small(os.path.realpath(path), _LINE_BYTES)
    except (OSError, ValueError):
        return None
    if not data:
        return None  # ripgrep reads no line from an empty file
    return data.split(b"\n", 1)[0].removesuffix(b"\r")
