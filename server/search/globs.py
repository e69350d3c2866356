"""A user's glob, matched as ripgrep's `--glob` would match it but without its power to
override ignore rules: ripgrep lets a `--glob` un-ignore what `.gitignore` hides (and
even a VCS folder's insides), so readkeeper lists what the ignore rules allow first and
applies the glob to those paths itself.

The syntax is gitignore's (pathspec's GitIgnoreSpec): a pattern without "/" matches a
name at any depth ("*.py"), one with "/" is anchored to the folder searched
("src/**/*.ts"), "**" spans folders.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from pathspec import GitIgnoreSpec

from ..errors import ReadkeeperError
from ..files.globcost import refuse_costly


class Glob:
    """One pattern, compiled once."""

    def __init__(self, pattern: str, field: str = "pattern") -> None:
        if not pattern.strip() or "\x00" in pattern or pattern.lstrip().startswith("!"):
            raise ReadkeeperError(
                "bad_params",
                f"{pattern!r} is not a glob to look for; give one such as **/*.py or "
                "src/**/test_*.ts.",
                field=field,
            )
        refuse_costly(pattern, field)
        try:
            self._spec = GitIgnoreSpec.from_lines([pattern])
        except ValueError as exc:
            raise ReadkeeperError(
                "bad_params", f"The glob {pattern!r} is not valid: {exc}.", field=field
            ) from None
        self.pattern = pattern
        # The one pattern's regular expression, matched directly: pathspec's matching
        # of a spec costs several times more per path, and a glob meets every file.
        regex = getattr(self._spec.patterns[0], "regex", None) if self._spec.patterns else None
        self._match = regex.match if regex is not None else self._spec_match
        # The same expression over ripgrep's raw bytes, where it means the same: an
        # ASCII pattern with no one-character wildcard ("?", "[...]" would match one
        # byte of a multi-byte name there, not one character). Matched in C, with no
        # decoding of each of 100,000s of paths.
        self._match_bytes = None
        if regex is not None and pattern.isascii() and not set("?[") & set(pattern):
            self._match_bytes = re.compile(regex.pattern.encode(), regex.flags & ~re.UNICODE).match
        # A name-only pattern is also ripgrep's file type filter, which keeps to the
        # ignore rules: a narrow search then reads only the files it names.
        # ("include:" would be read as ripgrep's own type syntax: matched here instead.)
        # "**/x" is "x" at any depth: a name-only pattern too.
        # Braces, classes and escapes are where ripgrep's glob syntax parts from
        # gitignore's ("*.{py,md}" is one literal name here, two in ripgrep; "[" an
        # error there): such a pattern is matched here only, one syntax for every path.
        name = pattern.removeprefix("**/")
        plain = not set("{}[]\\") & set(name)
        self.name_only = plain and "/" not in name.rstrip("/") and not name.startswith("include:")
        self._name = name

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
        return [f"--type-add=wanted:{self._name}", "--type=wanted"]

    def _spec_match(self, relative: str) -> object | None:
        return True if self._spec.match_file(relative) else None
