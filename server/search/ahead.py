"""Each root's glob listing built ahead, between calls (issue 31): an agent's first glob
then runs no ripgrep and stats nothing.

The first glob of a server with nothing kept is answered by ripgrep's own sort, and the
root's listing, times and order are built after the answer (deferred.py: `list_files`,
then `FileTimes.newest` of every file); later ones answer from what kept.py keeps.
When read/ahead.py's worker finds the calls quiet (no call in flight for its settle
time, the machine not busy, the `read_ahead` setting on), it builds that for each
root the watcher hears, by the same functions: the same ripgrep run, the same stats
beneath the root, the same rules for what may be kept and for when it is dropped.
Nothing new is trusted: what it builds is what that glob would have kept. A glob of a
subfolder then answers from the root's listing too (listing.py).

Only the editor's roots are built (never a session's grant, nor an attached agent's
narrower roots: their globs key their own listings). It is polite: it stops at once
when a call comes (ripgrep is killed after its current chunk of output, the stats stop
within lookup.py's `CHECK_EVERY` of them; a listing ripgrep finished is kept, whole, as
the glob that ran it would have kept it, and so are the times read, as any look keeps
them: the next look, that call's glob or the next build, reads only the rest).
A root listed afresh (or one that met ripgrep's deadline, the line cap or `CPU_S`) is
not listed again for `REBUILD_S`: a tree that changes that often drops
its listing before a glob could use it. At most `STARTS_PER_MINUTE` builds of a root
start a minute (each other one was stopped by a call).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import ReadkeeperError
from . import rg
from .listing import list_files, opener_at
from .mtimes import FileTimes

if TYPE_CHECKING:
    from ..files.beneath import Anchor
    from ..files.paths import Workspace

REBUILD_S = 30.0
STARTS_PER_MINUTE = 6
# The thread CPU a build may spend on the stats and the order (ripgrep's own is its
# process's, bounded by its deadline).
CPU_S = 5.0


class ListingAhead:
    """Builds the kept listing of the roots, when read/ahead.py's worker asks."""

    def __init__(self, times: FileTimes, workspace: Callable[[], Workspace]) -> None:
        """`workspace`: the editor's roots (never an attached agent's narrower ones)."""
        self._times = times
        self._workspace = workspace
        self._built: dict[str, float] = {}  # root -> when its last build ended
        self._starts: dict[str, list[float]] = {}  # root -> when its builds started
        self.counts = {"built": 0, "stopped_by_call": 0}

    def __call__(self, interrupted: Callable[[], bool]) -> int:
        """Build the listing of each root that needs it, until `interrupted`; how many
        were built."""
        if rg.landlock_abi() < 1:
            return 0  # no listing is kept (kept.py): nothing to build
        built = 0
        workspace = self._workspace()
        for root in workspace.roots:
            if interrupted():
                self.counts["stopped_by_call"] += 1
                break
            where = workspace.locate(root, grants=False)
            if where is None or not self._due(where.anchor.path):
                continue
            built += self._build(where.anchor, interrupted)
        return built

    def _due(self, root: str) -> bool:
        now = time.monotonic()
        starts = self._starts.setdefault(root, [])
        starts[:] = [when for when in starts if when > now - 60]
        if len(starts) >= STARTS_PER_MINUTE or now - self._built.get(root, -REBUILD_S) < REBUILD_S:
            return False
        # After every call: a listing whose unheard files changed is made afresh by the
        # next glob instead (a rare change; their thousands of lstats are not paid here).
        times = self._times
        if times.builds.running(os.fsencode(root)):
            return False  # a first glob's build (search/deferred.py) is on it
        return times.kept(root) and not times.ready(root, checked=False)

    def _build(self, anchor: Anchor, interrupted: Callable[[], bool]) -> int:
        root = anchor.path
        times = self._times
        self._starts[root].append(time.monotonic())
        cpu_ends = time.thread_time() + CPU_S
        called = False

        def stop() -> bool:
            nonlocal called
            called = interrupted()
            return called or time.thread_time() > cpu_ends

        names, token = times.listing(root, used=False)
        if names is None:
            try:  # ripgrep is kept out of the folders it would wait in (stalls.py)
                names, cut = list_files(root, root, times, token, stop)
            except ReadkeeperError:  # the root's own ignore file would stall it: no build
                self._built[root] = time.monotonic()
                return 0
            if not cut and times.listing(root, used=False)[0] is not names:
                self._built[root] = time.monotonic()  # not kept (kept.py): not tried again soon
                return 0
        else:
            cut = ""
        # Every file's time, and the order kept (as a glob of the root makes them).
        opener = opener_at(anchor, root)
        deadline = time.monotonic() + rg.DEADLINE_S
        if cut or stop() or times.newest(root, names, 1, deadline, opener, None, stop)[1]:
            if called:
                self.counts["stopped_by_call"] += 1
            else:  # ripgrep's deadline, the line cap or `CPU_S`: not tried again soon
                self._built[root] = time.monotonic()
            return 0
        self._built[root] = time.monotonic()
        if not times.ready(root):
            return 0  # changed meanwhile
        self.counts["built"] += 1
        return 1


def when_set_up(
    progress: Callable[[str, str], None] | None, then: Callable[[], None]
) -> Callable[[str, str], None]:
    """`progress` of the watcher's setup (watch/watcher.py), calling `then` as each
    setup ends: the roots are watched, and their listings can be built."""

    def told(stage: str, message: str) -> None:
        if progress is not None:
            progress(stage, message)
        if stage == "end":
            then()

    return told


__all__ = ["ListingAhead", "when_set_up"]
