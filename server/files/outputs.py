"""Folders for the files readkeeper makes for an agent (PDF pages rendered to PNG).

They live outside the user's workspace, in one private temporary folder per server
process (created with `mkdtemp`, mode 0700, so no other user can predict or plant it),
with one subfolder per session, and are removed when the server exits. The core grants
each session read access to its own folder, so the agent can read the files it was
handed without being asked for permission.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import threading


class OutputFolders:
    """The private folders, one per session, for the files readkeeper makes for an agent."""

    def __init__(self) -> None:
        self._root: str | None = None
        self._lock = threading.Lock()

    def for_session(self, session: str) -> str:
        """The real path of `session`'s output folder, created on first use."""
        with self._lock:
            if self._root is None:
                import shutil  # here: most servers never render a page (a few ms at start)
                import tempfile

                self._root = os.path.realpath(tempfile.mkdtemp(prefix="readkeeper-"))
                atexit.register(shutil.rmtree, self._root, ignore_errors=True)
            root = self._root
        path = os.path.join(root, _folder_name(session))
        os.makedirs(path, mode=0o700, exist_ok=True)
        return path

    def existing(self, session: str) -> str | None:
        """The real path `session`'s output folder has (or will have), without making
        it; None while no folder was made at all."""
        with self._lock:
            root = self._root
        return None if root is None else os.path.join(root, _folder_name(session))

    def holds(self, path: str) -> bool:
        """Whether `path` is in one of these folders: a file readkeeper wrote for an
        answer, which no change notice is about (watch/changes.py)."""
        with self._lock:
            root = self._root
        return root is not None and path.startswith(root + os.sep)


def _folder_name(session: str) -> str:
    # Session names come from the client: hash them into a safe folder name.
    return "session-" + hashlib.blake2b(session.encode(), digest_size=6).hexdigest()
