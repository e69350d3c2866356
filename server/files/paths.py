"""Where a `file_path` points: workspace roots, symlinks, permissions.

A path is judged by its text first (reach.py): made absolute against the first root and
normalised by name, it is refused `outside_workspace` before anything is looked up when
no root, allowed folder or grant holds it, the same answer whether anything is there or
not. A path inside is resolved from its folder's real path looking only at entries
inside (reach.walk): a link inside whose target lies outside is outside, its target
never looked at. The real path is only a plan: what is permitted is then opened beneath
the permitted folder's open descriptor (`Location`, `beneath.py`), so a symlink planted
after the check leads nowhere. Did-you-mean lives in guesses.py.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass, field

from .. import quoting
from ..errors import ReadkeeperError
from ..hints import call

# `Location` lives with the descriptors it opens; named here too, where paths are resolved.
from .beneath import Anchor, Moved
from .beneath import Location as Location
from .fileio import moved
from .fileio import too_long as too_long_error
from .globcost import glob_of_name
from .guesses import nearest_folder, restored
from .guesses import screenshot_variant as screenshot_variant
from .guesses import suggest as suggest
from .reach import LeadsOut, Loop, Reach, by_name, lexical, outside, spellings, too_long, walk
from .reach import realpath as realpath
from .root_paths import real_path as real_path
from .root_paths import refused_root as refused_root
from .root_paths import uri_path as uri_path
from .unavailable import folder_unavailable

MAX_ROOTS = 64  # held at once from any front end: each watched, echoed (rounds 43-44)
# The setting that allows a folder outside the roots, as each front end's user sets it.
ALLOWED_SETTING = (
    "the allowed_paths setting: readkeeper.allowed_paths in the editor, "
    "READKEEPER_ALLOWED_PATHS in the environment of `readkeeper mcp` or the command line"
)
_ASK = f"Ask the user to allow it ({ALLOWED_SETTING}), or read a file inside the workspace."


def is_within(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or lies beneath it, by name alone (both absolute and
    normalized: no symlink is looked at)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _locate_in(anchor: Anchor, real_path: str) -> Location:
    """`real_path` (absolute, normalized, within the anchor) as a folder and name."""
    if real_path == anchor.path:
        return Location(real_path, anchor, "", ".")
    relative = real_path[len(anchor.path.rstrip(os.sep)) + 1 :]
    folder, _, name = relative.rpartition(os.sep)
    return Location(real_path, anchor, folder, name)


@dataclass
class Workspace:
    """The roots an agent may touch, plus what the user has allowed beyond them."""

    roots: list[str] = field(default_factory=list)
    allowed: tuple[str, ...] = ()
    # Per session: paths the user allowed when asked, for the session or for one use,
    # each real path with the path the agent asked for (its spelling).
    _granted: dict[str, dict[str, str]] = field(default_factory=dict)
    _granted_once: dict[str, dict[str, str]] = field(default_factory=dict)
    # The spelling of a root or allowed folder that is not its real path (a symlink the
    # user or the editor named it by), by real path: a path may name it so.
    _spelled: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # Open descriptors of the roots, allowed folders and granted paths, by real path.
    _anchors: dict[str, Anchor] = field(default_factory=dict)
    # When a folder of `_anchors` was last found deleted or replaced (time.time_ns):
    # what a session read there before is of another tree.
    _replaced: dict[str, int] = field(default_factory=dict)

    def set_roots(self, roots: Iterable[str]) -> None:
        """Make these folders the roots (by real path), each held open as an anchor; a root
        that is not a folder gets none, and nothing beneath it opens. A root given by
        another spelling (a symlink) may still be named by it."""
        given = list(roots)
        reals = [realpath(r) for r in given]
        for real in reals:
            with suppress(OSError):
                self._anchor(real)
        with self._lock:
            anchors = {r: self._anchors[r] for r in reals if r in self._anchors}
            self.roots = reals
            # Allowed folders and grants are opened again on their next use.
            self._anchors = anchors
            self._spelled = spellings(given, reals, self._spelled, self.allowed)

    def set_allowed(self, paths: Iterable[str]) -> None:
        """Make these folders (`allowed_paths`, as written) the allowed ones, by real path."""
        given = list(paths)
        reals = tuple(realpath(p) for p in given)
        with self._lock:
            self.allowed = reals
            self._spelled = spellings(given, list(reals), self._spelled, self.roots)

    def holds(self, real_path: str) -> bool:
        """Whether `real_path` lies beneath a root (by name: a real path has no link)."""
        return any(is_within(real_path, root) for root in self.roots)

    def lexical(self, file_path: str) -> str:
        """A user-given path made absolute (against the first root) and normalised by
        name alone: nothing is looked up."""
        return lexical(file_path, self.roots[0] if self.roots else os.getcwd())

    def absolute(self, file_path: str) -> str:
        """The absolute (not yet real) path of a user-given path (a name readkeeper shows
        escaped, a byte not UTF-8 as `\\udce9`, names that entry: quoting.name_back, looked
        up only inside the roots and allowed folders)."""
        return quoting.name_back(self.lexical(file_path), self._exists_inside)

    def _exists_inside(self, path: str) -> bool:
        """Whether something is at `path`, asked only inside (outside: nothing there is
        looked up), and only of a name holding a byte's escape text (name_back)."""
        try:
            real = walk(path, self.reaches())
            where = self.locate(real, grants=False) if isinstance(real, str) else None
            return where is not None and _looked_beneath(where, where.path) is not None
        except (OSError, ReadkeeperError):  # a link swapped on the way: nothing by this name
            return False

    def reaches(self, session: str = "", *, grants: bool = False) -> list[Reach]:
        """What calls of `session` may reach: the roots and allowed folders, and with
        `grants` the paths the user allowed it when asked."""
        with self._lock:
            spelled = dict(self._spelled)
            granted = {**self._granted.get(session, {}), **self._granted_once.get(session, {})}
        found = [Reach(f, spelled.get(f, f)) for f in (*self.roots, *self.allowed)]
        if grants:
            found += [Reach(real, given) for real, given in granted.items()]
        return found

    def real_of(
        self,
        candidate: str,
        session: str = "",
        *,
        grants: bool = True,
        follow_last: bool = True,
        advice: str = "",
        **data: object,
    ) -> str:
        """The real path of `candidate` (absolute, from `absolute`), found looking only
        inside what `session` may reach (reach.walk): `outside_workspace` when its text
        or a link on its way leads beyond it, with `advice` (the next call) and `data`;
        the error of a root that is gone; `not_found` for a link loop."""
        folders = self.reaches(session, grants=grants)
        named = by_name(candidate, folders)
        if named is None:
            raise self.outside(candidate, LeadsOut(), advice, **data)
        if too_long(candidate):  # by its text too: nothing is there, nothing can be made
            raise too_long_error(candidate, str(data.get("field", "file_path")))
        problem = self.unavailable(named)
        if problem is not None:
            raise problem
        try:
            real = walk(candidate, folders, follow_last=follow_last)
        except OSError:
            raise moved(candidate) from None  # a link replaced while it was read
        if isinstance(real, Loop):
            raise ReadkeeperError(
                "not_found",
                f"{quoting.name(candidate)} cannot be opened: the symbolic links on its way "
                f"(at {quoting.name(real.link)}) lead round in a loop. Fix the links, or "
                "give the path of the file itself.",
                file_path=candidate,
                suggestions=[],
            )
        if isinstance(real, LeadsOut):
            raise self.outside(candidate, real, advice, **data)
        return real

    def outside(
        self, candidate: str, leads: LeadsOut, advice: str, **data: object
    ) -> ReadkeeperError:
        """The refusal of a path beyond what calls may reach (reach.outside); a path
        outside by its text gets the guess of a root's prefix left out."""
        guesses = restored(candidate, self.roots) if leads.link is None else []
        return outside(candidate, leads, self.roots, advice, guesses, **data)

    def known(self, file_path: str, session: str = "") -> str:
        """The real path a path names when it lies inside (what keys its read-state),
        else the path as given: nothing outside is looked up."""
        candidate = self.absolute(file_path)
        try:
            return self.real_of(candidate, session)
        except ReadkeeperError:
            return candidate

    def direct(self, file_path: str) -> Location | None:
        """The location of a path as written, when it lies lexically inside a root or an
        allowed folder: right whenever no symlink is on its way, which opening it
        beneath the folder with no symlink allowed then proves (see `fileio.open_path`).
        None for anything else (which `resolve` takes the long way)."""
        if not file_path or "\x00" in file_path or names_a_folder(file_path):
            return None
        candidate = self.absolute(file_path)
        if too_long(candidate):
            return None  # `resolve` says why
        for folder in (*self.roots, *self.allowed):
            if is_within(candidate, folder):
                try:
                    return _locate_in(self._anchor(folder), candidate)
                except OSError:
                    return None
        return None

    def display(self, path: str) -> str:
        """`path` relative to its root when inside one (shorter for the agent to read)."""
        for root in self.roots:
            if path.startswith(root) and path[len(root) : len(root) + 1] == os.sep:
                return path[len(root) + 1 :]
        return path

    def grant(self, session: str, path: str, once: bool = False) -> None:
        """Let `session` read `path` (a file or a folder, as the agent named it), for the
        session or, `once`, for its next read: what the user allowed when asked. Its
        real path is looked up here, after the user allowed it."""
        real = realpath(path)
        with self._lock:
            grants = self._granted_once if once else self._granted
            grants.setdefault(session, {})[real] = path

    def forget_grants(self, session: str) -> None:
        """Drop what the user allowed `session` beyond the workspace (on a whole `forget`)."""
        with self._lock:
            self._granted.pop(session, None)
            self._granted_once.pop(session, None)

    def is_permitted(self, real_path: str, session: str) -> bool:
        """Whether `session` may read `real_path`; like a read, this uses up a one-use grant."""
        return self._permitting(real_path, session, grants=True) is not None

    def _permitting(
        self, real_path: str, session: str, *, grants: bool, use_up: bool = True
    ) -> str | None:
        """The folder or granted path that lets `session` at `real_path`: the roots and
        `allowed_paths`, and for reads the paths the user allowed when asked (a one-use
        grant is used up here, unless not `use_up`)."""
        for folder in (*self.roots, *self.allowed):
            if is_within(real_path, folder):
                return folder
        if not grants:
            return None
        with self._lock:
            once = self._granted_once.get(session, {})
            if real_path in once:
                if use_up:
                    del once[real_path]
                return real_path
            granted = self._granted.get(session, {})
            return next((g for g in granted if is_within(real_path, g)), None)

    def locate(
        self, real_path: str, session: str = "", *, grants: bool = True, use_up: bool = True
    ) -> Location | None:
        """Where to open `real_path` beneath, or None when it is not permitted (or
        the permitted folder cannot be opened). Without `grants` only the roots and
        `allowed_paths` count (for changes, and for what readkeeper reads on its own);
        without `use_up`, a one-use grant is not used up (a look before the read)."""
        permitting = self._permitting(real_path, session, grants=grants, use_up=use_up)
        if permitting is None:
            return None
        try:
            anchor = self._anchor(permitting)
        except NotADirectoryError:
            # A single granted file: its own folder is the anchor, and only its name
            # was permitted.
            anchor = self._anchor(os.path.dirname(permitting))
        except OSError:
            return None
        return _locate_in(anchor, real_path)

    def _anchor(self, folder: str) -> Anchor:
        """The open folder `folder`, opened again when the one held is no longer at its
        path (deleted and re-created, moved away and replaced): OSError when there is
        no folder there now, `Moved` when a symlink stands in its place."""
        with self._lock:
            held = self._anchors.get(folder)
        if held is not None and held.current():
            return held
        try:
            fresh = self._open_anchor(folder)
        except OSError:
            if held is not None:
                self._mark_replaced(folder)
            raise
        with self._lock:
            now = self._anchors.get(folder)
            if now is not None and now.identity == fresh.identity:
                # Opened again by another request, or the same folder after all (a
                # filesystem whose lstat and fstat disagree): nothing was replaced.
                return now
            self._anchors[folder] = fresh
        if held is not None:
            self._mark_replaced(folder)
        return fresh

    def _open_anchor(self, folder: str) -> Anchor:
        return Anchor.open(folder)  # `narrowed.Narrowed` opens beneath its editor's roots

    def _mark_replaced(self, folder: str) -> None:
        with self._lock:
            self._replaced[folder] = time.time_ns()

    def replaced_since(self, real_path: str, since_ns: int) -> str | None:
        """The root or allowed folder holding `real_path` when it was deleted or replaced
        after `since_ns` (a read-state record's time): what was read there before is of
        another tree. None otherwise."""
        for folder in (*self.roots, *self.allowed):
            if is_within(real_path, folder):
                with self._lock:
                    replaced = self._replaced.get(folder)
                if replaced is not None and replaced > since_ns:
                    return folder
        return None

    def unavailable(self, path: str) -> ReadkeeperError | None:
        """Why nothing at `path` (absolute) can be opened when the root or allowed folder
        it lies in is gone or is no longer the folder it was; None when that folder is
        there (or `path` is in none)."""
        for folder in (*self.roots, *self.allowed):
            if not is_within(path, folder):
                continue
            try:
                self._anchor(folder)
                return None
            except OSError as exc:
                return folder_unavailable(folder, path, exc)
        return None

    def resolve(self, file_path: str, session: str = "") -> Location:
        """Where `file_path` really is, to be opened beneath its permitted folder; or a
        `not_found`/`outside_workspace` error."""
        if not file_path or "\x00" in file_path:
            raise ReadkeeperError(
                "bad_params",
                "file_path must be a non-empty path without NUL characters.",
                field="file_path",
            )
        candidate = self.absolute(file_path)
        real = self.real_of(candidate, session, advice=_ASK)
        found = self._entry(real, session)
        if found is None:
            variant = screenshot_variant(candidate)
            other = self._existing(variant, session) if variant is not None else None
            if other is not None:
                candidate, real, found = other
            elif self.real_of(candidate, session, follow_last=False) != real:
                # The last name is a link inside to a missing file (a link to a folder
                # on the way is no such thing: the file is simply missing there).
                raise ReadkeeperError(
                    "not_found",
                    f"{quoting.name(candidate)} is a symbolic link to {quoting.name(real)}, "
                    "which does not exist. Read the link's target by another path, or fix "
                    "the link.",
                    file_path=candidate,
                    suggestions=[],
                )
            else:
                raise self.not_found(candidate)
        where = self.locate(real, session)
        if where is None:
            raise self.outside(candidate, LeadsOut(), _ASK)  # the roots changed meanwhile
        if names_a_folder(file_path) and (found is None or not stat.S_ISDIR(found.st_mode)):
            # "a.txt/" names a folder; the system refuses it, and so does readkeeper.
            raise ReadkeeperError(
                "not_found",
                f"{file_path} ends in a slash (or a dot), which names a folder, but "
                f"{candidate} is not a folder. To read the file, give its path as {candidate}.",
                file_path=candidate,
                suggestions=[candidate],
            )
        return where

    def _existing(self, candidate: str, session: str) -> tuple[str, str, os.stat_result] | None:
        """(`candidate`, its real path, what is there) when something is there, inside;
        else None."""
        try:
            real = self.real_of(candidate, session)
        except ReadkeeperError:
            return None
        found = self._entry(real, session)
        return (candidate, real, found) if found is not None else None

    def _entry(self, real: str, session: str) -> os.stat_result | None:
        """What is at the real path `real`, looked at beneath where `session` may reach
        it (`_looked_beneath`); a one-use grant is not used up by the look."""
        where = self.locate(real, session, use_up=False)
        return _looked_beneath(where, real) if where is not None else None

    def not_found(self, path: str) -> ReadkeeperError:
        """The `not_found` error for `path`, with did-you-mean suggestions from the roots."""
        suggestions = suggest(path, self.roots)
        where = f" The workspace root is {quoting.name(self.roots[0])}." if self.roots else ""
        folder = nearest_folder(path, self.reaches())  # there, and never outside
        find = f"the file by name ({call('glob', pattern=glob_of_name(path))})"
        hint = (
            f" Did you mean {suggestions[0]}?"
            if suggestions
            else f" List the folder ({call('list', path=folder)}) or find {find}."
            if folder is not None
            else f" Find {find}."
        )
        said = f"File does not exist: {path}.{where}{hint}"
        return ReadkeeperError("not_found", said, file_path=path, suggestions=suggestions)


def _looked_beneath(where: Location, real: str) -> os.stat_result | None:
    """What is at `where` (the real path `real`; a symlink not followed), looked at
    beneath its permitted folder following no symlink on the way: a walk found `real`
    inside, and a folder on its way swapped for a link out since must not be looked
    through (by its path, whether a name is there told what lies outside, as round 47's
    did-you-mean did). None when nothing is there; `stale` when a link stands on the
    way now."""
    try:
        return where.lstat()
    except Moved:
        raise moved(real) from None
    except OSError:
        return None


def names_a_folder(path: str) -> bool:
    """Whether `path` as given names a folder by its form (a trailing slash, or `.` or `..`
    last), which making it absolute loses: then `new/` would be written as a file `new`."""
    return path.endswith(("/", os.sep)) or os.path.basename(path) in (".", "..")
