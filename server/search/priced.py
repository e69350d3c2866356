"""A page of names held to `max_tokens` as every front end sends it (grep's pages of
files and counts, glob's and list's pages): each name counted as shown (quoting.name:
JSON-quoted with its controls, quotes and format characters escaped, as the MCP and CLI
text show it; the LSP's JSON string escapes no more), not as the file system holds it,
since a name of controls costs several times its bytes once escaped; each with its
entry's framing. A token is at least a byte, so a page whose shown bytes could not pass
the cap is not counted at all.

What a page sends besides its entries (its header, its cut note, its `next` call, the
keys of the LSP's JSON and the CLI's `--json`) is set aside first (`reserve`): the
entries fit in what is left. When not even one entry fits beside it, the page still
shows one: a name is never cut, so that page is over the cap by what its one name is.

A page's names also keep to `PAGE_MAX_CHARS` as shown, whatever their tokens (a token may
hold 128 spaces: 282 paths under folders of 250 spaces made a glob page of 917,552
characters within the token cap, where the glob tool declares 500,000).
"""

from __future__ import annotations

from .. import quoting
from ..errors import ReadkeeperError
from ..read.room import LINES_MAX_CHARS
from ..read.services import ReadServices
from ..state import sessions


def shown_size(name: str) -> int:
    """The bytes of `name` as shown, or the characters JSON writes for it as shown, the
    more (at least its tokens): a printable ASCII name without quote or backslash is
    shown bare or in quotes, unescaped. A quoted name's `\\"` and `\\udcff` are written
    `\\\\\\"` and `\\\\udcff` by JSON: counted as shown, a page of them passed its
    characters twice over (round 44)."""
    if name.isascii() and name.isprintable() and '"' not in name and "\\" not in name:
        return len(name) + 2
    shown = quoting.name(name)
    return max(len(shown.encode("utf-8", "surrogateescape")), quoting.sent_chars(shown))


# What a cut page sends besides its entries and the strings its `next` call repeats, in
# the widest of the front ends: the note's own words and numbers (about 35 tokens), the
# `next` call's keys and offset, the keys around the entries (the LSP's JSON, the CLI's
# `--json`), the drop-in's closing "(readkeeper: ...)" line and totals.
PAGE_TOKENS = 96


# How many times a page sends each of the caller's strings it repeats: its note's way on,
# said by every front end as the whole call changed (hints.changed: `the grep tool with
# {...}`, the CLI's whole command), and its `next` call. A 16,000-character pattern
# counted once made each page one match and 37,837 tokens at a cap of 25,000 (round 32).
COPIES = 2
# The most the strings a page repeats may cost together: a quarter of max_tokens (twice
# that on a page, which leaves half of it for what the page shows).
SHARE = 4


def reserve(services: ReadServices, *repeated: str | None, session: str = "") -> int:
    """The room of what a page sends besides its entries: `PAGE_TOKENS`, and each of
    the caller's strings the page repeats (a pattern, a path in its `next` call) as
    shown, `COPIES` times; the caller's `session` (its key: named as its caller named
    it) once more, for a call of another tool the page names is said in that session
    too (hints.for_mcp: a cut match's read of its file)."""
    named = sessions.name_of(session)
    said = repeated_tokens(services, named) * (COPIES + 1)
    return PAGE_TOKENS + COPIES * repeated_tokens(services, *repeated) + said


def repeated_tokens(services: ReadServices, *repeated: str | None) -> int:
    """The tokens of the caller's strings a page repeats, each as shown, once."""
    counter = services.tokens
    return sum(counter.count(quoting.name(text)) for text in repeated if text)


# What to do instead, for each string a page repeats that is too long.
_SHORTER = {
    "pattern": "Search for a shorter pattern (a distinctive part of it).",
    "glob": "Give a shorter glob (a distinctive part of the names).",
    "path": "Name a shorter path: a folder above it, narrowed with a glob or a pattern.",
    "session": 'Name the session with a short id, e.g. "chat-1".',
    "exclude": "Give fewer or shorter exclude patterns (one for a folder leaves out all in it).",
}


