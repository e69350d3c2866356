"""grep's pages of names (`files`, `counts`) and what any of its pages costs as sent:
each line or entry with its file's name as shown (priced.py) and its framing (its line
number and marks in the text, its keys in the LSP's JSON)."""

from __future__ import annotations

from typing import Any

from .. import quoting
from ..hints import again
from ..protocol.search import GrepParams
from ..read.services import ReadServices
from ..read.tokens import TokenCounter
from ..words import count
from .paging import refuse_past_end
from .priced import NAME_TOKENS, TOKEN_CAP, fitting, reserve, size_cap

DEFAULT_MAX_MATCHES = 100
MAX_MATCHES = 2000
# What a shown line or entry costs besides its name (and its text): a match line its
# number, marks and line break in the text, and in the LSP's JSON its keys
# ({"file_path": , "line": , "text": , "context": true}); a count its number and keys
# (a file's name on the `files` page: priced.NAME_TOKENS).
LINE_TOKENS = 16
COUNT_TOKENS = 8


class NameCost:
    """The tokens of a file's name as shown, counted once a name (a name repeats on
    each of its matches)."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self.memo: dict[str, int] = {}

    def __call__(self, name: str) -> int:
        cost = self.memo.get(name)
        if cost is None:
            cost = self.memo[name] = self.counter.count(quoting.name(name))
        return cost


def files(
    services: ReadServices, found: list[str], params: GrepParams, cap: int, incomplete: bool
) -> dict[str, Any]:
    """The `files` page: at most `cap` names from `offset`, within `max_tokens`."""
    refuse_past_end(params.offset, len(found), "file", so_far=incomplete)
    names = found[params.offset : params.offset + cap]
    page = names[: fitting(names, services, NAME_TOKENS, _repeated(services, params))]
    result: dict[str, Any] = {"matches": [], "files": page}
    size = size_cap(names, len(page), NAME_TOKENS)
    return _paged(result, len(found), len(page), params, cap, incomplete, size)


def counts(
    services: ReadServices,
    counted: dict[str, int],
    params: GrepParams,
    cap: int,
    incomplete: bool,
) -> dict[str, Any]:
    """The `counts` page: at most `cap` files from `offset`, within `max_tokens`."""
    items = list(counted.items())
    refuse_past_end(params.offset, len(items), "file", so_far=incomplete)
    names = [path for path, _ in items[params.offset : params.offset + cap]]
    fits = fitting(names, services, COUNT_TOKENS, _repeated(services, params))
    page = items[params.offset : params.offset + fits]
    result: dict[str, Any] = {
        "matches": [],
        "counts": [{"file_path": path, "count": n} for path, n in page],
    }
    size = size_cap(names, len(page), COUNT_TOKENS)
    return _paged(result, len(items), len(page), params, cap, incomplete, size)


def _repeated(services: ReadServices, params: GrepParams) -> int:
    """The room of what a page of names sends besides them: its note and its `next`
    call, which repeats the caller's pattern, path and glob."""
    return reserve(services, params.pattern, params.path, params.glob, session=params.session)


def _paged(
    result: dict[str, Any],
    found: int,
    shown: int,
    params: GrepParams,
    cap: int,
    incomplete: bool,
    size: str = TOKEN_CAP,
) -> dict[str, Any]:
    """`result` marked partial, with the call for the rest and its note, when the page
    of `shown` files does not reach the last of `found` (cut by `cap` files, or by
    `size`: the page's tokens or characters, priced.size_cap)."""
    rest = params.offset + shown
    result["partial"] = incomplete or rest < found
    if rest < found:
        result["next"] = next_params(params, rest)
        which = cut_by(params, "file") if shown >= cap else size
        result["note"] = (
            f"{_matching(found)}; showing {params.offset + 1}-{rest}, cut by {which}; "
            f"the rest: {again(offset=rest)}."
        )
    return result


def page(params: GrepParams) -> int:
    """The most matches (or files) one page shows: max_matches, within MAX_MATCHES."""
    return min(params.max_matches or DEFAULT_MAX_MATCHES, MAX_MATCHES)


def cut_by(params: GrepParams, noun: str) -> str:
    """The cap that cut a full page, named as what set it: the caller's max_matches, the
    default page it left out, or readkeeper's own cap when it asked for more."""
    if params.max_matches is None:
        return (
            f"the default page of {count(DEFAULT_MAX_MATCHES, noun)} (max_matches sets up "
            f"to {MAX_MATCHES:,})"
        )
    if params.max_matches > MAX_MATCHES:
        return (
            f"readkeeper's cap of {count(MAX_MATCHES, noun)} a page (max_matches of "
            f"{params.max_matches:,} asks for more than a page holds)"
        )
    return f"max_matches ({params.max_matches:,})"


def _matching(files: int) -> str:
    return f"{count(files, 'file')} {'matches' if files == 1 else 'match'}"


def next_params(params: GrepParams, offset: int) -> dict[str, Any]:
    """The params of the call that shows what this one left out."""
    shown = {
        "pattern": params.pattern,
        "path": params.path,
        "glob": params.glob,
        "context": params.context or None,
        "case_sensitive": None if params.case_sensitive else False,
        "multiline": params.multiline or None,
        "output": None if params.output == "matches" else params.output,
        "max_matches": params.max_matches,
        "offset": offset,
        "session": params.session or None,
    }
    return {k: v for k, v in shown.items() if v is not None}
