"""The real paths of the folders a search's paths lie in, each found from its parent's.

`os.path.realpath` looks at every component of the path it is given (an lstat each),
so the folders of one search, which share most of their components, had those looked
at again for each folder: seven lstats for a folder four deep below /work/wt/repo. Here
a folder's real path is its parent's real path and its own name, when that name is not a
link (one lstat); a link is resolved by `os.path.realpath` from the parent's real path.
The answer is `os.path.realpath`'s, as it would have been at the moment of each look.
"""

from __future__ import annotations

import os
import stat

from ..files.reach import Looker

# Folders remembered per search at most (the paths of a 100,000-file listing lie in far
# fewer); past it a folder is still resolved, from its nearest remembered ancestor.
MAX_FOLDERS = 100_000


class RealFolders:
    """`os.path.realpath` of absolute folder paths, for one search ("" when a name
    changed kind while it was resolved: EINVAL)."""

    def __init__(self) -> None:
        self._known: dict[str, str] = {}

    def __call__(self, folder: str) -> str:
        known = self._known.get(folder)
        if known is not None:
            return known
        # The folders between the nearest remembered ancestor and this one, nearest last
        # (a loop, not recursion: a path may be thousands of folders deep).
        pending = []
        path = folder
        while True:
            parent, _, name = path.rpartition(os.sep)
            if not parent or name in ("", ".", ".."):
                real = _realpath(path or os.sep)
                break
            pending.append((path, name))
            path = parent
            known = self._known.get(path)
            if known is not None:
                real = known
                break
        self._keep(path, real)
        looker = Looker()  # a chain thousands deep is looked at a name at a time
        try:
            for path, name in reversed(pending):
                real = _child(real, name, looker) if real else ""
                self._keep(path, real)
        finally:
            looker.close()
        return real

    def _keep(self, path: str, real: str) -> None:
        if len(self._known) < MAX_FOLDERS:
            self._known[path] = real


def _child(real_parent: str, name: str, looker: Looker) -> str:
    """The real path of `name` in the folder whose real path is `real_parent`."""
    joined = os.path.join(real_parent, name)
    # Missing, or beneath what is not a folder (mode 0): realpath (not strict) takes a
    # name it cannot look at as no link, so its answer is this one. Resolving it again
    # looked at every folder above for each level: a path 3,000 names deep took 38 s
    # under load, past the test suite's timeout.
    if not stat.S_ISLNK(looker.mode(real_parent, name)):
        return joined
    return _realpath(joined)


def _realpath(path: str) -> str:
    try:
        return os.path.realpath(path)
    except OSError:  # a name that changed kind while it was resolved (EINVAL)
        return ""
