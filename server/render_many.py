"""A readMany result as text (render.read's words for each file): what readMany's
`budget_tokens` bounds is the count of this text (read/many.py), and what every front end
that sends it as text sends."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from . import quoting
from .errors import shown_name
from .hints import call, changed, rewrite
from .render import Steps, read


def many(
    result: dict[str, Any],
    steps: Steps | None = None,
    shared: Mapping[str, Any] = MappingProxyType({}),
) -> str:
    """A readMany result as text: each file as `read` shows it (or its refusal, with its
    kind) in the order asked, the note naming the calls for the files left unread, then
    the budget left. What readMany's `budget_tokens` bounds is the count of this text
    (read/many.py); a front end that sends it says the budget left as it sends it, each
    entry's next calls in its words (`steps`), as the read of its file with the options
    of the call each file's read shares (`shared`: read/many_chars.shared)."""
    parts = [many_entry(item, steps, shared) for item in result.get("results", [])]
    if isinstance(result.get("note"), str):  # the calls for the files over the budget
        parts.append(f"note: {quoting.line(result['note'])}")
    if "budget_tokens_left" in result:
        parts.append(left_line(result["budget_tokens_left"]))
    return MANY_SEPARATOR.join(parts)


# What joins the entries of `many`.
MANY_SEPARATOR = "\n\n"


def many_entry(
    item: Any, steps: Steps | None = None, shared: Mapping[str, Any] = MappingProxyType({})
) -> str:
    """One entry of a readMany result: its read as `read` shows it, or its refusal; its
    header's next call, the read of its file with the options `shared`, in the words
    `steps` gives calls (None: the core's)."""
    if not isinstance(item, dict):
        return quoting.line(str(item))
    error = item.get("error")
    if isinstance(error, dict):
        kind = (error.get("data") or {}).get("kind", "internal")
        return refusal(item.get("file_path", ""), str(kind), str(error.get("message", "")))
    path = item.get("file_path")
    if not isinstance(path, str):
        return read(item.get("result") or {})
    # Its header's way on is the read of its file: readMany takes no offset (its notes
    # are said so too: read/many.py).
    asked = {"file_path": path, **shared}

    def said(text: str) -> str:
        text = rewrite(
            text, lambda *_: None, options=lambda run: call("read", **changed(asked, run))
        )
        return text if steps is None else steps(text)

    return read(item.get("result") or {}, said)


# The options of a readMany call each file's read shares: all but its files and budget.
_SHARED = ("offset", "limit", "pages", "force", "line_format", "session")


def shared_options(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The options of a readMany call (`arguments`) that each file's read shares, as a way
    on names them: those given, a false `force` or an empty session left out."""
    return {
        name: arguments[name] for name in _SHARED if arguments.get(name) not in (None, False, "")
    }


def refusal(file_path: Any, kind: str, message: str) -> str:
    """A file of a readMany not read: its name, the refusal's kind and message."""
    return f"{shown_name(file_path)}: refused ({kind}): {message}"


def left_line(left: Any) -> str:
    """The last line of a readMany result with a budget: what it has left."""
    return f"(budget_tokens left: {left})"


def settled_left(
    shown: dict[str, Any],
    result: dict[str, Any],
    budget: int,
    tokens: Callable[[str], int],
    steps: Steps | None = None,
    shared: Mapping[str, Any] = MappingProxyType({}),
) -> dict[str, Any]:
    """`result` with `budget_tokens_left` the budget less the tokens of `shown`'s text
    (`many`: `result` in a front end's words), the line saying it included. That line's
    count moves with its number's digits: the number is settled in a few steps, the
    smaller of two when none is exact (never below 0)."""

    def said(left: int) -> int:
        return max(0, budget - tokens(many({**shown, "budget_tokens_left": left}, steps, shared)))

    left = budget
    for _ in range(4):
        then = said(left)
        if then == left:
            break
        if then > left:  # fewer digits, fewer tokens: exact if it says itself
            left = then if said(then) == then else left
            break
        left = then
    return {**result, "budget_tokens_left": left}
