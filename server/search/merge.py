"""glob's newest first where nothing is kept: ripgrep's own sort (`--sortr=modified`)
split over parallel runs, and their outputs merged newest first here.

ripgrep sorts on one thread, stat-ing every file by its path, while its plain listing
walks on every core. So where the machine leaves cores idle (`at_once`), the folder
globbed is split by its top-level entries into parts (in turn by name), each sorted by
a run of its own at the same time: a run leaves out the other parts' entries by
exclusion globs (`--glob=!/name`), which only narrow its walk. In ripgrep an override
glob that is a negation ignores what it matches and says nothing of the rest, which the
ignore rules then judge (the ignore crate's `Override::matched`: only with a whitelist
glob among them does an unmatched file count as ignored). So no path argument (a path
named is searched whatever ignores it) and no include glob (one overrides the ignore
rules). An entry made after the top level was read is in no part's globs: every run
lists it, and the merge takes it once.

The merge stats only the heads it compares (a page of 1,000 costs about that many
stats, not one a file), each by its name in its folder opened beneath the root (never
an open of the file, never a symlink followed); a file gone since its run listed it is
left out. ripgrep orders files of one time in its walk's order: here they come as the
kept listing orders them (kept.py `order_of`): newest first, ties the greater name
first. A single run is merged the same way, so tied files come out in one order, cold
and kept. A run capped to a page prints PAST_PAGE lines more: when its last still ties
with the page's last, a tie may cross the cap, and the runs go again uncut.

On a busy machine (the shared one of bench/README.md, load 6-11 on 2 cores) the runs
share what ripgrep's one had and the split only adds work: one run sorts there.
"""

from __future__ import annotations

import contextvars
import heapq
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence

from . import rg
from .lookup import CHECK_EVERY, Opener

# ripgrep runs sorting at once (the parts of the folder); None: `at_once` decides.
SPLIT: int | None = None
MAX_RUNS = 4
# The top-level entries past which one run sorts: each is a glob of the other runs.
MAX_ENTRIES = 2000
# The lines a run capped to a page prints past it: its last then tells whether a tie
# may cross the cap (`newest`).
PAST_PAGE = 64
_GLOB_SPECIAL = frozenset("\\*?[]{}")


def at_once() -> int:
    """How many runs sort at once (SPLIT when set): one a core the machine leaves idle
    (its cores less its one-minute load), at most MAX_RUNS. On a busy machine the runs
    share the cores ripgrep's one would have had, and the split costs more than it gives
    (bench/README.md, glob and list)."""
    if SPLIT is not None:
        return SPLIT
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    try:
        idle = cores - os.getloadavg()[0]
    except OSError:
        return 1
    return max(1, min(MAX_RUNS, int(idle)))


def parts(opener: Opener, count: int) -> list[list[str]]:
    """The folder's top-level entries (opened by `opener` beneath the root) in `count`
    parts, in turn by name; [] when it is not split: `count` under two, fewer than two
    entries or too many, or a name no glob names exactly (not UTF-8: ripgrep takes UTF-8
    globs only)."""
    if count < 2:
        return []
    try:
        at = opener(b"")
    except OSError:
        return []
    try:  # the opener's descriptor may be a path's only (O_PATH): read through "."
        fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=at)
        try:
            names = sorted(os.listdir(fd))
        finally:
            os.close(fd)
    except OSError:
        return []
    finally:
        os.close(at)
    if not 2 <= len(names) <= MAX_ENTRIES:
        return []
    if any("\udc80" <= c <= "\udcff" for name in names for c in name):
        return []
    count = min(count, len(names))
    return [names[i::count] for i in range(count)]


def leave_out(split: list[list[str]], part: int) -> list[str]:
    """ripgrep's flags for the run of `split[part]`: the other parts' entries left out."""
    return [
        "--glob=!/" + "".join("\\" + c if c in _GLOB_SPECIAL else c for c in name)
        for other, names in enumerate(split)
        if other != part
        for name in names
    ]


