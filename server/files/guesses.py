"""Did-you-mean: the files a caller probably meant by a path that names nothing, and
the other spelling of a macOS screenshot's name. Only what lies inside the roots is
looked at or named: a guess must never show what lies outside them.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import time
from collections.abc import Iterator, Sequence
from contextvars import ContextVar

from .beneath import Anchor, looked_at
from .reach import LeadsOut, Loop, Reach, holder, walk, within
from .walk import files_beneath

# Folders never worth suggesting from (and too large to walk on every miss).
_SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        "dist",
        "build",
        ".next",
        "target",
    }
)
# A miss's guesses are a hint, never worth much of the call's time: at most so many
# entries looked at, and the walk stops at its deadline with what it found (a
# 100,000-file tree made every miss cost 0.5-0.8 s: bench/bench_search.py's `miss` row).
_MAX_SUGGESTION_WALK = 20_000
SUGGESTION_WALK_SECONDS = 0.05
# ONE budget for all the guesses of a call (`one_call`): the walk and the scoring of every
# miss of it together (a read_many of 60 long missing names in a folder of 100,000 names
# cost 57.7 s of CPU: attack round 17). Past it a miss gets no guess, and its refusal
# names the list and glob calls that find the file.
SUGGESTION_SECONDS = 0.1
# Names scored at a time between looks at the budget (rapidfuzz holds the GIL meanwhile).
_SCORED_AT_ONCE = 1_000
_clock = time.monotonic


class _Budget:
    """The time left for a call's guesses, charged as it is spent (by every thread of the
    call: read_many's reads share it)."""

    def __init__(self, seconds: float | None = None) -> None:
        self._left = SUGGESTION_SECONDS if seconds is None else seconds
        self._lock = threading.Lock()

    def spent(self) -> bool:
        with self._lock:
            return self._left <= 0

    def running(self) -> _Running:
        return _Running(self)

    def charge(self, seconds: float) -> bool:
        """Charge `seconds`; whether the budget is spent."""
        with self._lock:
            self._left -= seconds
            return self._left <= 0


class _Running:
    """One miss's use of the call's budget: `over()` charges the time since it last
    looked and says whether the budget is spent."""

    def __init__(self, budget: _Budget) -> None:
        self._budget = budget
        self._since = _clock()

    def over(self) -> bool:
        now = _clock()
        elapsed, self._since = now - self._since, now
        return self._budget.charge(elapsed)


_CALL: ContextVar[_Budget | None] = ContextVar("readkeeper_guesses", default=None)


@contextlib.contextmanager
def one_call() -> Iterator[None]:
    """A call's block: every guess made within it shares one `SUGGESTION_SECONDS` (a
    block inside another's shares the outer one)."""
    if _CALL.get() is not None:
        yield
        return
    token = _CALL.set(_Budget())
    try:
        yield
    finally:
        _CALL.reset(token)


@contextlib.contextmanager
def none() -> Iterator[None]:
    """A block in which no guess is looked for (`suggest` answers none, as when a call's
    budget is spent): a refusal made within it is the same however busy the machine is,
    whatever files appeared beside it meanwhile (read_many with a budget counts its
    refusals, and the least budget it names must hold the next call's)."""
    token = _CALL.set(_Budget(0.0))
    try:
        yield
    finally:
        _CALL.reset(token)


_NNBSP = "\u202f"


def screenshot_variant(path: str) -> str | None:
    """macOS names screenshots '... 10.21.33 PM.png' with U+202F before AM/PM; agents
    (and people) type a plain space. Try the other spelling."""
    name = os.path.basename(path)
    for plain, narrow in ((" AM", _NNBSP + "AM"), (" PM", _NNBSP + "PM")):
        if plain in name:
            return os.path.join(os.path.dirname(path), name.replace(plain, narrow))
        if narrow in name:
            return os.path.join(os.path.dirname(path), name.replace(narrow, plain))
    return None


