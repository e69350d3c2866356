"""Outlines kept across servers: a file's symbols by the SHA-256 of its text, in the
user's cache folder (files/user_cache.py), so a restarted server's first outline of a
file an earlier one outlined skips the parse and the walk; and the token count that
decided it (`whole_key`: by the text, the threshold, the number width and the
tokenizer), so it skips that count too.

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
_FORMAT = 2


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
        counted = parse_counted(payload, text.count("\n") + 1)
        if counted is not None:
            if key:
                outline.remember(grammar, key, *counted)
            return counted[0]
        log.warning("Ignoring a cached outline that does not parse")
    found = outline.symbols(text, grammar, key)
    user_cache.put_later(CACHE_KIND, disk_key, lambda: dump(found))
    return found


@cache
def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "?"


def _versions(module: str) -> str:
    found = ("tree-sitter", module.replace("_", "-"))
    return "|".join(f"{distribution} {_version(distribution)}" for distribution in found)


# The text last digested and its digest: a read asks for it twice (the count's entry,
# the outline's), and hashing 100 KB costs about 0.2 ms. Held by identity, not equality.
_last_digest: tuple[str, str] | None = None


def text_digest(text: str) -> str:
    """The SHA-256 of the text's UTF-8 (lone surrogates kept, as decoded)."""
    global _last_digest
    last = _last_digest
    if last is not None and last[0] is text:
        return last[1]
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    _last_digest = (text, digest)
    return digest


def digest_known(text: str, data: bytes) -> str:
    """The SHA-256 of `data`, the file's bytes, kept as `text_digest(text)` when `text`
    is `data` decoded (its UTF-8 is `data`): a read of a file it may outline hashes it
    once, for its content digest and these keys (about 0.16 ms on 57 KB here; the
    check, 7 us)."""
    global _last_digest
    digest = hashlib.sha256(data).hexdigest()
    if text.encode("utf-8", "surrogatepass") == data:
        _last_digest = (text, digest)
    return digest


def entry_key(text: str, grammar: Grammar) -> str:
    """Everything the symbols of `text` depend on."""
    grammar_id = f"{grammar.name}|{grammar.module}.{grammar.function}"
    versions = _versions(grammar.module)
    return f"v{_FORMAT}|readkeeper {__version__}|{versions}|{grammar_id}|{text_digest(text)}"


# --- the count that decides an outline ----------------------------------------------------

WHOLE_KIND = "whole-tokens"
_NOT_OVER = b"-"


def whole_key(text: str, threshold: int, width: int, encoding: str) -> str:
    """Everything `outline_read.whole_tokens` depends on: the text, the settings it
    reads and the tokenizer."""
    tokenizer = f"tiktoken {_version('tiktoken')} {encoding}"
    return (
        f"v{_FORMAT}|readkeeper {__version__}|{tokenizer}|over {threshold}|width {width}|"
        f"{text_digest(text)}"
    )


def recall_whole(key: str, threshold: int, most: int, user_cache: UserCache) -> int | bool | None:
    """The kept answer of `whole_tokens` for `key`: its count, None (not over the
    threshold), or False when there is none to trust (absent, or not a count over
    `threshold` and at most `most`)."""
    payload = user_cache.get(WHOLE_KIND, key)
    if payload is None:
        return False
    if payload == _NOT_OVER:
        return None
    if payload.isdigit() and len(payload) < 20 and threshold < int(payload) <= most:
        return int(payload)
    log.warning("Ignoring a cached token count that does not parse")
    return False


def keep_whole(key: str, whole: int | None, user_cache: UserCache) -> None:
    user_cache.put_later(WHOLE_KIND, key, _NOT_OVER if whole is None else str(whole).encode())


def dump(found: list[outline.Symbol]) -> bytes:
    """The symbols as JSON: [kind, name, qualified name, start, end, label, children,
    whole] (whole: `Symbol.whole`)."""

    def row(symbol: outline.Symbol) -> list[object]:
        return [
            symbol.kind,
            symbol.name,
            symbol.qualified_name,
            symbol.start_line,
            symbol.end_line,
            symbol.label,
            [row(child) for child in symbol.children],
            symbol.whole,
        ]

    return json.dumps([row(s) for s in found], ensure_ascii=False).encode("utf-8")


def parse(payload: bytes, total_lines: int) -> list[outline.Symbol] | None:
    """The symbols of an entry, or None when it is not an outline of a text of
    `total_lines` lines."""
    counted = parse_counted(payload, total_lines)
    return None if counted is None else counted[0]


def parse_counted(payload: bytes, total_lines: int) -> tuple[list[outline.Symbol], int] | None:
    """`parse`, and how many symbols there are in all (what `outline.remember` keeps)."""
    try:
        rows = json.loads(payload)
    except (ValueError, RecursionError):
        return None
    if type(rows) is not list:
        return None
    top: list[outline.Symbol] = []
    # (rows, the list their symbols go in, depth)
    pending: list[tuple[list[object], list[outline.Symbol], int]] = [(rows, top, 0)]
    count = 0
    new = outline.Symbol
    while pending:
        level, into, depth = pending.pop()
        count += len(level)
        if depth > outline.MAX_DEPTH or count > outline.MAX_SYMBOLS:
            return None
        for item in level:
            # Checked by type, not isinstance: JSON gives exactly list, str and int (a
            # bool is an int to isinstance).
            if type(item) is not list or len(item) != 8:
                return None
            kind, name, qualified, start, end, label, children, whole = item
            if not (
                type(kind) is str
                and type(name) is str
                and type(qualified) is str
                and type(label) is str
                and type(start) is int
                and type(end) is int
                and 1 <= start <= end <= total_lines
                and type(children) is list
                and type(whole) is str
            ):
                return None
            symbol = new(kind, name, qualified, start, end, label, whole=whole)
            into.append(symbol)
            if children:
                pending.append((children, symbol.children, depth + 1))
    return top, count


__all__ = [
    "CACHE_KIND",
    "WHOLE_KIND",
    "digest_known",
    "dump",
    "entry_key",
    "keep_whole",
    "parse",
    "parse_counted",
    "recall_whole",
    "symbols",
    "text_digest",
    "whole_key",
]
