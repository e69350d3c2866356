"""Where a search, glob or listing looks: a user-given folder or file, checked as a read
checks its path (inside a root or an allowed folder, symlinks resolved first), and
never a FIFO, socket or device."""

from __future__ import annotations

import os
import stat

from .. import quoting
from ..errors import ReadkeeperError
from ..files.fileio import moved, opening_error
from ..files.paths import is_within
from ..hints import call
from ..read.services import ReadServices


def searched(
    services: ReadServices, path: str | None, session: str, *, folder_only: bool = False
) -> tuple[str, str, str]:
    """(the permitted folder `path` lies beneath, the folder to run in, the argument
    naming what is searched there) for `path` (the first root when None)."""
    workspace = services.workspace
    if path is None or path in ("", "."):
        if not workspace.roots:
            raise ReadkeeperError(
                "bad_params", "There is no workspace root; give path.", field="path"
            )
        path = workspace.roots[0]
    where = workspace.resolve(path, session)
    anchor = where.anchor.path
    real = where.path
    try:  # beneath the root, as everything is looked at (files/beneath.py)
        found = where.lstat()
    except OSError as exc:
        raise opening_error(real, exc) from None
    if found is None:
        raise workspace.not_found(real)
    mode = found.st_mode
    if stat.S_ISLNK(mode):  # the real path had none here: one planted since
        raise moved(real)
    if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
        raise ReadkeeperError(
            "unsupported",
            f"{real} is not a folder or a regular file, so it is not searched; give a "
            "folder or a file.",
            file_path=real,
        )
    if folder_only and not stat.S_ISDIR(mode):
        raise ReadkeeperError(
            "bad_params",
            f"{quoting.name(real)} is a file, not a folder. Give the folder it is in "
            f"({quoting.name(os.path.dirname(real))}), or see what the file is "
            f"({call('stat', path=real)}).",
            field="path",
            file_path=real,
        )
    if not is_within(real, anchor):
        raise ReadkeeperError("outside_workspace", f"{real} is outside the roots.", file_path=real)
    # ripgrep matches globs against paths relative to where it runs: the folder itself.
    if stat.S_ISDIR(mode):
        return anchor, real, "."
    return anchor, os.path.dirname(real), "./" + os.path.basename(real)  # never a flag
