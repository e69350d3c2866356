"""A user's glob, matched as ripgrep's `--glob` would match it but without its power to
override ignore rules: ripgrep lets a `--glob` un-ignore what `.gitignore` hides (and
even a VCS folder's insides), so readkeeper lists what the ignore rules allow first and
applies the glob to those paths itself.

The syntax is gitignore's (pathspec's GitIgnoreSpec): a pattern without "/" matches a
name at any depth ("*.py"), one with "/" is anchored to the folder searched
("src/**/*.ts"), "**" spans folders. Braces, which agents write and gitignore lacks,
are expanded first as a shell does ("**/*.{ts,tsx}" is "**/*.ts" or "**/*.tsx"; a brace
with no comma or no close, or escaped, is a literal one), into at most MAX_ALTERNATIVES
patterns, each held to the cost rule.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from itertools import pairwise
from typing import Any

from pathspec import GitIgnoreSpec

from ..errors import ReadkeeperError, library_words
from ..files.globcost import refuse_costly
from ..files.ignore import SPEC_ERRORS
from .exclude import Exclude
from .refused import glob_error

MAX_ALTERNATIVES = 64  # patterns one glob's braces may expand into
MAX_GLOB_CHARS = 4096  # a glob's length at most: a path is at most PATH_MAX


def alternatives(pattern: str, field: str) -> list[str]:
    """The patterns `pattern`'s brace groups expand into, in order, each once; refused
    (`bad_params` naming `field`) past MAX_ALTERNATIVES."""
    done: dict[str, None] = {}
    pending = [pattern]
    while pending:
        current = pending.pop(0)
        group = _first_group(current)
        if group is None:
            done[current] = None
            continue
        start, commas, end = group
        # Counted before any is made: a group of 100,000 commas is never copied out.
        if len(done) + len(pending) + len(commas) + 1 > MAX_ALTERNATIVES:
            raise ReadkeeperError(
                "bad_params",
                f"The glob {_short(pattern)} expands to more than {MAX_ALTERNATIVES} patterns; "
                "give fewer alternatives in braces, or run several globs.",
                field=field,
            )
        cuts = [start, *commas, end]
        head, tail = current[:start], current[end + 1 :]
        pending += [head + current[a + 1 : b] + tail for a, b in pairwise(cuts)]
    return list(done)


def _first_group(pattern: str) -> tuple[int, list[int], int] | None:
    """The first brace group with a comma at its own level: where it opens, its commas,
    where it closes; None when there is none (an escaped brace never counts)."""
    opened: list[tuple[int, list[int]]] = []
    inner = None  # a group inside braces with no comma of their own ("x{a{b,c}}")
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if char == "{":
            opened.append((index, []))
        elif char == "," and opened:
            opened[-1][1].append(index)
        elif char == "}" and opened:
            start, commas = opened.pop()
            if commas and not opened:
                return start, commas, index
            if commas and inner is None:
                inner = (start, commas, index)  # expanded now only if no outer group is
        index += 1
    return inner


class Glob:
    """One pattern, compiled once."""

    def __init__(
        self, pattern: str, field: str = "pattern", exclude: Exclude | None = None
    ) -> None:
        if len(pattern) > MAX_GLOB_CHARS:
            raise ReadkeeperError(
                "bad_params",
                f"The glob {_short(pattern)} is {len(pattern):,} characters; at most "
                f"{MAX_GLOB_CHARS:,}. Give a shorter one.",
                field=field,
            )
        self.patterns = alternatives(pattern, field) if "\x00" not in pattern else [pattern]
        for each in self.patterns:
            if not each.strip() or "\x00" in each or each.lstrip().startswith("!"):
                raise ReadkeeperError(
                    "bad_params",
                    f"{pattern!r} is not a glob to look for; give one such as **/*.py or "
                    "src/**/*.{ts,tsx}.",
                    field=field,
                )
            refuse_costly(each, field)
        try:
            self._spec = GitIgnoreSpec.from_lines(self.patterns)
        except SPEC_ERRORS as exc:
            raise ReadkeeperError(
                "bad_params",
                f"The glob {_short(pattern)} is not valid: {library_words(exc)}.",
                field=field,
            ) from None
        self.pattern, self.field = pattern, field
        # Each pattern's regular expression, matched directly: pathspec's matching of a
        # spec costs several times more per path, and a glob meets every file.
        found = [getattr(each, "regex", None) for each in self._spec.patterns]
        regexes = [regex for regex in found if regex is not None]
        whole = bool(regexes) and len(regexes) == len(found)
        self._match: Callable[[str], object | None] = self._spec_match
        if whole:
            self._match = _any([regex.match for regex in regexes])
        # The same expressions over ripgrep's raw bytes, where they mean the same: ASCII
        # patterns with no one-character wildcard ("?", "[...]" would match one byte of
        # a multi-byte name there, not one character). Matched in C, with no decoding
        # of each of 100,000s of paths.
        self._match_bytes: Callable[[bytes], object | None] | None = None
        if whole and pattern.isascii() and not set("?[") & set(pattern):
            self._match_bytes = _any(
                [re.compile(r.pattern.encode(), r.flags & ~re.UNICODE).match for r in regexes]
            )
        # A name-only pattern is also ripgrep's file type filter, which keeps to the
        # ignore rules: a narrow search then reads only the files it names.
        # (A ":" would be read as ripgrep's own type syntax, "include:x", or refused: such
        # a pattern is matched here instead.)
        # "**/x" is "x" at any depth: a name-only pattern too. Braces left (a literal
        # one), classes and escapes are where ripgrep's glob syntax parts from
        # gitignore's ("[" is an error there): such a pattern is matched here only.
        self._names = [each.removeprefix("**/") for each in self.patterns]
        self.name_only = all(map(_name_only, self._names))
        # Whether ripgrep's type filter alone selects the matches: not when paths are
        # excluded, which only this matcher knows.
        self.rg_selects = self.name_only
        if exclude:
            self._leave_out(exclude)

    def _leave_out(self, exclude: Exclude) -> None:
        """Match no path `exclude` leaves out: every way of matching (str or bytes)
        asks it, so the walk drops such a path before any cap counts it."""
        self.rg_selects = False
        inner = self._match
        self._match = lambda path: None if exclude.excludes(path) else inner(path)
        inner_bytes = self._match_bytes
        if inner_bytes is not None:
            self._match_bytes = lambda path: (
                None if exclude.excludes(os.fsdecode(path)) else inner_bytes(path)
            )

    def matches(self, relative: str) -> bool:
        """Whether `relative` (a path relative to the folder searched) matches."""
        return self._match(relative) is not None

    def select(self, relatives: list[bytes]) -> list[bytes]:
        """Those of `relatives` (paths as ripgrep printed them) that match."""
        if self._match_bytes is not None:
            return list(filter(self._match_bytes, relatives))
        return [path for path in relatives if self._match(os.fsdecode(path)) is not None]

    def match_bytes(self) -> Callable[[bytes], object]:
        """Whether a path as ripgrep printed it matches (a match object or None)."""
        if self._match_bytes is not None:
            return self._match_bytes
        match = self._match
        return lambda path: match(os.fsdecode(path))

    def rg_filter(self) -> list[str]:
        """ripgrep's flags that select the files a name-only pattern names (its file
        type filter, which keeps to the ignore rules); none for other patterns."""
        if not self.name_only:
            return []
        return [*(f"--type-add=wanted:{name}" for name in self._names), "--type=wanted"]

    def refused(self, stderr: str) -> ReadkeeperError:
        """`bad_params` on this glob's field, ripgrep's words `stderr` (rg.run's
        `refused`: it could not take the glob as its filter)."""
        return glob_error(self.pattern, self.field, stderr)

    def _spec_match(self, relative: str) -> object | None:
        return True if self._spec.match_file(relative) else None


def _name_only(name: str) -> bool:
    # ":" parts a type's name from its glob in ripgrep's definition ("a:b" is refused).
    plain = bool(name) and not set("{}[]\\:") & set(name)
    return plain and "/" not in name.rstrip("/")


def _any(matches: list[Callable[[Any], object | None]]) -> Callable[[Any], object | None]:
    """A match by any of `matches` (the one itself when alone: a call saved a path)."""
    if len(matches) == 1:
        return matches[0]

    def matched(path: Any) -> object | None:
        for match in matches:
            found = match(path)
            if found is not None:
                return found
        return None

    return matched


def _short(pattern: str) -> str:
    """`pattern` as a message quotes it: its first 200 characters, the cut marked."""
    if len(pattern) <= 200:
        return repr(pattern)
    return f"{pattern[:200]!r} … [{len(pattern) - 200:,} characters cut]"
