"""What the watcher leaves alone: VCS folders, `watch_exclude`, and .gitignore files.

Patterns are gitignore patterns, matched by pathspec (`GitIgnoreSpec`, which follows
Git's own edge cases). A root's rules are, in order of precedence: the VCS folders
(.git, .hg, .svn, .jj: never watched), the `watch_exclude` setting, then the .gitignore
files, the nearest folder's first (with `.git/info/exclude` under a repository's own
.gitignore). As in Git, nothing inside an ignored folder can be un-ignored.

A file is read as git reads it (`git_lines`): a byte-order mark dropped, lines split at
line feeds only and cut at a NUL, bytes that are not UTF-8 kept as a path's own decode
(so a pattern naming such a file matches it), and POSIX classes (`[[:digit:]]`), which
pathspec lacks, written as ranges.

Each folder's .gitignore is read the first time a path under it is checked, and read
again when the watcher sees the file change (`forget_folder`). It is opened beneath the
root's open folder with no symlink followed at any component (beneath.py): a folder
swapped for a symlink since it was walked does not make the watcher read a file
outside the root, and a symlink is read as no file at all.

A .gitignore is repository data, and pathspec matches with Python regular expressions,
which run in C holding the GIL (the whole server waits) and backtrack: `*a*a*a*a*a*b`
against a long name costs the name's length to the power of its stars (45 s for ten
stars and a 40-character name), and 100,000 patterns cost seconds to compile and tens of
milliseconds per path. So a file's first `MAX_PATTERNS` patterns are honoured, and a
pattern that globcost.py's one rule for every glob finds too costly (too many stars or
`**` segments) is skipped as if it did not parse: a path it would have ignored is
watched, which costs a notice, never a wrong answer.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Iterable, Sequence
from contextlib import suppress
from typing import NamedTuple, cast

from ..settings import DEFAULT_WATCH_EXCLUDE
from .beneath import Anchor, lstat_in
from .fileio import read_small_in
from .ignore_patterns import MAX_PATTERNS as MAX_PATTERNS
from .ignore_patterns import SPEC_ERRORS as SPEC_ERRORS
from .ignore_patterns import Patterns as _Patterns
from .ignore_patterns import compile_lines as _compile

VCS_FOLDERS = frozenset({".git", ".hg", ".svn", ".jj"})
_MAX_IGNORE_FILE_BYTES = 1 << 20
# Verdicts are cached; past this many, the cache starts again.
_MAX_CACHED_PATHS = 100_000
# A kind of rules file (rgignore.py): its file names, and whether the exclude file too.
_Kind = tuple[tuple[str, ...], bool]
_UNKNOWN = object()  # a kind's patterns not read yet


class IgnoreRules:
    """One root's rules. Safe to share between threads: caches are plain dicts whose
    entries are only ever replaced or dropped whole."""

    # The files each folder's patterns come from (besides `.git/info/exclude`).
    IGNORE_FILES: tuple[str, ...] = (".gitignore",)
    # The most lines of folders' files these rules compile in all (the watcher's, kept
    # while it runs): pathspec compiles a pattern in 0.2-0.35 ms of Python, so 100 nested
    # folders of 1,000 patterns held a list 25-40 s and 300 MB (round 47). Past it a
    # folder's files are not honoured, as a pattern past MAX_PATTERNS is not: what they
    # would ignore is watched (a notice too many, never a wrong answer), or listed.
    PATTERNS_MOST = 50_000
    # The most folders' rules one call's rules look at for its paths in all (None: the
    # watcher's, whose folders go 128 deep at most): a path is judged by the rules of
    # every folder above it, so a chain 1,000 deep of tiny ignore files held a list 15 s
    # and 1,900 deep 66 s (round 48). Past it no more are applied, and `passed` says so.
    CHECKS_MOST: int | None = None

    def __init__(self, root: str, exclude: Iterable[str] = DEFAULT_WATCH_EXCLUDE) -> None:
        self.root = root.rstrip(os.sep) or os.sep
        self._prefix = self.root if self.root.endswith(os.sep) else self.root + os.sep
        patterns = list(exclude)
        self._exclude = _compile(patterns) if patterns else None
        # Patterns ending in "/" match folders only; a file is only checked against the
        # others (its folders are checked on their own), which is most of an event's cost.
        file_patterns = [p for p in patterns if not p.rstrip().endswith("/")]
        self._exclude_files = _compile(file_patterns) if file_patterns else None
        # Whether each pattern matches a path by one of its names, none re-including:
        # then only a path's last name is matched, its folders judged before it (an
        # excluded one is never looked beneath). Matched whole, a path 2,000 folders deep
        # took 750 us a path (the patterns' `(.+/)?` tried at each "/").
        self._exclude_by_name = all(_of_a_name(pattern) for pattern in patterns)
        self._specs: dict[str, _Patterns | None] = {}  # folder -> its .gitignore
        self._folders: dict[str, bool] = {}  # folder -> ignored
        self._chains: dict[str, _Link | None] = {}  # folder -> `_chain`
        self._files: dict[str, bool] = {}  # file -> ignored (bursts hit the same files)
        self._kinds: dict[tuple[str, tuple[str, ...], bool], _Patterns | None] = {}
        self._compiled = 0  # lines of the folders' files compiled (`_patterns`)
        self.passed = False  # whether a folder's files were not honoured (`PATTERNS_MOST`)
        self._checks = 0  # folders' rules looked at for paths (`CHECKS_MOST`)
        self.exhausted = False  # past `CHECKS_MOST`: no rules are looked at any more
        self._lock = threading.Lock()

    def covers(self, path: str) -> bool:
        """Whether `path` is the root or beneath it: these are the rules that apply to it."""
        return path == self.root or path.startswith(self._prefix)

    def ignored(self, path: str, is_dir: bool = False) -> bool:
        """Whether the watcher skips `path` (paths outside the root are skipped too)."""
        if path == self.root:
            return False
        if not path.startswith(self._prefix):
            return True
        parent = os.path.dirname(path)
        if parent != self.root and self._folder_ignored(parent):
            return True
        if is_dir:
            name = path[len(parent) + 1 :] if parent != os.sep else path[1:]
            return name in VCS_FOLDERS or self._matches(path, True, parent)
        verdict = self._files.get(path)
        if verdict is None:
            verdict = self._matches(path, False, parent)
            if len(self._files) >= _MAX_CACHED_PATHS:
                self._files = {}
            self._files[path] = verdict
        return verdict

    def forget_folder(self, folder: str) -> None:
        """A .gitignore in `folder` changed: read the rules again on next use (every
        folder's: those `PATTERNS_MOST` passed may fit now)."""
        with self._lock:
            self._specs = {}
            self._kinds = {}
            self._compiled, self.passed = 0, False
            self._chains = {}
            self._folders = {}
            self._files = {}

    # --- internals ----------------------------------------------------------------------

    def _folder_ignored(self, folder: str) -> bool:
        # Without recursion: a folder chain may be deeper than Python's recursion limit.
        # The uncached ancestors are judged from the top down, each after its parent.
        chain = []
        while folder not in self._folders:
            chain.append(folder)
            parent = os.path.dirname(folder)
            if parent == self.root or parent == folder:
                break
            folder = parent
        verdict = self._folders.get(folder, False)
        for folder in reversed(chain):
            verdict = (
                verdict
                or os.path.basename(folder) in VCS_FOLDERS
                or self._matches(folder, True, os.path.dirname(folder))
            )
            if len(self._folders) >= _MAX_CACHED_PATHS:
                self._folders = {}
            self._folders[folder] = verdict
        return verdict

    def _matches(self, path: str, is_dir: bool, parent: str) -> bool:
        tail = "/" if is_dir else ""
        exclude = self._exclude if is_dir else self._exclude_files
        if exclude is not None:
            start = len(parent.rstrip(os.sep)) + 1 if self._exclude_by_name else len(self._prefix)
            if exclude.match_file(path[start:] + tail):
                return True
        link, checks, verdict = self._chain(parent), 0, None
        while link is not None and verdict is None and not self.exhausted:
            verdict = link.spec.verdict(path[link.start :] + tail)
            link, checks = link.above, checks + 1
        self._checked(checks)
        return verdict is True

    def _checked(self, checks: int) -> None:
        """`checks` more folders' rules looked at for a path: past `CHECKS_MOST`, no
        more are (`exhausted`, and `passed` says so)."""
        if self.CHECKS_MOST is not None and checks:
            self._checks += checks
            if self._checks > self.CHECKS_MOST:
                self.exhausted = self.passed = True

    def _chain(self, folder: str) -> _Link | None:
        """The patterns of `folder` and of each folder above it up to the root, the
        nearest first, each with where a path beneath its folder starts relative to it
        (looked up once a folder: a listing checks each entry against them all). Each
        folder's is made from its parent's, which it shares: made whole, each walked up
        to the root, and the watch of a chain 2,000 folders deep took 5.5 s of CPU
        (found beside round 47)."""
        with suppress(KeyError):
            return self._chains[folder]
        pending = [folder]  # the folders without a chain, the nearest first
        chain: _Link | None = None
        while pending[-1] != self.root and len(pending[-1]) > len(self.root):
            parent = os.path.dirname(pending[-1])
            try:
                chain = self._chains[parent]
                break
            except KeyError:
                pending.append(parent)
        if len(self._chains) + len(pending) > _MAX_CACHED_PATHS:
            self._chains = {}
        for each in reversed(pending):
            spec = self._spec(each)
            if spec is not None:
                chain = _Link(len(each) + 1 if each != os.sep else 1, spec, chain)
            self._chains[each] = chain
        return chain

    def _spec(self, folder: str) -> _Patterns | None:
        try:
            return self._specs[folder]
        except KeyError:
            pass
        spec = self._patterns(self._read_rules(folder))
        with self._lock:
            self._specs[folder] = spec
        return spec

    def _kind_spec(self, folder: str, names: tuple[str, ...], exclude: bool) -> _Patterns | None:
        """The patterns of `folder`'s files `names` (and its repository's exclude file
        when `exclude`), kept apart from the others (a precedence by kind, rgignore.py)."""
        return self._kind_specs(folder, ((names, exclude),))[0]

    def _kind_specs(self, folder: str, kinds: Sequence[_Kind]) -> list[_Patterns | None]:
        """`_kind_spec` of each of `kinds`, the files of those not kept read in one
        opening of `folder` (each its own, a path of a thousand folders cost a thousand
        names looked up a kind, round 46)."""
        keys = [(folder, names, exclude) for names, exclude in kinds]
        kept = [self._kinds.get(key, _UNKNOWN) for key in keys]
        if not any(spec is _UNKNOWN for spec in kept):
            return cast("list[_Patterns | None]", kept)
        unknown = [kind for kind, spec in zip(kinds, kept, strict=True) if spec is _UNKNOWN]
        read = iter(self._read_kinds(folder, unknown))
        specs: list[_Patterns | None] = []
        made: dict[tuple[str, tuple[str, ...], bool], _Patterns | None] = {}
        for key, spec in zip(keys, kept, strict=True):
            if spec is _UNKNOWN:  # compiled outside the lock, as one kind was
                lines = next(read)
                spec = made[key] = self._patterns(lines)
            specs.append(cast("_Patterns | None", spec))
        with self._lock:
            if len(self._kinds) + len(made) > _MAX_CACHED_PATHS:
                self._kinds = {}
            self._kinds.update(made)
        return specs

    def _patterns(self, lines: list[str]) -> _Patterns | None:
        """A folder's file `lines` compiled, within what these rules compile in all
        (`PATTERNS_MOST`): past it none are, and `passed` says so."""
        if not lines:
            return None
        with self._lock:
            if self._compiled + len(lines) > self.PATTERNS_MOST:
                self.passed = True
                return None
            self._compiled += len(lines)
        return _Patterns(_compile(lines))

    def _read_rules(
        self, folder: str, names: tuple[str, ...] | None = None, exclude: bool = True
    ) -> list[str]:
        """The lines of `folder`'s ignore files (`names`, else IGNORE_FILES, after its
        repository's exclude file when `exclude`), each reached beneath the root."""
        return self._read_kinds(
            folder, ((self.IGNORE_FILES if names is None else names, exclude),)
        )[0]

    def _read_kinds(self, folder: str, kinds: Sequence[_Kind]) -> list[list[str]]:
        """`_read_rules` of each of `kinds`, `folder` opened once (beneath the root)."""
        nothing: list[list[str]] = [[] for _ in kinds]
        if folder != self.root and not folder.startswith(self._prefix):
            return nothing
        relative = folder[len(self._prefix) :] if folder != self.root else ""
        try:
            # Opened for each read, never held: a descriptor held open would keep a
            # deleted root's inode alive, and the watcher unaware that it is gone.
            anchor = Anchor.open(self.root)
            fd = anchor.open_folder(relative)
        except OSError:  # gone, or a symlink on the way (beneath.Moved)
            return nothing
        try:
            excluded: list[str] = []
            git = lstat_in(fd, ".git") if any(exclude for _, exclude in kinds) else None
            if git is not None and stat.S_ISDIR(git.st_mode):
                with suppress(OSError):
                    info = anchor.open_folder(os.path.join(relative, ".git", "info"))
                    try:
                        excluded = _read_lines(info, "exclude")
                    finally:
                        os.close(info)
            read = {name: _read_lines(fd, name) for names, _ in kinds for name in names}
        except OSError:
            return nothing
        finally:
            os.close(fd)
        return [
            (excluded if exclude else []) + [line for name in names for line in read[name]]
            for names, exclude in kinds
        ]


def _read_lines(folder_fd: int, name: str) -> list[str]:
    # A repository may ship a .gitignore that is a FIFO (an open would block the
    # watcher for good) or a symlink (git itself does not follow those either).
    try:
        data = read_small_in(folder_fd, name, _MAX_IGNORE_FILE_BYTES)
    except OSError:
        return []
    return git_lines(data)


def git_lines(data: bytes) -> list[str]:
    """An ignore file's lines as git reads them: a byte-order mark at the start dropped,
    split at line feeds only (a carriage return before one dropped), each line up to
    its first NUL, and bytes that are not UTF-8 decoded as a path's own are
    (`os.fsdecode`), so that a pattern naming such a name matches it."""
    lines = data.removeprefix(b"\xef\xbb\xbf").split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    cut = (line.split(b"\0", 1)[0].removesuffix(b"\r") for line in lines)
    return [line.decode("utf-8", "surrogateescape") for line in cut]


class _Link(NamedTuple):
    """A folder's patterns in a chain (`IgnoreRules._chain`): where a path beneath the
    folder starts relative to it, and the chain of the folders above it."""

    start: int
    spec: _Patterns
    above: _Link | None


def _of_a_name(pattern: str) -> bool:
    """Whether the gitignore `pattern` matches a path when it matches one of the path's
    names (no "/" but a last one, none at the start, no `**`) and ignores what it
    matches (no "!"); one with an escape is taken as not (a blank line or a comment
    matches nothing: it is one)."""
    text = pattern.strip()
    return not (
        text.startswith(("!", "/")) or "/" in text.rstrip("/") or "**" in text or "\\" in text
    )
