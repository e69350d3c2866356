"""Paths a caller leaves out of a listing or search (`exclude` of glob and list, the
drop-in's `excludePatterns`), in gitignore's syntax: a bare name at any depth, a folder
with all it holds.

They are applied where the walk decides what it keeps, before any cap or cut counts
an entry (listing.py): a cap then counts what is shown, and a folder left out is never
entered. Applied after a cut, a thousand excluded entries filled the page and the
answer said "No matches found" of a tree that held matches.
"""

from __future__ import annotations

from collections.abc import Sequence

from pathspec import GitIgnoreSpec

from ..errors import ReadkeeperError, library_words
from ..files.globcost import refuse_costly
from ..files.ignore import SPEC_ERRORS

MAX_PATTERNS = 256
MAX_PATTERN_CHARS = 4096  # a path is at most PATH_MAX


class Exclude:
    """`patterns`, checked (`bad_params` naming `field`) and compiled once."""

    def __init__(self, patterns: Sequence[str] | None, field: str = "exclude") -> None:
        patterns = list(patterns or [])
        if not all(isinstance(p, str) for p in patterns) or len(patterns) > MAX_PATTERNS:
            raise ReadkeeperError(
                "bad_params",
                f"{field} must be a list of at most {MAX_PATTERNS} glob patterns.",
                field=field,
            )
        for pattern in patterns:
            if len(pattern) > MAX_PATTERN_CHARS or "\x00" in pattern:
                raise ReadkeeperError(
                    "bad_params",
                    f"An entry of {field} is not a glob (longer than {MAX_PATTERN_CHARS} "
                    "characters, or holding NUL); give one such as node_modules or *.log.",
                    field=field,
                )
            refuse_costly(pattern, field)
        try:
            self._spec = GitIgnoreSpec.from_lines(patterns) if patterns else None
        except SPEC_ERRORS as exc:
            raise ReadkeeperError(
                "bad_params",
                f"An entry of {field} is not a valid glob: {library_words(exc)}.",
                field=field,
            ) from None
        self.patterns = patterns

    def __bool__(self) -> bool:
        return self._spec is not None

    def excludes(self, relative: str, is_dir: bool = False) -> bool:
        """Whether `relative` (a path relative to the folder searched) is left out; a
        folder's patterns ("build/") match a folder only."""
        if self._spec is None:
            return False
        return bool(self._spec.match_file(relative + "/" if is_dir else relative))
