"""glob's newest files where no time can be kept (no watcher hears the folder: the CLI,
polling), and what glob says of a ripgrep run that did not list every file.

ripgrep sorts by time itself (`--sortr=modified`, on one thread; with idle cores, the
folder split over runs sorting at once, merge.py, which also orders ties as the kept
listing does), and for a name-only pattern only the page's lines are read: stat-ing here
costs more when every time must be read anyway. But it prints nothing until its sort
ends, so a tree it cannot sort within the deadline would answer no path at all. So the
sort gets SORT_SHARE of the deadline; past it, an unsorted parallel listing
(`--line-buffered`: a run killed at its deadline keeps what it printed, which
block-buffered output loses) runs in part of the time left, and the files it found are
stat-ed here until the deadline and the newest of them answered, marked partial, with a
note saying so.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from ..words import count
from . import merge, rg, stalls
from .above import Above
from .globs import Glob
from .lookup import Opener
from .mtimes import FileTimes

FILE_LINES = 200_000  # ripgrep's output lines (NUL-separated paths come in chunks)
# The part of the deadline ripgrep's own sort may take; of what is left, the part the
# unsorted listing may (the rest is for the times).
SORT_SHARE = 0.6
LIST_SHARE = 0.7
TIMES_LATE = (
    "Time ran out looking up when files changed, so only the files looked up are "
    "ordered: glob a narrower path or pattern."
)


def why_stopped(ran: rg.Run, cut_counts: bool = True) -> str:
    """What glob's answer says of a run that did not list every file ("" when it did):
    the run's own failure (`Run.failure`), its deadline, the cap (when `cut_counts`),
    or its caller's stop."""
    if ran.failed:
        return ran.failure()
    if ran.timed_out:
        return (
            f"ripgrep ran out of time ({rg.DEADLINE_S:g} s) before it listed every file, "
            "so files may be missing: glob a narrower path or pattern."
        )
    if ran.cut and cut_counts:
        return (
            f"More than {FILE_LINES:,} files are there and only those listed first were "
            "looked at: glob a narrower path or pattern."
        )
    if ran.stopped:
        return "The listing was stopped before it ended: glob again."
    return ""


def newest_sorted_by_rg(
    matcher: Glob,
    where: tuple[str, str],
    wanted: int,
    avoided: stalls.Avoided,
    times: FileTimes,
    opener: Opener,
) -> tuple[list[str], str]:
    """The `wanted` newest matches under `where` (root, folder), and why the walk
    stopped early ("" when it did not), by ripgrep's own sort, or past its part of the
    deadline by an unsorted listing stat-ed here (the module's docstring)."""
    root, cwd = where
    end = time.monotonic() + rg.DEADLINE_S
    above = Above.of(root, cwd, avoided.judged)
    flags = ["--files", "--null", *matcher.rg_filter(), *avoided.flags()]
    flags += above.flags() if above else []
    # A page's lines are a page's files only when none of them is dropped; a few more,
    # so that a name past the page tells that no tie crosses the cap (merge.py).
    lines = wanted + merge.PAST_PAGE if matcher.rg_selects and above is None else FILE_LINES
    share = rg.DEADLINE_S * SORT_SHARE

    def sorted_run(extra: list[str], lines: int) -> Callable[[], rg.Run]:
        args = [*flags, "--sortr=modified", *extra]
        return lambda: rg.run(
            cwd,
            args,
            max_lines=lines,
            sep=b"\0",
            readable=root,
            deadline_s=share,
            refused=matcher.refused,
        )

    split = merge.parts(opener, merge.at_once())
    while True:
        runs = merge.run_all(
            [sorted_run(merge.leave_out(split, part), lines) for part in range(len(split))]
            or [sorted_run([], lines)]
        )
        if any(ran.timed_out and not ran.lines for ran in runs):
            return _newest_unsorted(matcher, where, wanted, (flags, above), times, (opener, end))
        streams = [_selected(matcher, above, ran) for ran in runs]
        cut = [ran.cut and lines < FILE_LINES for ran in runs]
        names, late, more = merge.newest(streams, wanted, opener, end, cut)
        if not more:
            break
        lines = FILE_LINES  # a tie across the cap (or files gone): every line this time
    beneath = rg.Beneath(root, cwd)
    found = [path for path in map(beneath, map(os.fsdecode, names)) if path is not None]
    if len(found) < len(names) == wanted:  # a path led out: look further
        everything = merge.newest(streams, sum(map(len, streams)), opener, end)[0]
        found = [p for p in map(beneath, map(os.fsdecode, everything)) if p is not None]
        found = found[:wanted]
    said = [why_stopped(ran, cut_counts=lines == FILE_LINES) for ran in runs]
    said.append(TIMES_LATE if late else "")
    return found, next(filter(None, said), "")


def _newest_unsorted(
    matcher: Glob,
    where: tuple[str, str],
    wanted: int,
    run_with: tuple[list[str], Above | None],
    times: FileTimes,
    timed: tuple[Opener, float],
) -> tuple[list[str], str]:
    """`newest_sorted_by_rg` once ripgrep's sort passed its part of the deadline: an
    unsorted listing in part of the time left, its files stat-ed until `end`."""
    (root, cwd), (flags, above), (opener, end) = where, run_with, timed
    left = max(end - time.monotonic(), 0.0)
    ran = rg.run(
        cwd,
        [*flags, "--line-buffered"],
        max_lines=FILE_LINES,
        sep=b"\0",
        readable=root,
        deadline_s=left * LIST_SHARE,
        refused=matcher.refused,
    )
    names = _selected(matcher, above, ran)
    ordered, late = times.newest(cwd, names, len(names), end, opener, None)
    found = inside(ordered, root, cwd)[:wanted]
    said = [
        f"ripgrep ran out of time sorting by time ({rg.DEADLINE_S:g} s; it shows nothing "
        f"until its sort ends), so these are the newest of the {count(len(names), 'file')} "
        "an unsorted listing found in the time left, not sorted by ripgrep; files it did "
        "not reach may be missing: glob a narrower path or pattern."
    ]
    if ran.failed:
        said.append(ran.failure())
    if late:
        said.append(TIMES_LATE)
    return found, " ".join(said)


def _selected(matcher: Glob, above: Above | None, ran: rg.Run) -> list[bytes]:
    """The paths `ran` printed that the rules above keep and `matcher` matches."""
    names = list(filter(None, ran.lines))
    if above is not None:
        names = above.keep(names)
    return names if matcher.rg_selects else matcher.select(names)


def inside(ordered: list[tuple[int, bytes]], root: str, cwd: str) -> list[str]:
    """The absolute paths of `ordered` that lie beneath `root` (none led out by a
    folder swapped for a symlink while ripgrep walked)."""
    beneath = rg.Beneath(root, cwd)
    paths = (beneath(os.fsdecode(name)) for _, name in ordered)
    return [path for path in paths if path is not None]
