"""Outlines kept across servers: a file's symbols by the SHA-256 of its text, in the
user's cache folder (files/user_cache.py), so a restarted server's first outline of a
file an earlier one outlined skips the parse and the walk.

The key is the digest of the decoded text itself (not of the bytes, so a file read in
another encoding is another key, and not its name, size or mtime, so a file swapped
under the same mtime is another key), with the grammar, its wheel's version,
tree-sitter's and readkeeper's: symbols depend on nothing else (the settings decide
what a read does with them, and are never cached). An entry is JSON, checked against
what an outline can be before it is used (kinds and names are strings, lines fall
within the text, at most `MAX_SYMBOLS` symbols no deeper
than `MAX_DEPTH`); one that is not is ignored and made anew.
"""

from __future__ import annotations

import hashlib
import json
import logging
from functools import cache
from importlib import metadata

from ... import __version__
from ...files.user_cache import UserCache, shared
from . import outline
from .grammars import Grammar

log = logging.getLogger("readkeeper")

CACHE_KIND = "outline"
_FORMAT = 1


def symbols(
    text: str, grammar: Grammar, key: str = "", user_cache: UserCache | None = None
) -> list[outline.Symbol]:
    """`outline.symbols`, from the user's cache when an earlier server made them."""
    if key:
        kept = outline.recall(grammar, key)
        if kept is not None:
            return kept
    user_cache = user_cache if user_cache is not None else shared()
    disk_key = entry_key(text, grammar)
    payload = user_cache.get(CACHE_KIND, disk_key)
    if payload is not None:
        found = parse(payload, text.count("\n") + 1)
        if found is not None:
            if key:
                outline.remember(grammar, key, found)
            return found
        log.warning("Ignoring a cached outline that does not parse")
    found = outline.symbols(text, grammar, key)
    user_cache.put(CACHE_KIND, disk_key, dump(found))
    return found


@cache
def _versions(module: str) -> str:
    found = []
    for distribution in ("tree-sitter", module.replace("_", "-")):
        try:
            found.append(f"{distribution} {metadata.version(distribution)}")
        except metadata.PackageNotFoundError:
            found.append(f"{distribution} ?")
    return "|".join(found)


def entry_key(text: str, grammar: Grammar) -> str:
    """Everything the symbols of `text` depend on."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    grammar_id = f"{grammar.name}|{grammar.module}.{grammar.function}"
    return f"v{_FORMAT}|readkeeper {__version__}|{_versions(grammar.module)}|{grammar_id}|{digest}"


def dump(found: list[outline.Symbol]) -> bytes:
    """The symbols as JSON: [kind, name, qualified name, start, end, label, children]."""

    def row(symbol: outline.Symbol) -> list[object]:
        return [
            symbol.kind,
            symbol.name,
            symbol.qualified_name,
            symbol.start_line,
            symbol.end_line,
            symbol.label,
            [row(child) for child in symbol.children],
        ]

    return json.dumps([row(s) for s in found], ensure_ascii=False).encode("utf-8")


def parse(payload: bytes, total_lines: int) -> list[outline.Symbol] | None:
    """The symbols of an entry, or None when it is not an outline of a text of
    `total_lines` lines."""
    try:
        rows = json.loads(payload)
    except (ValueError, RecursionError):
        return None
    top: list[outline.Symbol] = []
    # (rows, the list their symbols go in, depth)
    pending: list[tuple[object, list[outline.Symbol], int]] = [(rows, top, 0)]
    count = 0
    while pending:
        level, into, depth = pending.pop()
        if not isinstance(level, list) or depth > outline.MAX_DEPTH:
            return None
        for item in level:
            count += 1
            if count > outline.MAX_SYMBOLS or not isinstance(item, list) or len(item) != 7:
                return None
            kind, name, qualified, start, end, label, children = item
            if not all(isinstance(v, str) for v in (kind, name, qualified, label)):
                return None
            if not (type(start) is int and type(end) is int and 1 <= start <= end <= total_lines):
                return None
            symbol = outline.Symbol(kind, name, qualified, start, end, label)
            into.append(symbol)
            pending.append((children, symbol.children, depth + 1))
    return top


__all__ = ["CACHE_KIND", "dump", "entry_key", "parse", "symbols"]
