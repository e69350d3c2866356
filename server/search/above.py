"""What the ignore files above a subfolder hide, judged as git judges it, for ripgrep run
in that subfolder.

ripgrep run in a subfolder reads its parents' ignore files but applies their patterns
with a slash unlike git and unlike ripgrep run in the root (ripgrep issues 1757, 2770,
2778): a root `.gitignore` holding `config/secrets/*.pem` hides the key from a search
of the whole tree and not from one of `config`. Running it in the root with the folder
as its argument does no better. So when a pattern above the folder is not a plain name
(kept.py `plain_above`), ripgrep runs there with the parents' ignore files left out
(`--no-ignore-parent`: it applies only those of the folder and beneath, which it gets
right) when the project's rules hold every pattern of the parents' files
(`_read_above`: else it keeps them too, and the rules only take away), and every path
it prints is judged again by the project's own rules over the whole chain from the root
(files/ignore.py, pathspec's GitIgnoreSpec, tested against `git check-ignore`), the
nearest ignore file first: what they hide is dropped, and what a parent's negation
brings back (`!sub/keep/x.log`, which ripgrep in `sub` missed) is there to be judged.

A folder that is itself ignored, searched by name, is left to ripgrep: its files are
shown, as ripgrep shows them (the caller asked for that folder); unless a negation above
re-includes it or a folder above it, where pathspec and git part ("*" then "!*/":
pathspec keeps the folder ignored), for then ripgrep's answer there would show what a
parent's pattern hides: the rules judge it, hiding more than git, never less. A file
named by path is left to ripgrep too (read would read it).

The same judge serves a search of any folder, the root included, where an ignore file
on the way is one ripgrep reads otherwise than git (search/stalls.py `judged`: a
byte-order mark, a NUL, a POSIX class, a byte that is not UTF-8, for which ripgrep drops
the whole file): the paths beneath that file's folder are judged by the rules, which
read it as git does (files/ignore.py `git_lines`); ripgrep's answer elsewhere stands.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from pathspec import GitIgnoreSpec

from ..files.fileio import read_small
from ..files.globcost import affordable
from ..files.ignore import MAX_PATTERNS, SPEC_ERRORS, VCS_FOLDERS, IgnoreRules, git_lines
from .kept import IGNORE_NAMES, plain_above

# Verdicts on folders kept per search; past this many, the cache starts again.
_MAX_FOLDERS = 100_000
# The most of a parent's ignore file the rules are trusted to hold whole.
_WHOLE_BYTES = 256 * 1024


class _Rules(IgnoreRules):
    """ripgrep's ignore files with no `watch_exclude`: `.gitignore` and the repository's
    `info/exclude` only inside a repository, as ripgrep reads them."""

    PATTERNS_MOST = 4_096  # each call's own rules (files/rgignore.py)
    CHECKS_MOST = 100_000

    def __init__(self, root: str, names: tuple[str, ...]) -> None:
        super().__init__(root, exclude=())
        self.IGNORE_FILES = names

    def hides(self, path: str, folders: dict[str, bool], base: str) -> bool:
        """Whether `path` (a file beneath `base`) or a folder between them is ignored."""
        parent = os.path.dirname(path)
        if parent != base and self._hidden_folder(parent, folders, base):
            return True
        return self._matches(path, False, parent)

    def _hidden_folder(self, folder: str, folders: dict[str, bool], base: str) -> bool:
        # From the nearest known folder down, without recursion (chains can be deep).
        chain = []
        while folder not in folders and folder != base:
            chain.append(folder)
            folder = os.path.dirname(folder)
        verdict = folders.get(folder, False)
        for folder in reversed(chain):
            verdict = verdict or (
                os.path.basename(folder) not in VCS_FOLDERS
                and self._matches(folder, True, os.path.dirname(folder))
            )
            if len(folders) >= _MAX_FOLDERS:
                folders.clear()
            folders[folder] = verdict
        return verdict


class Above:
    """The judge of paths ripgrep printed, run in `base` beneath `root`."""

    def __init__(self, rules: _Rules, base: str, whole: bool, only: tuple[str, ...] = ()) -> None:
        self._rules = rules
        self._whole = whole
        self._base = base
        self._prefix = base + os.sep
        self._folders: dict[str, bool] = {}
        self._only = tuple(folder + "/" for folder in only)  # else every path is judged

    @classmethod
    def of(cls, root: str, base: str, judged: Sequence[str] = ()) -> Above | None:
        """The judge for a search run in `base`, or None when ripgrep's own answer there
        needs none: the root itself, only plain names above, or `base` ignored; and
        none of `judged` (stalls.Avoided: folders beneath `base` where an ignore file
        reads apart, "" for `base` itself or one above it)."""
        judge = cls._of(root, base)
        if judge is not None or not judged or not base.startswith(root):
            return judge
        rules = _Rules(root, _names(base))
        if base != root and rules.ignored(base, True):
            return None  # searched by name: its files are shown (below)
        only = () if "" in judged else tuple(judged)
        return cls(rules, base, whole=False, only=only)

    @classmethod
    def _of(cls, root: str, base: str) -> Above | None:
        if base == root or not base.startswith(root + os.sep):
            return None
        if plain_above(os.fsencode(root), os.fsencode(base)):
            return None
        rules = _Rules(root, _names(base))
        whole, negated = _read_above(os.fsencode(root), os.fsencode(base))
        # A folder the rules ignore, searched by name, shows its files as ripgrep run in
        # it does; unless a negation above re-includes it or a folder above it ("*" then
        # "!*/": pathspec keeps the folder ignored, git does not), for then ripgrep's own
        # answer shows what a parent's pattern hides: the rules judge it.
        if rules.ignored(base, True) and not negated:
            return None
        return cls(rules, base, whole)

    def flags(self) -> list[str]:
        """ripgrep's flags for a run in the folder: the parents' files are judged here
        alone when the rules hold them whole."""
        return ["--no-ignore-parent"] if self._whole else []

    def note(self) -> str | None:
        """What a search says when its judge stopped applying the rules (past a call's
        budget: `IgnoreRules.CHECKS_MOST`), else None."""
        if not self._rules.exhausted:
            return None
        return (
            "Some files may be shown that ignore files above the searched folder hide: they "
            "lie in more folders than one call looks at."
        )

    def hides(self, relative: str) -> bool:
        """Whether the ignore rules hide the file `relative` (as ripgrep printed it)."""
        relative = relative.removeprefix("./")
        if self._only and not relative.startswith(self._only):
            return False  # ripgrep reads every ignore file on its way as git does
        path = self._prefix + relative
        return self._rules.hides(path, self._folders, self._base)

    def hides_bytes(self, relative: bytes) -> bool:
        """`hides` of a path as ripgrep printed it, in bytes."""
        return self.hides(os.fsdecode(relative))

    def keep(self, names: list[bytes]) -> list[bytes]:
        """Those of `names` (paths as ripgrep printed them) not hidden."""
        return [name for name in names if not self.hides_bytes(name)]


def _names(base: str) -> tuple[str, ...]:
    """The ignore files ripgrep reads for a search of `base`."""
    names: tuple[str, ...] = (".ignore", ".rgignore")
    return (".gitignore", *names) if _in_repository(base) else names


def _in_repository(folder: str) -> bool:
    """Whether `folder` or a folder above it holds `.git`: ripgrep honours `.gitignore`
    there only."""
    while True:
        if os.path.lexists(os.path.join(folder, ".git")):
            return True
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent


def _read_above(root: bytes, base: bytes) -> tuple[bool, bool]:
    """Of the ignore files above `base`: whether the rules hold every pattern of them
    (each a regular file of a bounded size, every line one they parse and afford:
    files/ignore.py skips a costly one and those past `MAX_PATTERNS`; no `.git` file, a
    worktree's exclude file they do not read; else ripgrep keeps applying them as well),
    and whether one holds a negation ("!") that matches `base` or a folder between it
    and that file's folder (or could: a file not read)."""
    negated = False
    lines_read = 0
    above = os.path.dirname(base)
    while above == root or above.startswith(root + b"/"):
        dot_git = os.path.join(above, b".git")
        if os.path.isfile(dot_git):
            return False, True  # unread: a negation may be there
        paths = [os.path.join(above, name) for name in sorted(IGNORE_NAMES)]
        for path in [*paths, os.path.join(dot_git, b"info", b"exclude")]:
            try:
                text = read_small(path, _WHOLE_BYTES + 1)
            except FileNotFoundError:
                continue
            except OSError:
                return False, True
            lines = git_lines(text)
            lines_read += len(lines)
            # Each compiled twice here: half of what the call's rules compile (round 47:
            # 100 folders of 1,000 patterns took 14 s here); past it ripgrep reads them.
            if lines_read > _Rules.PATTERNS_MOST // 2:
                return False, True
            negated = negated or _reincludes(lines, above, base)
            if len(text) > _WHOLE_BYTES or len(lines) > MAX_PATTERNS:
                return False, True
            if not all(map(affordable, lines)):
                return False, negated
            try:
                GitIgnoreSpec.from_lines(lines)
            except SPEC_ERRORS:
                return False, negated
        if above == root:
            break
        above = os.path.dirname(above)
    return True, negated


def _reincludes(lines: list[str], folder: bytes, base: bytes) -> bool:
    """Whether a negation among `lines` (an ignore file of `folder`) matches `base` or a
    folder between the two, as a folder."""
    negations = [line[1:] for line in lines if line.startswith("!") and affordable(line)]
    if not negations:
        return False
    try:
        spec = GitIgnoreSpec.from_lines(negations)
    except SPEC_ERRORS:
        return True
    parts = os.fsdecode(os.path.relpath(base, folder)).split(os.sep)
    folders = ("/".join(parts[:depth]) + "/" for depth in range(1, len(parts) + 1))
    return any(map(spec.match_file, folders))
