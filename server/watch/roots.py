"""The watched roots' own lives: deleted, moved away, replaced, created again.

`rm -rf ws && git clone ... ws` or `mv ws ws.old && mkdir ws` leaves any watch on the
old folder: inotify's watches go with the deleted inode (or keep watching the renamed
one under the old name), Watchman cancels its watch, polling stats a path that is gone.
So each root's folder is known by its identity (st_dev, st_ino) when it was set up;
a root whose folder is gone or is another one is *missing* until a folder is there
again, and then it is set up afresh (a new watch of the new folder, and the files read
there re-checked against their records). The backends say so as soon as they see it
(inotify: IN_DELETE_SELF, IN_MOVE_SELF, IN_IGNORED on the root; Watchman: the
subscription cancelled), and the worker's tick looks at every root's identity in
any case, which is what catches a backend that said nothing (watchdog, a quick swap).
`readkeeper/stats` asks `gone` at the moment it answers, so it never says `watching`
of a folder that is not there.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .backends import Backend
    from .worker import Worker

from ..files.paths import is_within

Identity = tuple[int, int]

GONE = "the folder was deleted or moved away"
REPLACED = "the folder was replaced; watching the new one"


def identity(root: str) -> Identity | None:
    """The folder at `root` now (not followed if it is a symlink: a root never is, so a
    link put in its place is not the root); None when there is no folder there."""
    try:
        st = os.lstat(root)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode):
        return None
    return st.st_dev, st.st_ino


class RootLives:
    """Which roots are set up on which folder, and which are missing (and why)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._armed: dict[str, Identity] = {}  # root -> the folder its watch was set on
        self.missing: dict[str, str] = {}  # root -> why it is not watched now

    def arm(self, root: str) -> bool:
        """A root is being set up: False (and it is missing) when there is no folder."""
        found = identity(root)
        with self._lock:
            if found is None:
                self.missing[root] = GONE
                self._armed.pop(root, None)
                return False
            self.missing.pop(root, None)
            self._armed[root] = found
            return True

    def lost(self, root: str, reason: str = GONE) -> None:
        """A backend saw the root's folder go: it is missing until a folder is back."""
        with self._lock:
            self._armed.pop(root, None)
            self.missing[root] = reason

    def forget(self, roots: list[str]) -> None:
        """These roots are no longer wanted."""
        with self._lock:
            for root in roots:
                self._armed.pop(root, None)
                self.missing.pop(root, None)

    def replaced(self, root: str) -> bool:
        """Whether an armed root's folder is no longer the one set up (gone, or another)."""
        with self._lock:
            armed = self._armed.get(root)
        return armed is not None and identity(root) != armed

    def gone(self, roots: list[str]) -> dict[str, str]:
        """Of `roots` (armed ones), those whose folder is not the one set up, and why;
        with the roots already missing."""
        with self._lock:
            armed = dict(self._armed)
            found = dict(self.missing)
        for root in roots:
            if root in armed and root not in found:
                now = identity(root)
                if now != armed[root]:
                    found[root] = GONE if now is None else REPLACED
        return found

    def check(
        self, watches: dict[str, Any], polled: dict[str, str], unwatch: Callable[[Any], None]
    ) -> list[str]:
        """Drop the watch (or polling) of each root whose folder went or was replaced:
        those roots, now missing (the watcher's dicts, under its setup lock)."""
        dropped = []
        for root, reason in self.gone([*watches, *polled]).items():
            self.lost(root, reason)
            watch = watches.pop(root, None)
            if watch is not None:
                unwatch(watch)
            if polled.pop(root, None) is not None or watch is not None:
                dropped.append(root)
        return dropped

    def back(self) -> list[str]:
        """The missing roots that have a folder again, no longer missing: to be set up
        afresh."""
        with self._lock:
            missing = list(self.missing)
        found = [root for root in missing if identity(root) is not None]
        self.forget(found)
        return found


class FollowsRoots:
    """The watcher's side of its roots' lives (`watcher.Watcher` is one)."""

    roots: RootLives
    _setup_lock: Any  # the watcher's RLock
    _stopping: threading.Event
    _watches: dict[str, Any]
    _polled: dict[str, str]
    _worker: Worker

    def _set_up(self, root: str) -> bool:
        return root in self._watches or root in self._polled

    def _unwatch(self, watch: Any) -> None:
        raise NotImplementedError

    def _setup_async(self) -> None:
        raise NotImplementedError

    def _update_state(self) -> None:
        raise NotImplementedError

    def leave_soon(self, backend: Backend, reason: str) -> None:
        raise NotImplementedError

    def _watchman_lost(self, root: str, reason: str) -> None:
        if identity(root) is None or self.roots.replaced(root):
            self.root_gone(root)  # the folder went, not Watchman: watch it when it is back
        else:
            self.leave_soon("watchman", reason)

    def root_gone(self, root: str, reason: str = GONE) -> None:
        """A backend saw `root`'s own folder deleted, moved away or replaced (on its
        thread): missing until a folder is there again, then watched afresh."""
        self.roots.lost(root, reason)
        self._worker.roots_soon()

    def _check_roots(self) -> None:
        """On the worker's tick: drop the watch of a root whose folder went or was
        replaced, and set up afresh those that have a folder again (roots.py)."""
        if not self._setup_lock.acquire(blocking=False):
            return  # a setup is running: the next tick looks
        try:
            if not self._stopping.is_set():
                for root in self.roots.check(self._watches, self._polled, self._unwatch):
                    self._worker.recheck([root])  # the files read there: deleted, or not
                if self.roots.back():
                    self._setup_async()
                self._update_state()
        finally:
            self._setup_lock.release()


def outermost(roots: Iterable[str]) -> list[str]:
    """The roots, without those inside another root (watched with it)."""
    unique = sorted({os.path.realpath(r) for r in roots}, key=len)
    kept: list[str] = []
    for root in unique:
        if not any(is_within(root, k) for k in kept):
            kept.append(root)
    return kept