def run_all(calls: Sequence[Callable[[], rg.Run]]) -> list[rg.Run]:
    """Each of `calls` (a ripgrep run) at once, the last on this thread; what one
    raises is raised here once all have ended."""
    runs: list[rg.Run | None] = [None] * len(calls)
    errors: list[BaseException] = []

    def one(index: int) -> None:
        try:
            runs[index] = calls[index]()
        except BaseException as exc:  # raised on the caller's thread
            errors.append(exc)

    threads = [
        threading.Thread(target=contextvars.copy_context().run, args=(one, i), daemon=True)
        for i in range(len(calls) - 1)
    ]
    for thread in threads:
        thread.start()
    one(len(calls) - 1)
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return [run for run in runs if run is not None]


class _Stats:
    """One stat a file by its name in its folder opened beneath the root (each folder
    opened once), until `end` (a `time.monotonic()` value)."""

    def __init__(self, opener: Opener, end: float) -> None:
        self._opener = opener
        self._end = end
        self._folders: dict[bytes, int | None] = {}
        self._due = CHECK_EVERY
        self.late = False

    def __call__(self, name: bytes) -> int | None:
        """`name`'s modification time; None when gone (or its folder is), or late."""
        self._due -= 1
        if self._due <= 0:
            self._due = CHECK_EVERY
            self.late = self.late or time.monotonic() > self._end
        if self.late:
            return None
        folder, _, base = name.rpartition(b"/")
        fd = self._folders.get(folder, -1)
        if fd == -1:
            try:
                fd = self._opener(folder)
            except OSError:
                fd = None  # gone, or now a symlink: its files are left out
            self._folders[folder] = fd
        if fd is None:
            return None
        try:
            return os.lstat(base, dir_fd=fd).st_mtime_ns
        except OSError:
            return None  # gone since ripgrep listed it

    def close(self) -> None:
        for fd in self._folders.values():
            if fd is not None:
                os.close(fd)
        self._folders.clear()


def _timed(names: list[bytes], stat: _Stats) -> Iterator[tuple[int, bytes]]:
    """(time, name) of a run's `names` (newest first as ripgrep sorted them), each run
    of one time given the greater name first."""
    tied: list[bytes] = []
    at = -1
    for name in names:
        mtime = stat(name)
        if mtime is None:
            if stat.late:
                break
            continue
        if mtime != at and tied:
            yield from ((at, n) for n in sorted(tied, reverse=True))
            tied = []
        at = mtime
        tied.append(name)
    yield from ((at, n) for n in sorted(tied, reverse=True))


def newest(
    streams: list[list[bytes]], wanted: int, opener: Opener, end: float, cut: Sequence[bool] = ()
) -> tuple[list[bytes], bool, bool]:
    """The first `wanted` names of `streams` (each newest first, as a ripgrep run sorted
    them) merged newest first, ties the greater name first, each name once; whether
    `end` stopped the stats early (then only the names stat-ed are merged); and whether
    a stream `cut` short (its run stopped at a line cap) may hold more of them: its last
    name ties with the answer's last (ripgrep's order of a tie is not this one, so the
    cap may have left out a tied name that comes first here), or the answer is short
    (files gone since listed). Then the caller lists again, uncut."""
    stat = _Stats(opener, end)
    try:
        merged = heapq.merge(*(_timed(names, stat) for names in streams), reverse=True)
        taken: dict[bytes, int] = {}
        for mtime, name in merged:
            if name not in taken:
                taken[name] = mtime
                if len(taken) == wanted:
                    break
        # A file written after its run's sort may stand out of its place: put it there.
        ordered = sorted(((t, n) for n, t in taken.items()), reverse=True)[:wanted]
        last = ordered[-1][0] if len(ordered) == wanted else None
        tails = [names[-1] for names, short in zip(streams, cut, strict=False) if short and names]
        more = any(last is None or (stat(tail) or last) >= last for tail in tails)
    finally:
        stat.close()
    return [name for _, name in ordered], stat.late, more
