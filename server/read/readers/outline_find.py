"""Finding a symbol of an outline by name, for symbol reads: "Reader.read" resolves to
one symbol's lines, or to candidates.

A symbol read reads ONE symbol. Symbols sharing a qualified name (a repeated Markdown
heading, a Python function defined twice, a property's getter and setter, overloads)
are told apart by their place among those of that name, in file order: "Intro" is the
first, "Intro[2]" the second. The bare name reads the first, and the read's note names
the others (`others_note`), so the outline's "Read a symbol with symbol=..." reads
exactly the lines it says."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ... import quoting, words
from ...errors import cut_name
from ...hints import again
from . import outline_names
from .outline import MAX_SYMBOLS, Symbol
from .outline_names import Index, ident, matching, spelled

# "Intro[2]": the second symbol named "Intro" (a name the file holds as it is wins).
_ORDINAL = re.compile(r"(.*?)\s*\[(\d+)\]")
# How many of a name's other symbols a note or a refusal lists before "and N more".
LISTED = 5


@dataclass(frozen=True)
class Found:
    """What a name resolves to: one symbol, or the candidates (closest first)."""

    start_line: int = 0
    end_line: int = 0
    symbol: Symbol | None = None
    # Every symbol of the read one's qualified name, in file order (it among them).
    sharing: tuple[Symbol, ...] = ()
    candidates: tuple[Symbol, ...] = ()
    ambiguous: bool = False  # the candidates all match the name
    matched: int = 0  # how many symbols match it (candidates: the first few and the last)
    # The name asked for one more symbol of a name than it has ("Intro[9]" of 3).
    beyond: bool = False
    names: dict[int, str | None] | None = None  # id(symbol): the name that reads it
    # The outline stopped at MAX_SYMBOLS: the start line of the last symbol it lists (a
    # symbol from that line on may be left out, so a name may be there unfound); 0 when
    # every symbol is listed.
    cut_after: int = 0


def cut_after(every: list[Symbol]) -> int:
    """Where an outline of the symbols `every` (all of them, in file order) stops: the
    start line of its last symbol when it holds MAX_SYMBOLS (the walk stops there, so
    there may be more), else 0. The walk lists symbols in file order, so every symbol
    left out starts at or after that line."""
    if len(every) < MAX_SYMBOLS:
        return 0
    return max(symbol.start_line for symbol in every)


_normal = outline_names.normal


# A character a search pattern takes as an operator (ripgrep's and Python's alike).
_OPERATOR = re.compile(r"([\\.+*?()|\[\]{}^$#&~-])")


# The most of a name a search for it names (well within a call's cut: errors.cut_name).
PATTERN_CHARS = 100


def pattern_for(wanted: str) -> str:
    """A grep pattern that finds symbol name `wanted` as the file writes it: its last
    name ("read" of "Reader.read", "g" of "g[3]"), each operator escaped."""
    split = _ORDINAL.fullmatch(wanted.strip())
    name = split.group(1) if split is not None else wanted
    last = _normal(name).rsplit(".", 1)[-1] or wanted.strip()
    # A long name's start alone: it finds the name's line, and the call naming it is
    # never cut (a cut pattern searches for readkeeper's mark; round 28).
    return _OPERATOR.sub(r"\\\1", last[:PATTERN_CHARS])


def find(found: list[Symbol], wanted: str, most: int = 6) -> Found:
    """The symbol named `wanted` ("Class.method", "method", "Class::method", "Intro[2]"):
    by its whole qualified name, else by the end of one; of several sharing that name,
    the first (or the one its "[N]" says). Names matching symbols of several qualified
    names give those as candidates; so does the cut spelling of a long name
    (outline_names.py) that stands for several whole names."""
    held = outline_names.index(found)
    every = held.every
    cut = cut_after(every)
    matches, place = _resolve(wanted.strip(), held)
    if not matches:
        closest = tuple(_closest(_normal(wanted), every, most))
        names = symbol_names(held, {ident(held, s) for s in closest})
        return Found(candidates=closest, names=names, cut_after=cut)
    idents = {ident(held, s) for s in matches}
    names = symbol_names(held, idents)
    several = len(idents) > 1
    if several or (place is not None and not 1 <= place <= len(matches)):
        # The first few and the last: a refusal says "and N more, to" the last.
        shown = matches if len(matches) <= most else [*matches[: most - 1], matches[-1]]
        return Found(
            candidates=tuple(shown),
            ambiguous=True,
            matched=len(matches),
            beyond=not several,
            names=names,
            cut_after=cut,
        )
    symbol = matches[(place or 1) - 1]
    return Found(
        symbol.start_line, symbol.end_line, symbol, tuple(matches), names=names, cut_after=cut
    )


def _resolve(wanted: str, held: Index) -> tuple[list[Symbol], int | None]:
    """The symbols `wanted` names, and the place its "[N]" gives (None: none): by whole
    names first, then by the cut spelling an outline shows (a name the file holds as it
    is wins)."""
    split = _ORDINAL.fullmatch(wanted)
    for among in (matching, spelled):
        matches = among(wanted, held)
        if matches:
            return matches, None
        if split is not None:
            matches = among(split.group(1), held)
            if matches:
                return matches, words.whole(split.group(2))
    return [], None


def symbol_names(held: Index, idents: set[tuple[str, tuple[str, ...]]]) -> dict[int, str | None]:
    """id(symbol): the symbol name that reads it, for each symbol of `held` (in file
    order) whose whole name is one of `idents`: the name for the first of a name,
    "name[N]" for the Nth. None when no name reads it alone: "name[N]" is itself a
    symbol's name (a heading "Intro[2]" beside two "Intro"), a long name's cut spelling
    stands for several whole names, or the name is too long for a way on to name whole
    (errors.cut_name): that one is read by its lines."""
    taken = {s.qualified_name for s in held.every}
    seen: dict[tuple[str, tuple[str, ...]], int] = {}
    # A cut spelling: the symbols it reads, and whether they share one whole name.
    spellings: dict[str, tuple[list[Symbol], bool]] = {}
    names: dict[int, str | None] = {}
    for symbol in held.every:
        whole = ident(held, symbol)
        if whole not in idents:
            continue
        place = seen[whole] = seen.get(whole, 0) + 1
        name = symbol.qualified_name
        named: str | None = name if place == 1 else f"{name}[{place}]"
        if place > 1 and named in taken:
            named = None
        elif id(symbol) in held.cut:
            if name not in spellings:
                reads = _resolve(name, held)[0]
                spellings[name] = reads, len({ident(held, s) for s in reads}) == 1
            reads, alone = spellings[name]
            if not (alone and len(reads) >= place and reads[place - 1] is symbol):
                named = None
        names[id(symbol)] = named if named is not None and cut_name(named) == named else None
    return names


def name_of(found: list[Symbol], wanted: Symbol) -> str | None:
    """The symbol name that reads `wanted` alone (None: none does; read it by lines)."""
    held = outline_names.index(found)
    return symbol_names(held, {ident(held, wanted)}).get(id(wanted))


def listed(symbol: Symbol, names: dict[int, str | None] | None, kind: bool = False) -> str:
    """One symbol as a note or a refusal lists it: the call that reads it and its lines
    (and its kind, with `kind`)."""
    name = (names or {}).get(id(symbol))
    size = symbol.end_line - symbol.start_line + 1
    lines = f"{symbol.kind}, lines {symbol.lines}" if kind else f"lines {symbol.lines}"
    if name is None:
        return f"{again(offset=symbol.start_line, limit=size)} ({lines})"
    return f"{again(symbol=name)} ({lines})"


def others_note(found: Found) -> str | None:
    """What a symbol read says when its name is shared: how many symbols have it, which
    one this is, and how to read the others (None when the name is the symbol's own)."""
    symbol, sharing = found.symbol, found.sharing
    if symbol is None or len(sharing) < 2:
        return None
    place = next(i for i, s in enumerate(sharing) if s is symbol) + 1
    others = [s for s in sharing if s is not symbol]
    shown = [listed(s, found.names) for s in others[:LISTED]]
    if len(others) > LISTED:
        shown.append(f"and {len(others) - LISTED:,} more, to {listed(others[-1], found.names)}")
    which = "the first" if place == 1 else f"number {place:,}"
    many = f"{len(sharing):,} symbols are"
    if found.cut_after:
        many = f"At least {len(sharing):,} symbols are"
    said = (
        f"{many} named {quoting.json_text(symbol.qualified_name)}; this "
        f"is {which} of them in the file (lines {symbol.lines}). The others: "
        f"{', '.join(shown)}."
    )
    if found.cut_after:
        said += f" {cut_words(found.cut_after)}"
    return said


def cut_words(line: int, way_on: bool = True) -> str:
    """What a note or a refusal says of an outline that stopped at MAX_SYMBOLS (with
    `way_on`, the read that shows the lines it leaves out; else the caller names it)."""
    said = (
        f"The outline holds the file's first {MAX_SYMBOLS:,} symbols only, the most it lists "
        f"(the last starts at line {line:,}): symbols from that line on may be left out of it "
        "and of every count here"
    )
    return f"{said}; read those lines with {again(offset=line)}." if way_on else f"{said}."


_QUERY_CHARS = 256


def _closest(query: str, every: list[Symbol], most: int) -> list[Symbol]:
    """Symbols whose name or qualified name is nearest `query` (a typo, a wrong class)."""
    from rapidfuzz import fuzz, process

    # Judged by its first characters: the comparison costs the product of the two names
    # (round 39: a symbol of 2,000,000 characters against 1,000 names took 25 s).
    query = query[:_QUERY_CHARS]
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