def suggest(path: str, roots: list[str], limit: int = 5) -> list[str]:
    """Files the caller probably meant, best first: the very name elsewhere in the
    workspace (nearest first), the path under a root when the root's prefix was left
    out, then similar names beside it and similar paths anywhere. Only readable files
    inside the roots: a guess must never point at a folder, nor show what lies outside.
    With nothing close, no guess; none either once the call's `SUGGESTION_SECONDS` are
    spent (what was found by then is kept: the same name elsewhere, the root's prefix)."""

    if not roots:
        return []
    budget = _CALL.get() or _Budget()  # outside a call (the CLI's read): its own
    if budget.spent():
        return []
    running = budget.running()
    try:
        return _suggest(path, roots, limit, running)
    finally:
        running.over()  # what the last steps took is charged too


def _suggest(path: str, roots: list[str], limit: int, running: _Running) -> list[str]:
    name = os.path.basename(path)
    found: list[str] = []

    # "/pkg/mod.py" typed for "<root>/pkg/mod.py": the workspace prefix left out.
    relative = path.lstrip(os.sep)
    found.extend(os.path.join(root, relative) for root in roots if relative)

    files = _files(roots, running)
    same_name = [f for f in files if os.path.basename(f) == name]
    found.extend(sorted(same_name, key=lambda f: (-_shared_prefix(f, path), len(f))))

    # Similar names beside it: in the nearest folder on its way that is there.
    reaches = [Reach(r, r) for r in roots]
    parent = nearest_folder(path, reaches)
    real_parent = _real(parent, reaches) if parent is not None else None
    siblings = _names(real_parent, reaches, running) if real_parent is not None else []
    if parent is not None and siblings:
        # folders among them are dropped below
        for match in _closest(name, siblings, limit * 2, 60, running):
            found.append(os.path.join(parent, match))

    root = next((r for r in roots if within(path, r)), roots[0])
    wanted = os.path.relpath(path, root)
    prefix = root.rstrip(os.sep) + os.sep  # the walk's paths are the root's joined
    by_relative = {f[len(prefix) :]: f for f in files if f.startswith(prefix)}
    for match in _closest(wanted, list(by_relative), limit, 70, running):
        found.append(by_relative[match])

    unique = dict.fromkeys(p for p in found if p != path)
    return [p for p in unique if _readable_file(p, reaches)][:limit]


def _closest(
    wanted: str,
    choices: Sequence[str],
    limit: int,
    cutoff: int,
    running: _Running,
) -> list[str]:
    """The `limit` choices closest to `wanted` (best first, the earlier of a tie), scored
    a slice at a time while the call's budget lasts: the best of the slices scored when
    it runs out. The first slice is always scored, so a miss beside a folder of fewer
    names gets the same guesses however busy the machine is."""
    from rapidfuzz import fuzz, process, utils  # deferred: only needed on a miss

    scored: list[tuple[float, int, str]] = []
    for first in range(0, len(choices), _SCORED_AT_ONCE):
        if first and running.over():
            break
        for match, score, index in process.extract(
            wanted,
            choices[first : first + _SCORED_AT_ONCE],
            scorer=fuzz.WRatio,
            processor=utils.default_process,
            limit=limit,
            score_cutoff=cutoff,
        ):
            scored.append((-score, first + index, match))
    return [match for _, _, match in sorted(scored)[:limit]]


def _names(folder: str, reaches: list[Reach], running: _Running) -> list[str]:
    """The names in the real folder `folder`, listed from a descriptor opened beneath
    its permitted folder following no symlink (`_opened`), at most as many as the walk
    looks at, while the call's budget lasts (a folder of 100,000 names took 90 ms to
    list whole): none once spent."""
    names: list[str] = []
    fd = _opened(folder, reaches)
    if fd is None:
        return []
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                names.append(entry.name)
                if len(names) >= _MAX_SUGGESTION_WALK:
                    break
                if len(names) % 256 == 0 and running.over():
                    return []
    except OSError:
        return []
    finally:
        os.close(fd)
    return names