def refuse_long_params(
    services: ReadServices,
    method: str,
    session: str,
    **repeated: str | list[str] | None,
) -> None:
    """Refuse, before any search, a call whose `repeated` strings (by field; a list's
    strings together, as its `exclude` patterns), with its `session` (its key; as
    named), cost more than `max_tokens` over `SHARE` together: its pages could show next
    to nothing beside their own call for the rest. The refusal names the costliest."""
    cap = services.settings.max_tokens
    most = cap // SHARE
    repeated["session"] = sessions.name_of(session)
    costs = {
        field: repeated_tokens(services, *(value if isinstance(value, list) else [value]))
        for field, value in repeated.items()
    }
    whole = sum(costs.values())
    if whole <= most:
        return
    field = max(costs, key=lambda name: costs[name])
    others = " and ".join(name for name, cost in costs.items() if cost and name != field)
    also = f" ({whole:,} with the {others} it repeats too)" if others else ""
    raise ReadkeeperError(
        "bad_params",
        f"{field} is {costs[field]:,} tokens{also}; at max_tokens {cap:,} the values a "
        f"{method} repeats may take at most {most:,} (a quarter: every page keeps room "
        f"for them, its calls for the rest repeat them). {_SHORTER[field]}",
        field=field,
        tokens=whole,
        most_tokens=most,
    )


# What a name on a page of names costs besides its shown text, in the framing of every
# front end: its quotes and the separator after it (the LSP's JSON `"...",`, the MCP's
# and CLI's line break), and the token a line break may merge when `fitting` counts
# names `CHUNK` to a text. The names of grep's `files` page and of glob's page alike.
NAME_TOKENS = 3


CHUNK = 64  # names counted as one text (one call of the counter), then one by one
# The most characters a page's names take as shown, each with its framing (`_CHARS_EACH`
# characters for each token of it: a kind, a size, keys, a line break).
PAGE_MAX_CHARS = LINES_MAX_CHARS
_CHARS_EACH = 4
TOKEN_CAP = "the token cap (max_tokens)"
CHARS_CAP = f"the {PAGE_MAX_CHARS:,} characters a page sends at most"


def _within_chars(names: list[str], extra: int) -> int:
    """How many of `names` fit in `PAGE_MAX_CHARS` as shown, with their framing."""
    used = 0
    for index, name in enumerate(names):
        used += shown_size(name) + _CHARS_EACH * extra
        if used > PAGE_MAX_CHARS:
            return index
    return len(names)


def size_cap(names: list[str], shown: int, extra: int) -> str:
    """Which cap cut a page of `names` after `shown` of them: the token cap, or its
    characters (`CHARS_CAP`)."""
    return CHARS_CAP if _within_chars(names[: shown + 1], extra) <= shown else TOKEN_CAP


def fitting(names: list[str], services: ReadServices, extra: int, reserve: int) -> int:
    """How many of `names` (a page's, in order) fit within `max_tokens` as shown, with
    `extra` tokens each, besides `reserve` (what the page sends besides its entries), and
    within `PAGE_MAX_CHARS`; at least one: a name is not cut. Counted `CHUNK` names to a
    text (a line break between: no fewer tokens than the names apart, give or take the
    one a break may merge, which `extra` covers), and name by name in the chunk that
    reaches the cap."""
    names = names[: max(1, _within_chars(names, extra))]
    budget = services.settings.max_tokens - reserve
    if sum(shown_size(name) + extra for name in names) <= budget:
        return len(names)
    shown = [quoting.name(name) for name in names]
    counter = services.tokens
    used = 0
    for start in range(0, len(shown), CHUNK):
        chunk = shown[start : start + CHUNK]
        cost = counter.count("\n".join(chunk)) + extra * len(chunk)
        if used + cost <= budget:
            used += cost
            continue
        for index, name in enumerate(chunk, start):
            used += counter.count(name) + extra
            if used > budget:
                return max(index, 1)
    return len(names)
