"""Symbols by their whole names, for symbol reads (outline_find.py).

An outline holds a name past `MAX_NAME_CHARS` cut ("BBB…"), with the whole name's length
and digest (`Symbol.whole`). A name given for a symbol read matches a symbol when it is
that symbol's whole qualified name (or its end, from a "."), each cut part compared by
length and digest; a name's start, or a name that shares only the cut part, matches
nothing (round 30, B1: two long names of one start read the first, and a name's start
read a symbol). The cut spelling the outline shows ("BBB…", "Intro.BBB…") is a name of
its own only where it stands for one whole name (`spelled`; outline_find.py refuses it
as ambiguous where it stands for several)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .outline_symbol import Symbol, whole_key


@dataclass
class Index:
    """The symbols of an outline in file order, each one's parent, and which have a cut
    name on their path (theirs or a parent's)."""

    every: list[Symbol] = field(default_factory=list)
    parent: dict[int, Symbol] = field(default_factory=dict)
    cut: set[int] = field(default_factory=set)


def index(found: list[Symbol]) -> Index:
    """The `Index` of the symbols `found` (the top level, each with its nested ones)."""
    held = Index()
    stack: list[tuple[Symbol | None, Symbol]] = [(None, s) for s in reversed(found)]
    while stack:
        above, symbol = stack.pop()
        held.every.append(symbol)
        if above is not None:
            held.parent[id(symbol)] = above
            if id(above) in held.cut:
                held.cut.add(id(symbol))
        if symbol.whole:
            held.cut.add(id(symbol))
        if symbol.children:
            stack.extend((symbol, child) for child in reversed(symbol.children))
    return held


def ident(held: Index, symbol: Symbol) -> tuple[str, tuple[str, ...]]:
    """What two symbols share when their whole qualified names are equal: the name the
    outline shows and the digests of its cut parts."""
    if id(symbol) not in held.cut:
        return symbol.qualified_name, ()
    wholes = []
    at: Symbol | None = symbol
    while at is not None:
        wholes.append(at.whole)
        at = held.parent.get(id(at))
    return symbol.qualified_name, tuple(wholes)


def normal(name: str) -> str:
    """A name's separators ("::", "#", "->", " . ") written as "."."""
    return re.sub(r"\s*(::|#|->)\s*|\s*\.\s*", ".", name.strip()).strip(".")


def matching(wanted: str, held: Index) -> list[Symbol]:
    """The symbols whose whole qualified name is `wanted` as written (a heading "C# tips"
    or "Step 1. Install"), else as `normal` writes it, else those whose whole qualified
    name ends with "." and that, in file order."""
    as_written, query, every = wanted.strip(), normal(wanted), held.every
    if not held.cut:  # every name held whole (nearly every file): plain comparisons
        exact = [s for s in every if s.qualified_name == as_written]
        exact = exact or [s for s in every if s.qualified_name == query]
        return exact or [s for s in every if s.qualified_name.endswith("." + query)]
    exact = [s for s in every if _is(held, s, as_written, True)]
    exact = exact or [s for s in every if _is(held, s, query, True)]
    return exact or [s for s in every if _is(held, s, "." + query, False)]


def spelled(wanted: str, held: Index) -> list[Symbol]:
    """The symbols with a cut name on their path whose name as the outline shows it is
    `wanted` (as written, as `normal` writes it, or its end from a "."), in file order."""
    if not held.cut:
        return []
    cut = [s for s in held.every if id(s) in held.cut]
    as_written, query = wanted.strip(), normal(wanted)
    return (
        [s for s in cut if s.qualified_name == as_written]
        or [s for s in cut if s.qualified_name == query]
        or [s for s in cut if s.qualified_name.endswith("." + query)]
    )


def _is(held: Index, symbol: Symbol, wanted: str, exact: bool) -> bool:
    """Whether the whole qualified name of `symbol` is `wanted` (`exact`) or ends with
    it. Compared from the end, part by part: a part held whole as text, a cut one by its
    length and digest (an end that stops inside a cut part matches nothing)."""
    if id(symbol) not in held.cut:
        name = symbol.qualified_name
        return name == wanted if exact else name.endswith(wanted)
    end = len(wanted)
    at: Symbol | None = symbol
    while at is not None:
        above = held.parent.get(id(at))
        shown, own = at.qualified_name, at.name
        head = above.qualified_name if above is not None else ""
        fits = len(head) + len(own) <= len(shown)
        if not (fits and shown.startswith(head) and shown.endswith(own)):
            return False  # not a qualified name this walk makes: never a match
        if at.whole:
            size = at.whole.split(":", 1)[0]
            start = end - int(size) if size.isdigit() and len(size) < 12 else -1
            # The cut part's start first (cheap), then the digest of the whole part.
            if start < 0 or not wanted.startswith(own[:-1], start):
                return False
            if whole_key(wanted[start:end]) != at.whole:
                return False
            end = start
        else:
            end = _literal(wanted, end, own, exact)
        for step in (0, 1):
            if end == -2 or (end == 0 and not exact):
                return True  # `wanted` is all of the name's end
            if end < 0:
                return False
            if step == 0:  # the separator and scope between the parent's name and its own
                end = _literal(wanted, end, shown[len(head) : len(shown) - len(own)], exact)
        at = above
    return end == 0


def _literal(wanted: str, end: int, part: str, exact: bool) -> int:
    """Where `wanted[:end]` is left once its end is `part`: the new end; -1 when it does
    not end so; -2 when (not `exact`) all of it is the end of `part`."""
    if end >= len(part) and wanted.endswith(part, 0, end):
        return end - len(part)
    if not exact and part.endswith(wanted[:end]):
        return -2
    return -1
