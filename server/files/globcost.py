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

import os
import re

from ..errors import ReadkeeperError

MAX_EXTRA_STARS = 1
_ESCAPED = re.compile(r"\\.", re.DOTALL)


def affordable(pattern: str) -> bool:
    """Whether the pattern's stars past the first of each segment, and its `**`
    segments past the first, number at most MAX_EXTRA_STARS."""
    if pattern.count("*") <= 1 + MAX_EXTRA_STARS:
        return True  # the common case, without splitting
    # An escaped star is a name's own "*" (`literal`), matched as itself: no wildcard.
    parts = _ESCAPED.sub("", pattern).split("/")
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


# The characters a glob reads as more than themselves, gitignore's and the braces':
# each is matched as itself after a backslash ("\\[" is "[", "\\\\" a backslash).
_SPECIAL = frozenset("\\*?[]{}")


def literal(name: str) -> str:
    """A glob that matches `name` (one name, no "/") as it is, and nothing else: each
    character a glob reads as more than itself escaped (`*`, `?`, `[`, `]`, braces, the
    backslash), a leading `!` or `#` too (gitignore's negation, comment); trailing
    whitespace, which gitignore drops, each in a class of its own (`[ ]`). A byte of the
    name that is not UTF-8 (a lone surrogate, which no JSON call can carry back) is `?`:
    one character, so maybe a look-alike sibling too. For a next call's pattern built
    from a name (a moved or missing file's `**/` + `literal(basename)`)."""
    body = name.rstrip()
    shown = ["\\" + c if c in _SPECIAL else "?" if "\udc80" <= c <= "\udcff" else c for c in body]
    if shown and shown[0] in ("!", "#"):
        shown[0] = "\\" + shown[0]
    return "".join(shown) + "".join(f"[{c}]" for c in name[len(body) :])


def glob_of_name(path: str, most: int | None = None) -> str:
    """The glob of a next call that finds `path`'s file by its name at any depth (a
    missing or moved file's): `**/` and the name as itself (`literal`); with `most`,
    the name's first `most` characters and then anything (`*`)."""
    name = os.path.basename(path)
    if most is None:
        return "**/" + literal(name)
    return "**/" + literal(name[:most]) + "*"
