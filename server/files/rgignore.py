"""The ignore rules as ripgrep applies them (crates/ignore/src/dir.rs, `matched_ignore`),
for what readkeeper lists itself (`list`) to hide what grep and glob, which run ripgrep,
hide (tests/search/test_list_rg_rules.py compares it with `rg --files`).

ripgrep's precedence is by the kind of file first, then by folder: a path is judged by
the nearest `.rgignore` with a pattern matching it; else by the nearest such `.ignore`;
else `.gitignore`; else a repository's `info/exclude`. So a root `.rgignore` holding
`*.tmp` hides `sub/a.tmp` even when `sub/.gitignore` says `!a.tmp` (the watcher's rules,
ignore.py, merge a folder's files and take the nearest folder first, as git does with
its one kind). `.gitignore` and `info/exclude` apply only inside a repository (a `.git`
at or above the folder, up to `/`: ripgrep looks up to there), and none above the
nearest repository's own folder: a nested repository is judged by its own files only.

A `.git` file's exclude file (a worktree's) is not read here: the watcher's rules read
none either, and a pattern there shows an entry that grep and glob hide, never the
other way round.
"""

from __future__ import annotations

import os

from .ignore import IgnoreRules

# ripgrep's kinds, the strongest first: (file names, whether the exclude file too).
_KINDS: tuple[tuple[tuple[str, ...], bool], ...] = (
    ((".rgignore",), False),
    ((".ignore",), False),
    ((".gitignore",), False),
    ((), True),  # the repository's `info/exclude`
)
_GIT_KINDS = 2  # from this index on, the kinds that apply inside a repository only
_MAX_FOLDERS = 100_000  # repositories looked up per rules; past this, looked up again


class RipgrepRules(IgnoreRules):
    """One root's rules as ripgrep applies them, with no `watch_exclude`."""

    IGNORE_FILES = (".gitignore", ".ignore", ".rgignore")
    PATTERNS_MOST = 4_096  # each call's own rules: a second or so of compiling at most
    CHECKS_MOST = 100_000  # and of looking at folders' rules for its paths

    def __init__(self, root: str) -> None:
        super().__init__(root, exclude=())
        self._repositories: dict[str, str | None] = {}
        # folder -> the nearest folder at or above it holding rules of some kind (None:
        # none up to the root), so the folders to look in are found a jump each.
        self._ruled: dict[str, str | None] = {}

    def forget_folder(self, folder: str) -> None:
        """A rules file in `folder` changed: read it again, and which folders hold rules."""
        super().forget_folder(folder)
        self._ruled = {}

    def _matches(self, path: str, is_dir: bool, parent: str) -> bool:
        tail = "/" if is_dir else ""
        if self.exhausted:
            return False
        folders = self._folders_up(parent)
        repository = self._repository(parent)
        self._checked(len(folders) * len(_KINDS))
        for index, (names, exclude) in enumerate(_KINDS):
            for folder in folders:
                if index >= _GIT_KINDS and (repository is None or len(folder) < len(repository)):
                    break  # outside a repository, or above the nearest one's folder
                spec = self._kind_spec(folder, names, exclude)
                if spec is None:
                    continue
                start = len(folder) + 1 if folder != os.sep else 1
                verdict = spec.verdict(path[start:] + tail)
                if verdict is not None:
                    return verdict
        return False

    def _folders_up(self, folder: str) -> list[str]:
        """`folder` and each folder above it up to the root that holds rules of some kind,
        the nearest first. Which do is kept a folder, made from its parent's: an entry
        beneath a chain of 1,000 folders looked in all 1,000 (round 44: a list there,
        1.5 s), and now in those with rules only."""
        folders = []
        ruled = self._nearest_ruled(folder)
        while ruled is not None:
            folders.append(ruled)
            if ruled == self.root or len(ruled) <= len(self.root):
                break
            ruled = self._nearest_ruled(os.path.dirname(ruled))
        return folders

    def _nearest_ruled(self, folder: str) -> str | None:
        """The nearest folder at or above `folder` (up to the root) with rules of some
        kind, or None; the uncached ones judged from the top down, without recursion."""
        chain = []
        above = folder
        while above not in self._ruled:
            chain.append(above)
            if above == self.root or len(above) <= len(self.root):
                break
            above = os.path.dirname(above)
        found = self._ruled.get(above)
        if len(self._ruled) >= _MAX_FOLDERS:
            self._ruled = {}
        for each in reversed(chain):
            if any(spec is not None for spec in self._kind_specs(each, _KINDS)):
                found = each
            self._ruled[each] = found
        return found

    def _repository(self, folder: str) -> str | None:
        """The nearest folder at or above `folder` holding a `.git` (up to `/`, as
        ripgrep looks; stat only), or None."""
        chain = []
        above = folder
        while True:
            if above in self._repositories:
                found = self._repositories[above]
                break
            chain.append(above)
            if os.path.exists(os.path.join(above, ".git")):  # follows a link: ripgrep does
                found = above
                break
            parent = os.path.dirname(above)
            if parent == above:
                found = None
                break
            above = parent
        if len(self._repositories) >= _MAX_FOLDERS:
            self._repositories = {}
        self._repositories.update(dict.fromkeys(chain, found))
        return found
