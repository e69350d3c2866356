"""The one rule for every glob a user or a repository gives readkeeper (glob's and grep's
`pattern`/`glob`, the drop-in's `excludePatterns` and search pattern, .gitignore and
.ignore files, `watch_exclude`): a glob is matched only if matching it stays cheap.

Globs are matched by pathspec's regular expressions, which backtrack and run in C
holding the GIL, so one slow match stalls every thread of the server: `*a*a*a*a*a*b`
against a long name costs the name's length to the power of its stars (45 s for ten
stars and a 40-character name), and each `**` segment past the first multiplies the
ways a deep path can be split (`**/a/**/a/**/a/**/b`: 8 s on a 200-level path).
Each path segment's first `*` and a pattern's first `**` are free (they keep a match
linear); past those, a pattern may hold `MAX_EXTRA_STARS` in all, which keeps the worst
match of the longest path (PATH_MAX) to tens of milliseconds. Real globs keep to it
(`*.py`, `src/**/test_*.ts`, `*.min.*`, `**/node_modules/**`); a user's glob beyond it
is refused (`costly`), a repository's is skipped as if it did not parse (`affordable`).
"""

from __future__ import annotations

from ..errors import ReadkeeperError

MAX_EXTRA_STARS = 1


def affordable(pattern: str) -> bool:
    """Whether the pattern's stars past the first of each segment, and its `**`
    segments past the first, number at most MAX_EXTRA_STARS."""
    if pattern.count("*") <= 1 + MAX_EXTRA_STARS:
        return True  # the common case, without splitting
    parts = pattern.split("/")
    deep = sum(1 for part in parts if part == "**")
    extra = sum(max(part.count("*") - 1, 0) for part in parts if part != "**")
    return extra + max(deep - 1, 0) <= MAX_EXTRA_STARS


def refuse_costly(pattern: str, field: str) -> None:
    """Raise `bad_params` naming `field` when a user's glob is not `affordable`."""
    if not affordable(pattern):
        raise ReadkeeperError(
            "bad_params",
            f"The glob {pattern!r} holds too many wildcards to match in bounded time: at "
            "most one '*' per path segment and one '**' in all, plus one more of either. "
            "Give a simpler glob (e.g. *name*) and narrow the result with another call.",
            field=field,
        )
