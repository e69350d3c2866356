"""A bounded walk of the files beneath a folder, for guesses (did-you-mean) and other
best-effort looks over a workspace.

A repository may hold a folder chain thousands of levels deep (a clone, or
create_directory in a loop): `os.walk` recurses once per level, so such a chain raised
`RecursionError` and turned a plain miss into `internal`; its paths also outgrow
PATH_MAX, so opening them by name fails. This walk keeps its own stack, opens each
folder by one name relative to its parent's descriptor (`O_NOFOLLOW`: never out through
a symlink), and stops at `MAX_DEPTH` levels and at the caller's count of entries, so
at most `MAX_DEPTH` descriptors are open at once and the cost is bounded.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field

MAX_DEPTH = 32
_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class _Folder:
    fd: int
    path: str
    subfolders: list[str] = field(default_factory=list)


def files_beneath(
    roots: Collection[str], max_entries: int, skip: Collection[str] = ()
) -> Iterator[str]:
    """Paths of the regular files and symlinks beneath `roots`, each folder's files
    before its subfolders', at most `max_entries` entries looked at in all (folders
    count), `MAX_DEPTH` levels deep; folders named in `skip` are not entered."""
    seen = 0
    for root in roots:
        try:
            top = os.open(root, _FLAGS)
        except OSError:
            continue
        stack: list[_Folder] = []
        folder: _Folder | None = _Folder(top, root)
        try:
            while folder is not None or stack:
                if folder is not None:
                    for path in _list(folder, skip, max_entries - seen):
                        seen += 1
                        if path:
                            yield path
                    if seen >= max_entries:
                        return
                    folder.subfolders.reverse()  # popped from the end: listing order
                    stack.append(folder)
                    folder = None
                current = stack[-1]
                if not current.subfolders or len(stack) >= MAX_DEPTH:
                    os.close(stack.pop().fd)
                    continue
                name = current.subfolders.pop()
                try:
                    fd = os.open(name, _FLAGS, dir_fd=current.fd)
                except OSError:
                    continue  # gone, replaced by a symlink, or unreadable
                folder = _Folder(fd, os.path.join(current.path, name))
        finally:
            if folder is not None:
                os.close(folder.fd)
            for left in stack:
                os.close(left.fd)


def _list(folder: _Folder, skip: Collection[str], budget: int) -> Iterator[str]:
    """One folder's entries: a file's path, or "" for an entry that is a folder (kept in
    `folder.subfolders`); at most `budget` of them."""
    try:
        with os.scandir(folder.fd) as entries:
            for count, entry in enumerate(entries):
                if count >= budget:
                    return
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    is_dir = False
                if is_dir:
                    if entry.name not in skip:
                        folder.subfolders.append(entry.name)
                    yield ""
                else:
                    yield os.path.join(folder.path, entry.name)
    except OSError:
        return
