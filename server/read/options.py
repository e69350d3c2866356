"""Which read options apply to which kind of file: one allowlist, checked for every
kind before its reader runs, so an option that does not apply is refused the same way
on a text file, an image, a PDF and a notebook, from every front end (LSP, MCP, CLI,
readMany). `file_path`, `session`, `force` and `estimate` apply to every kind.

An option a reader would ignore is never ignored silently: `pages` on a notebook read
the whole notebook while the agent believed it held page 1.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import quoting
from ..errors import ReadkeeperError
from ..hints import call
from ..protocol import ReadParams

Kind = str  # "text", or a document reader's kind ("image", "pdf", "notebook")

# The options each kind takes; anything else asked is refused.
APPLIES: dict[Kind, frozenset[str]] = {
    "text": frozenset({"offset", "limit", "symbol", "line_format"}),
    "image": frozenset(),
    "pdf": frozenset({"pages", "render"}),
    "notebook": frozenset({"offset", "limit", "include_images"}),
}

# Whether each kind-bound option was asked for (a flag only when set).
_ASKED: dict[str, Callable[[ReadParams], bool]] = {
    "pages": lambda p: p.pages is not None,
    "render": lambda p: p.render,
    "symbol": lambda p: p.symbol is not None,
    "offset": lambda p: p.offset is not None,
    "limit": lambda p: p.limit is not None,
    "line_format": lambda p: p.line_format is not None,
    "include_images": lambda p: p.include_images,
}

_FOR = {
    "pages": "PDFs",
    "render": "PDFs",
    "symbol": "source files",
    "offset": "text files and notebooks",
    "limit": "text files and notebooks",
    "line_format": "text files",
    "include_images": "notebooks",
}

_IS = {
    "text": ("a text file", "read a range of its lines instead: {lines}"),
    "image": ("an image", "read it whole: {whole}"),
    "pdf": ("a PDF", "read it by pages instead: {pages}"),
    "notebook": ("a notebook", "read a range of its cells instead: {cells}"),
}


def _kept(kind: Kind, params: ReadParams) -> dict[str, object]:
    """The options of the refused read its way on keeps: those `kind` takes besides the
    range it names, and `force` (the session: every front end names the call in it)."""
    kept: dict[str, object] = {"force": params.force or None}
    for field in APPLIES[kind] - {"offset", "limit", "pages", "symbol"}:
        kept[field] = getattr(params, field) or None
    return kept


def check(kind: Kind, params: ReadParams, path: str) -> None:
    """Refuse (`bad_params`, naming the option) the first option asked for that `kind`
    does not take."""
    for field, asked in _ASKED.items():
        if field in APPLIES[kind] or not asked(params):
            continue
        what, instead = _IS[kind]
        kept = _kept(kind, params)
        instead = instead.format(
            pages=call("read", file_path=path, pages=params.pages or "1-5", **kept),
            lines=call("read", file_path=path, offset=1, limit=200, **kept),
            cells=call("read", file_path=path, offset=1, limit=10, **kept),
            whole=call("read", file_path=path, **kept),
        )
        raise ReadkeeperError(
            "bad_params",
            f"{field} applies to {_FOR[field]}, and {quoting.name(path)} is {what}: {instead}.",
            field=field,
        )
