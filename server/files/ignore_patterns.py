"""A folder's gitignore patterns compiled (pathspec's GitIgnoreSpec) and matched: one
regular expression of them all tried first, git's POSIX classes written as ranges, a
pattern that does not parse or costs too much to match skipped as git skips it, and a
file's first `MAX_PATTERNS` honoured (files/ignore.py reads the files)."""

from __future__ import annotations

import re

from pathspec import GitIgnoreSpec
from pathspec.util import NORMALIZE_PATH_SEPS, normalize_file

from .globcost import affordable

# The patterns honoured per file (real ones hold tens to hundreds).
MAX_PATTERNS = 2_000


class Patterns:
    """A folder's ignore patterns. Most paths match none of them: one regular expression
    of them all (in C) says so, where pathspec tries each pattern in turn in Python (the
    cost of `list`, whose every entry is checked against each folder above it)."""

    def __init__(self, spec: GitIgnoreSpec) -> None:
        self.spec = spec
        self._any = _union(spec)

    def verdict(self, relative: str) -> bool | None:
        """Whether the patterns ignore `relative` (False: a negation re-includes it), or
        None when none matches it: pathspec's own verdict."""
        text = relative
        if _OTHER_SEPARATORS or relative.startswith(("/", "./")):
            text = normalize_file(relative)  # else it is the path unchanged
        if self._any is not None and self._any.search(text) is None:
            return None  # no pattern matches (pathspec searches each the same way)
        return self.spec.check_file(relative).include


# Separators pathspec turns into "/" before matching (none on POSIX).
_OTHER_SEPARATORS = bool(NORMALIZE_PATH_SEPS)
# A group name pathspec's regular expressions hold (the union may hold each only once);
# a pattern's own "(" and "?" are escaped, so this is never the pattern's text.
_NAMED_GROUP = re.compile(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>")


def _union(spec: GitIgnoreSpec) -> re.Pattern[str] | None:
    """One expression that matches where any pattern with a verdict matches, or None
    when they cannot be joined (then each is tried)."""
    regexes: list[re.Pattern[str]] = []
    for pattern in spec.patterns:
        regex = getattr(pattern, "regex", None)
        if pattern.include is None:
            continue
        if not isinstance(regex, re.Pattern) or not isinstance(regex.pattern, str):
            return None
        regexes.append(regex)
    flags = {regex.flags for regex in regexes}
    if len(flags) != 1:
        return None
    texts = [_NAMED_GROUP.sub("(?:", regex.pattern) for regex in regexes]
    # Anchored at the start each: the union is too, so it is tried at the start alone
    # (a search of "^a|^b" tries each position of the path).
    anchored = all(t.startswith("^") and not _bar_outside_groups(t) for t in texts)
    union = "|".join(f"(?:{t[1:] if anchored else t})" for t in texts)
    try:
        return re.compile(f"^(?:{union})" if anchored else union, flags.pop())
    except re.error:
        return None


def _bar_outside_groups(text: str) -> bool:
    """Whether the expression `text` is an alternation at its top level ("^a|b": its
    "^" anchors one branch only)."""
    depth = 0
    escaped = in_class = False
    for char in text:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            return True
    return False


# What pathspec raises for a pattern it cannot compile: its own GitWildMatchPatternError
# (a ValueError), or re.error from the expression it built (a class such as "[z-a]").
SPEC_ERRORS = (ValueError, re.error)


def compile_lines(lines: list[str]) -> GitIgnoreSpec:
    """The patterns as one spec; like Git, a pattern that does not parse is skipped, and
    so is one too costly to match (globcost.affordable); past `MAX_PATTERNS`, the rest."""
    kept = [_posix_classes(line) for line in lines if affordable(line)][:MAX_PATTERNS]
    try:
        return GitIgnoreSpec.from_lines(kept)
    except SPEC_ERRORS:
        valid = []
        for line in kept:
            try:
                GitIgnoreSpec.from_lines([line])
            except SPEC_ERRORS:
                continue
            valid.append(line)
        return GitIgnoreSpec.from_lines(valid)


# git's POSIX character classes (its wildmatch, ASCII as in the C locale) that pathspec
# lacks, as the ranges it has; a class not here is left as written (it matches what
# pathspec makes of it).
_POSIX = {
    "alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "digit": "0-9", "lower": "a-z",
    "upper": "A-Z", "xdigit": "0-9A-Fa-f", "blank": " \t", "space": " \t\n\r\v\f",
}  # fmt: skip
_CLASS_NAME = re.compile(r"\[:([a-z]+):\]")


def _posix_classes(line: str) -> str:
    """`line` with each POSIX class inside a bracket expression ("[[:digit:]]") written as
    the ranges it stands for ("[0-9]")."""
    if "[:" not in line:
        return line
    out: list[str] = []
    at, in_class = 0, False
    while at < len(line):
        char = line[at]
        named = _CLASS_NAME.match(line, at) if in_class else None
        if named is not None and named.group(1) in _POSIX:
            out.append(_POSIX[named.group(1)])
            at = named.end()
            continue
        if char == "\\":
            out.append(line[at : at + 2])
            at += 2
            continue
        if not in_class and char == "[":
            in_class = True
            out.append(char)
            if line[at + 1 : at + 2] in ("!", "^"):
                out.append(line[at + 1])
                at += 1
            if line[at + 1 : at + 2] == "]":  # a "]" first is one of the class
                out.append("]")
                at += 1
        else:
            in_class = in_class and char != "]"
            out.append(char)
        at += 1
    return "".join(out)
