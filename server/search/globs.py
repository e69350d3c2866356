"""A user's glob, matched as ripgrep's `--glob` would match it but without its power to
override ignore rules: ripgrep lets a `--glob` un-ignore what `.gitignore` hides (and
even a VCS folder's insides), so readkeeper lists what the ignore rules allow first and
applies the glob to those paths itself.

The syntax is gitignore's (pathspec's GitIgnoreSpec): a pattern without "/" matches a
name at any depth ("*.py"), one with "/" is anchored to the folder searched
("src/**/*.ts"), "**" spans folders.
"""

from __future__ import annotations

from pathspec import GitIgnoreSpec

from ..errors import ReadkeeperError


class Glob:
    """One pattern, compiled once."""

    def __init__(self, pattern: str) -> None:
        if not pattern.strip() or "\x00" in pattern or pattern.lstrip().startswith("!"):
            raise ReadkeeperError(
                "bad_params",
                f"{pattern!r} is not a glob to look for; give one such as **/*.py or "
                "src/**/test_*.ts.",
                field="pattern",
            )
        try:
            self._spec = GitIgnoreSpec.from_lines([pattern])
        except ValueError as exc:
            raise ReadkeeperError(
                "bad_params", f"The glob {pattern!r} is not valid: {exc}.", field="pattern"
            ) from None
        self.pattern = pattern
        # A name-only pattern is also ripgrep's file type filter, which keeps to the
        # ignore rules: a narrow search then reads only the files it names.
        self.name_only = "/" not in pattern.rstrip("/")

    def matches(self, relative: str) -> bool:
        """Whether `relative` (a path relative to the folder searched) matches."""
        return bool(self._spec.match_file(relative))