def _opened(folder: str, reaches: Sequence[Reach]) -> int | None:
    """A readable descriptor of the real folder `folder`, opened beneath the permitted
    folder holding it following no symlink on the way; None when it cannot be (not
    there, not a folder, or a link on the way). A walk found `folder` inside, and a
    folder on its way swapped for a link out since must not be looked through: by
    its path, a miss beside a folder swapped for a link to /etc guessed /etc's files
    (round 47)."""
    permitted = holder(folder, reaches)
    if permitted is None or not within(folder, permitted.real):
        return None
    try:
        anchor = Anchor.open(permitted.real)
        return anchor.open_folder(folder[len(permitted.real.rstrip(os.sep)) + 1 :], write=True)
    except OSError:
        return None


def _entry(real: str, reaches: Sequence[Reach]) -> os.stat_result | None:
    """What is at the real path `real` (a symlink not followed), looked at in its folder
    opened as `_opened` opens it (a permitted folder itself, opened); None when nothing
    is, or it cannot be looked at."""
    itself = any(real == reach.real for reach in reaches)
    fd = _opened(real if itself else os.path.dirname(real), reaches)
    if fd is None:
        return None
    try:
        return os.fstat(fd) if itself else looked_at(fd, os.path.basename(real))
    finally:
        os.close(fd)


def _files(roots: list[str], running: _Running) -> list[str]:
    """The files a guess may name: what the walk finds within its entries, its deadline
    and the call's budget."""
    found: list[str] = []
    deadline = _clock() + SUGGESTION_WALK_SECONDS
    for path in files_beneath(roots, _MAX_SUGGESTION_WALK, skip=_SKIP_DIRS):
        found.append(path)
        if len(found) % 256 == 0 and (_clock() > deadline or running.over()):
            break
    return found


def _shared_prefix(a: str, b: str) -> int:
    """How many leading path components `a` and `b` share (nearer files share more)."""
    count = 0
    for x, y in zip(a.split(os.sep), b.split(os.sep), strict=False):
        if x != y:
            break
        count += 1
    return count


def _readable_file(path: str, reaches: list[Reach]) -> bool:
    """A regular file whose real path is inside a root: a suggestion that can be read."""
    real = _real(path, reaches)
    found = _entry(real, reaches) if real is not None else None
    return found is not None and stat.S_ISREG(found.st_mode)


def nearest_folder(path: str, reaches: list[Reach]) -> str | None:
    """The nearest folder above `path` that is there, as `path` names it, looked at only
    inside `reaches` (never through a link out); None when there is none inside.

    A folder is there only if every folder above it is, so the deepest one is found by
    halving: a few walks of the path, not one per level (2,000 levels of a missing
    path took a walk each, 4,000,000 lstats, round 44)."""
    above: list[str] = []  # the folders above `path` inside the roots, nearest first
    parent = os.path.dirname(path)
    while any(within(parent, r.real) or within(parent, r.spelled) for r in reaches):
        above.append(parent)
        if parent == os.path.dirname(parent):
            break
        parent = os.path.dirname(parent)
    there, missing = len(above), 0  # above[there:] are there; above[:missing] are not
    while missing < there:
        middle = (missing + there) // 2
        real = _real(above[middle], reaches)
        found = _entry(real, reaches) if real is not None else None
        if found is not None and stat.S_ISDIR(found.st_mode):
            there = middle
        else:
            missing = middle + 1
    return above[there] if there < len(above) else None


def _real(path: str, reaches: list[Reach]) -> str | None:
    """The real path of `path` when it lies inside the roots (reach.walk), else None."""
    try:
        real = walk(path, reaches)
    except (OSError, ValueError):
        return None
    return None if isinstance(real, LeadsOut | Loop) else real


def restored(path: str, roots: list[str]) -> list[str]:
    """The file `path` names when it was typed without a root's prefix ("/pkg/mod.py"
    for "<root>/pkg/mod.py"), for a path outside the roots: a guess made only of what
    lies inside them, whatever is at `path` itself."""
    relative = path.lstrip(os.sep)
    reaches = [Reach(r, r) for r in roots]
    guesses = (os.path.join(root, relative) for root in roots if relative)
    return [g for g in dict.fromkeys(guesses) if _readable_file(g, reaches)]
