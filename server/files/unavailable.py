"""The error for a path whose workspace folder (a root, an allowed path) is not there.

`rm -rf ws` with no clone after it, or a symlink put where the folder was: nothing
beneath can be opened, and "the file disappeared, read it again" would send the agent
round in a loop. The error says what happened to the folder and what will work.
"""

from __future__ import annotations

import os
import stat

from ..errors import ReadkeeperError


def folder_unavailable(folder: str, path: str, exc: OSError) -> ReadkeeperError:
    """The error for a path in a root or allowed folder that cannot be opened now."""
    try:
        st: os.stat_result | None = os.lstat(folder)
    except OSError:
        st = None
    if st is not None and stat.S_ISLNK(st.st_mode):
        try:
            target = os.readlink(folder)
        except OSError:
            target = "elsewhere"
        return ReadkeeperError(
            "outside_workspace",
            f"The workspace folder {folder} was replaced by a symbolic link (to {target}); "
            "readkeeper never follows a workspace folder that became a link, since it can "
            f"lead anywhere, so {path} was not opened. Ask the user to put the folder back, "
            "or to open the link's target as a workspace folder.",
            file_path=path,
            root=folder,
        )
    if st is None:
        return ReadkeeperError(
            "not_found",
            f"The workspace folder {folder} is not there (it was deleted or moved away, "
            f"or has not been made yet), so {path} cannot be read or written. If it is "
            "being created (again), as by a git clone or checkout in progress, try again "
            "once that is done; otherwise "
            "ask the user to restore the folder or to open another one.",
            file_path=path,
            root=folder,
            root_missing=True,
            suggestions=[],
        )
    why = "is no longer a folder" if not stat.S_ISDIR(st.st_mode) else "cannot be opened"
    return ReadkeeperError(
        "not_found",
        f"The workspace folder {folder} {why} ({exc.strerror or exc}), so {path} cannot "
        "be read or written. Ask the user to check the folder.",
        file_path=path,
        root=folder,
        suggestions=[],
    )
