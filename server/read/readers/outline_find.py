"""Finding a symbol of an outline by name, for symbol reads: "Reader.read" resolves to
one symbol's lines, to same-named neighbours read together, or to candidates."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .outline import Symbol, walk


@dataclass(frozen=True)
class Found:
    """What a name resolves to: one line range, or the candidates (closest first)."""

    start_line: int = 0
    end_line: int = 0
    symbols: tuple[Symbol, ...] = ()  # the symbols the range covers
    candidates: tuple[Symbol, ...] = ()
    ambiguous: bool = False  # the candidates all match the name
    matched: int = 0  # how many symbols match it (candidates holds the first few)


def _normal(name: str) -> str:
    return re.sub(r"\s*(::|#|->)\s*|\s*\.\s*", ".", name.strip()).strip(".")


def find(found: list[Symbol], wanted: str, most: int = 6) -> Found:
    """The symbol named `wanted` ("Class.method", "method", "Class::method"): by its
    qualified name, else by the end of one. Same-named neighbours (overloads, a
    property's getter and setter) are read together; other clashes are candidates."""
    query = _normal(wanted)
    every = [(depth, symbol) for depth, symbol in walk(found)]
    exact = [s for _, s in every if s.qualified_name == query]
    matches = exact or [s for _, s in every if s.qualified_name.endswith("." + query)]
    if len(matches) == 1 or (matches and _neighbours(matches, found)):
        start = min(s.start_line for s in matches)
        end = max(s.end_line for s in matches)
        return Found(start, end, tuple(matches))
    if matches:
        return Found(candidates=tuple(matches[:most]), ambiguous=True, matched=len(matches))
    return Found(candidates=tuple(_closest(query, [s for _, s in every], most)))


def _neighbours(matches: list[Symbol], found: list[Symbol]) -> bool:
    """All of `matches` share one qualified name and sit side by side in one parent."""
    if len({s.qualified_name for s in matches}) != 1:
        return False
    wanted = {id(s) for s in matches}  # a set: thousands of same-named symbols stay linear
    for _, parent in walk([Symbol("", "", "", 0, 0, "", found)]):
        ids = [i for i, child in enumerate(parent.children) if id(child) in wanted]
        if ids:
            return len(ids) == len(matches) and ids == list(range(ids[0], ids[0] + len(ids)))
    return False


def _closest(query: str, every: list[Symbol], most: int) -> list[Symbol]:
    """Symbols whose name or qualified name is nearest `query` (a typo, a wrong class)."""
    from rapidfuzz import fuzz, process

    last = query.rsplit(".", 1)[-1].lower()
    best: dict[int, float] = {}
    for scored in (
        process.extract(last, [s.name.lower() for s in every], scorer=fuzz.ratio, limit=most),
        process.extract(
            query.lower(), [s.qualified_name.lower() for s in every], scorer=fuzz.ratio, limit=most
        ),
    ):
        for _, score, index in scored:
            best[index] = max(best.get(index, 0.0), score)
    ranked = sorted(best, key=lambda index: (-best[index], every[index].start_line))
    return [every[index] for index in ranked if best[index] >= 50][:most]
