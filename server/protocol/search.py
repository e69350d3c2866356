"""The contract's types for finding things: `readkeeper/grep`, `readkeeper/glob` and
`readkeeper/list` params (their results are sent as built, JSON objects already)."""

from __future__ import annotations

from typing import Literal

import attrs

from .contract import Contract

GrepOutput = Literal["matches", "files", "counts"]


@attrs.frozen(repr=False, eq=False)
class GrepParams(Contract):
    """`readkeeper/grep`: a regular expression searched through the workspace, a folder
    or a file; the lines shown count as seen (read-state)."""

    pattern: str
    path: str | None = None  # a folder or file; the first root when absent
    glob: str | None = None  # only files whose path matches, e.g. "*.py", "src/**/*.ts"
    context: int = 0  # lines shown before and after each match
    case_sensitive: bool = True
    multiline: bool = False  # the pattern may match across lines ("." matches newlines)
    output: GrepOutput = "matches"
    max_matches: int | None = None  # matches (or files) shown; the default when absent
    offset: int = 0  # matches (or files) skipped: what `next` names to see the rest
    session: str = ""


@attrs.frozen(repr=False, eq=False)
class GlobParams(Contract):
    """`readkeeper/glob`: files whose path matches a glob, most recently modified first."""

    pattern: str
    path: str | None = None
    offset: int = 0
    # Paths left out (gitignore's syntax) before the page is cut: the cap counts the rest.
    exclude: list[str] | None = None
    session: str = ""


@attrs.frozen(repr=False, eq=False)
class ListParams(Contract):
    """`readkeeper/list`: a folder's entries, with kinds and sizes, to a depth."""

    path: str | None = None
    depth: int = 1
    offset: int = 0
    # Entries left out (gitignore's syntax; a folder is not entered) before the cap.
    exclude: list[str] | None = None
    session: str = ""
