"""Where a `file_path` points: workspace roots, symlinks, permissions, did-you-mean.

Paths are resolved to their real path (symlinks followed) before any check, so a link
inside the workspace that points outside it is outside. Relative paths are taken from
the first workspace root. The real path is only a plan: what is permitted is then
opened beneath the permitted folder's open descriptor (`Location`, `beneath.py`), so a
symlink planted after the check leads nowhere.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass, field
from urllib.parse import unquote_to_bytes, urlsplit

from .. import quoting
from ..errors import ReadkeeperError
from ..hints import call

# `Location` lives with the descriptors it opens; named here too, where paths are resolved.
from .beneath import Anchor
from .beneath import Location as Location
from .fileio import moved
from .unavailable import folder_unavailable
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
_MAX_SUGGESTION_WALK = 20_000
_REALPATH_TRIES = 3
_NNBSP = "\u202f"


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
    # Per session: paths the user allowed when asked, for the session or for one use.
    _granted: dict[str, set[str]] = field(default_factory=dict)
    _granted_once: dict[str, set[str]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # Open descriptors of the roots, allowed folders and granted paths, by real path.
    _anchors: dict[str, Anchor] = field(default_factory=dict)
    # When a folder of `_anchors` was last found deleted or replaced (time.time_ns):
    # what a session read there before is of another tree.
    _replaced: dict[str, int] = field(default_factory=dict)

    def set_roots(self, roots: Iterable[str]) -> None:
        """Make these folders the roots (by real path), each held open as an anchor; a root
        that is not a folder gets none, and nothing beneath it opens."""
        reals = [os.path.realpath(r) for r in roots]
        for real in reals:
            with suppress(OSError):
                self._anchor(real)
        with self._lock:
            anchors = {r: self._anchors[r] for r in reals if r in self._anchors}
            self.roots = reals
            # Allowed folders and grants are opened again on their next use.
            self._anchors = anchors

    def holds(self, real_path: str) -> bool:
        """Whether `real_path` lies beneath a root (by name: a real path has no link)."""
        return any(is_within(real_path, root) for root in self.roots)

    def absolute(self, file_path: str) -> str:
        """The absolute (not yet real) path of a user-given path (a name readkeeper shows
        escaped, a byte not UTF-8 as `\\udce9`, names that entry: quoting.name_back)."""
        expanded = os.path.expanduser(file_path)
        if not os.path.isabs(expanded):
            expanded = os.path.join(self.roots[0] if self.roots else os.getcwd(), expanded)
        return quoting.name_back(os.path.normpath(expanded), os.path.lexists)

    def direct(self, file_path: str) -> Location | None:
        """The location of a path as written, when it lies lexically inside a root or an
        allowed folder: right whenever no symlink is on its way, which opening it
        beneath the folder with no symlink allowed then proves (see `fileio.open_path`).
        None for anything else (which `resolve` takes the long way)."""
        if not file_path or "\x00" in file_path or names_a_folder(file_path):
            return None
        candidate = self.absolute(file_path)
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

    def grant(self, session: str, real_path: str, once: bool = False) -> None:
        """Let `session` read `real_path` (a file or a folder), for the session or, `once`,
        for its next read: what the user allowed when asked."""
        with self._lock:
            grants = self._granted_once if once else self._granted
            grants.setdefault(session, set()).add(real_path)

    def forget_grants(self, session: str) -> None:
        """Drop what the user allowed `session` beyond the workspace (on a whole `forget`)."""
        with self._lock:
            self._granted.pop(session, None)
            self._granted_once.pop(session, None)

    def is_permitted(self, real_path: str, session: str) -> bool:
        """Whether `session` may read `real_path`; like a read, this uses up a one-use grant."""
        return self._permitting(real_path, session, grants=True) is not None

    def _permitting(self, real_path: str, session: str, *, grants: bool) -> str | None:
        """The folder or granted path that lets `session` at `real_path`: the roots and
        `allowed_paths`, and for reads the paths the user allowed when asked (a one-use
        grant is used up here)."""
        for folder in (*self.roots, *self.allowed):
            if is_within(real_path, folder):
                return folder
        if not grants:
            return None
        with self._lock:
            once = self._granted_once.get(session, set())
            if real_path in once:
                once.discard(real_path)  # used up
                return real_path
            granted = self._granted.get(session, ())
            return next((g for g in granted if is_within(real_path, g)), None)

    def locate(self, real_path: str, session: str = "", *, grants: bool = True) -> Location | None:
        """Where to open `real_path` beneath, or None when it is not permitted (or
        the permitted folder cannot be opened). Without `grants` only the roots and
        `allowed_paths` count (for changes, and for what readkeeper reads on its own)."""
        permitting = self._permitting(real_path, session, grants=grants)
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
        problem = self.unavailable(candidate)
        if problem is not None:
            raise problem
        if not os.path.lexists(candidate):
            variant = screenshot_variant(candidate)
            if variant is not None and os.path.lexists(variant):
                candidate = variant
            else:
                raise self.not_found(candidate)
        real = real_path(candidate)
        if not os.path.lexists(real):
            raise ReadkeeperError(
                "not_found",
                f"{candidate} is a symbolic link to {real}, which does not exist. "
                "Read the link's target by another path, or fix the link.",
                file_path=candidate,
                suggestions=[],
            )
        where = self.locate(real, session)
        if where is None:
            shown = candidate if real == candidate else f"{candidate} (real path {real})"
            raise ReadkeeperError(
                "outside_workspace",
                f"{shown} is outside the workspace roots ({', '.join(self.roots) or 'none'}). "
                "Ask the user to allow it (setting readkeeper.allowed_paths), "
                "or read a file inside the workspace.",
                file_path=candidate,
                real_path=real,
                roots=list(self.roots),
            )
        if names_a_folder(file_path) and not os.path.isdir(real):
            # "a.txt/" names a folder; the system refuses it, and so does readkeeper.
            raise ReadkeeperError(
                "not_found",
                f"{file_path} ends in a slash (or a dot), which names a folder, but "
                f"{candidate} is not a folder. To read the file, give its path as {candidate}.",
                file_path=candidate,
                suggestions=[candidate],
            )
        return where

    def not_found(self, path: str) -> ReadkeeperError:
        """The `not_found` error for `path`, with did-you-mean suggestions from the roots."""
        suggestions = suggest(path, self.roots)
        where = f" The workspace root is {quoting.name(self.roots[0])}." if self.roots else ""
        hint = (
            f" Did you mean {suggestions[0]}?"
            if suggestions
            else f" List the folder ({call('list', path=os.path.dirname(path))}) or find the "
            f"file by name ({call('glob', pattern='**/' + os.path.basename(path))})."
        )
        return ReadkeeperError(
            "not_found",
            f"File does not exist: {path}.{where}{hint}",
            file_path=path,
            suggestions=suggestions,
        )


def names_a_folder(path: str) -> bool:
    """Whether `path` as given names a folder by its form (a trailing slash, or `.` or `..`
    last), which making it absolute loses: then `new/` would be written as a file `new`."""
    return path.endswith(("/", os.sep)) or os.path.basename(path) in (".", "..")


def real_path(path: str) -> str:
    """`os.path.realpath`, which fails (EINVAL) when a symlink on the way is replaced
    while it looks: looked at again, and if it keeps changing, a `stale` error."""
    for _ in range(_REALPATH_TRIES):
        try:
            return os.path.realpath(path)
        except OSError:
            continue
    raise moved(path)


def uri_path(uri: str) -> str | None:
    """The real path a `file:` URI names, the key the core uses for files: parsed and
    percent-decoded (to bytes, then the filesystem encoding, so any name round-trips),
    with the `localhost` authority accepted and symlinks resolved. None for other
    schemes (untitled:, a remote host)."""
    try:
        parts = urlsplit(uri)
    except ValueError:
        return None
    if parts.scheme.lower() != "file" or parts.netloc.lower() not in ("", "localhost"):
        return None
    path = os.fsdecode(unquote_to_bytes(parts.path))
    if not path.startswith("/") or "\x00" in path:
        return None
    return os.path.realpath(path)


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
    With nothing close, no guess."""
    from rapidfuzz import fuzz, process, utils  # deferred: only needed on a miss

    if not roots:
        return []
    name = os.path.basename(path)
    found: list[str] = []

    # "/pkg/mod.py" typed for "<root>/pkg/mod.py": the workspace prefix left out.
    relative = path.lstrip(os.sep)
    found.extend(os.path.join(root, relative) for root in roots if relative)

    files = list(files_beneath(roots, _MAX_SUGGESTION_WALK, skip=_SKIP_DIRS))
    same_name = [f for f in files if os.path.basename(f) == name]
    found.extend(sorted(same_name, key=lambda f: (-_shared_prefix(f, path), len(f))))

    parent = os.path.dirname(path)
    while parent and not os.path.isdir(parent) and parent != os.path.dirname(parent):
        parent = os.path.dirname(parent)
    inside = bool(parent) and any(is_within(os.path.realpath(parent), r) for r in roots)
    try:
        siblings = os.listdir(parent) if inside else []
    except OSError:
        siblings = []
    if siblings:
        for match, _score, _ in process.extract(
            name,
            siblings,
            scorer=fuzz.WRatio,
            processor=utils.default_process,
            limit=limit * 2,  # folders among them are dropped below
            score_cutoff=60,
        ):
            found.append(os.path.join(parent, match))

    root = next((r for r in roots if is_within(path, r)), roots[0])
    wanted = os.path.relpath(path, root)
    by_relative = {os.path.relpath(f, root): f for f in files if is_within(f, root)}
    for match, _score, _ in process.extract(
        wanted,
        list(by_relative),
        scorer=fuzz.WRatio,
        processor=utils.default_process,
        limit=limit,
        score_cutoff=70,
    ):
        found.append(by_relative[match])

    unique = dict.fromkeys(p for p in found if p != path)
    return [p for p in unique if _readable_file(p, roots)][:limit]


def _shared_prefix(a: str, b: str) -> int:
    """How many leading path components `a` and `b` share (nearer files share more)."""
    count = 0
    for x, y in zip(a.split(os.sep), b.split(os.sep), strict=False):
        if x != y:
            break
        count += 1
    return count


def _readable_file(path: str, roots: list[str]) -> bool:
    """A regular file whose real path is inside a root: a suggestion that can be read."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
    except (OSError, ValueError):
        return False
    real = os.path.realpath(path)
    return any(is_within(real, root) for root in roots)


def refused_root(path: str, may_be_home: bool) -> str | None:
    """Why `path` (a real path) may not be a workspace root, or None: not the filesystem
    root nor a folder holding the home folder (all the user's files), and the home folder
    only when a person chose it (opened it, or named it with `--root`)."""
    home = os.path.realpath(os.path.expanduser("~"))
    if os.path.dirname(path) == path:
        return "it is the filesystem root"
    if path == home:
        return None if may_be_home else "it is your home folder"
    if is_within(home, path):
        return "it contains your home folder"
    return None
