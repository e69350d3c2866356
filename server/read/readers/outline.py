"""The symbols of a source file, parsed with tree-sitter: for outline and symbol reads.

`grammar_for` says whether a file's language has a grammar (grammars.py); `symbols`
parses a text and returns its symbols as a tree (kind, name, qualified name, 1-based
line range, children); `render` draws the tree compactly, one line per symbol, within a
budget.

Hostile input is expected: tree-sitter recovers from syntax errors (the symbols it can
still see are returned), the walk keeps its own stack (no recursion limit on deeply
nested code) and only enters the node types its grammar lists, and the number of
symbols is capped. The whole step is linear in the file and runs under a budget: the
parse and the walk each stop at a deadline (`TooCostly`), symbols nested past
`MAX_DEPTH` are left out, and the walk never asks tree-sitter for a node's parent or
previous sibling (each of those walks down from the root, which made a file of deeply
nested functions quadratic). Grammars are imported on first use, never at server start.
"""

from __future__ import annotations

import importlib
import os
import re
import threading
import time
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ... import quoting
from .grammars import BY_EXTENSION, CPP, PYTHON, Grammar, Named

# The symbol and the caps are outline.py's words for every reader of outlines.
from .outline_symbol import MAX_DEPTH as MAX_DEPTH
from .outline_symbol import MAX_NAME_CHARS as MAX_NAME_CHARS
from .outline_symbol import MAX_SYMBOLS as MAX_SYMBOLS
from .outline_symbol import Symbol as Symbol
from .outline_symbol import whole_key

if TYPE_CHECKING:
    from tree_sitter import Language, Node, Point, Tree

# Kinds whose functions are methods.
_CLASS_LIKE = {"class", "struct", "interface", "impl", "trait", "enum", "record", "union"}
# Parsing stops after this long (tree-sitter is linear on real code; this is a guard).
PARSE_SECONDS = 2.0
# The walk over the tree stops after this long (it is linear; this bounds a huge file).
WALK_SECONDS = 2.0
_DEEPER = f" (symbols nested past {MAX_DEPTH} levels not listed: read its lines)"
# Whether `symbols` tries the Python scanner (outline_py.py) before the parse: exact on
# every installed module it accepts (98%; tests/read/test_outline_py.py), 2.7-3.2x faster
# than the parse and the walk at the median, a first read of a real module 2.5x faster
# (bench_first_outline.py). False: the bench's baseline.
SCAN_PYTHON = True
# A .h file with C++ in it is parsed as C++.
_CPP_HINT = re.compile(rb"^\s*(class|namespace|template\s*<)\b|\bpublic:|\bstd::", re.M)


class TooCostly(Exception):
    """The parse or the walk was stopped at its deadline."""


def grammar_for(path: str, head: bytes = b"") -> Grammar | None:
    """The grammar for a file's language, by its name (a .h with C++ in `head` is C++)."""
    name = os.path.basename(path).lower()
    grammar = BY_EXTENSION.get(os.path.splitext(name)[1])
    if grammar is not None and name.endswith(".h") and _CPP_HINT.search(head):
        return CPP
    return grammar


def supported_languages() -> str:
    """The languages with a grammar, with their extensions, for messages."""
    by_language: dict[str, list[str]] = {}
    for extension, grammar in BY_EXTENSION.items():
        by_language.setdefault(grammar.name, []).append(extension)
    return "; ".join(f"{name} ({' '.join(exts)})" for name, exts in by_language.items())


# --- parsing ------------------------------------------------------------------------------

_languages: dict[tuple[str, str], Language] = {}
_languages_lock = threading.Lock()
# The symbols of the last files outlined, by content digest: a symbol read after an
# outline (or a re-read) does not parse again. Bounded by files and by symbols held.
_cache: OrderedDict[tuple[str, str], tuple[list[Symbol], int]] = OrderedDict()
_CACHE_FILES = 32
_CACHE_SYMBOLS = 50_000


def load(grammar: Grammar) -> Language:
    """The grammar's tree-sitter Language, imported on first use."""
    key = (grammar.module, grammar.function)
    with _languages_lock:
        language = _languages.get(key)
        if language is None:
            from tree_sitter import Language

            module = importlib.import_module(grammar.module)
            language = Language(getattr(module, grammar.function)())
            _languages[key] = language
        return language


def symbols(text: str, grammar: Grammar, key: str = "") -> list[Symbol]:
    """The top-level symbols of `text`, each with its nested ones. `key` (the content
    digest) lets a symbol read after an outline of the same content skip the parse."""
    if key and (kept := recall(grammar, key)) is not None:
        return kept
    # With SCAN_PYTHON, a Python text is first scanned without a parse (outline_py.py:
    # the same symbols); the parse decides what the scanner declines.
    scanned = _scanned(text) if SCAN_PYTHON and grammar is PYTHON else None
    found, count = scanned if scanned is not None else parsed(text, grammar)
    if key:
        remember(grammar, key, found, count)
    return found


def parsed(text: str, grammar: Grammar) -> tuple[list[Symbol], int]:
    """The symbols tree-sitter's parse and the walk find, and how many in all."""
    data = text.encode("utf-8", "surrogatepass")
    return _walk(_parse(data, grammar).root_node, grammar, data)


def _scanned(text: str) -> tuple[list[Symbol], int] | None:
    # Imported on first use, as the grammars are: its patterns take milliseconds to
    # compile, which a server's start does not pay.
    from . import outline_py

    return outline_py.scan_counted(text)


def recall(grammar: Grammar, key: str) -> list[Symbol] | None:
    """The symbols kept in memory for the content digest `key`, if any."""
    with _languages_lock:
        cached = _cache.get((grammar.name, key))
        if cached is not None:
            _cache.move_to_end((grammar.name, key))
        return None if cached is None else cached[0]


def remember(grammar: Grammar, key: str, found: list[Symbol], count: int = -1) -> None:
    """Keep `found` in memory for the content digest `key` (bounded: `_CACHE_*`)."""
    count = sum(1 for _ in walk(found)) if count < 0 else count
    with _languages_lock:
        _cache[(grammar.name, key)] = (found, count)
        while len(_cache) > 1 and (
            len(_cache) > _CACHE_FILES or sum(n for _, n in _cache.values()) > _CACHE_SYMBOLS
        ):
            _cache.popitem(last=False)


def _parse(data: bytes, grammar: Grammar) -> Tree:
    """The syntax tree, or TooCostly past PARSE_SECONDS (a grammar pathological on
    some input must not hold a worker thread)."""
    from tree_sitter import Parser

    deadline = time.monotonic() + PARSE_SECONDS

    def chunk(offset: int, _: Point) -> bytes:
        return data[offset : offset + 65_536]

    def too_slow(_offset: int, _has_error: bool) -> bool:
        return time.monotonic() > deadline

    try:
        return Parser(load(grammar)).parse(chunk, progress_callback=too_slow)
    except ValueError:  # "Parsing failed": cancelled by too_slow
        raise TooCostly(f"parsing took over {PARSE_SECONDS:g} s") from None


def _last_row(node: Node) -> int:
    """The 0-based row of a node's last character (a node ending at a line's start
    ends on the line before)."""
    end = node.end_point
    if end.column == 0 and end.row > node.start_point.row:
        return int(end.row) - 1
    return int(end.row)


# Where a node sits: its parent, the parent's children, the node's index among them, and
# the parent's own place (None at the root). Kept by the walk so that no step asks
# tree-sitter for a parent or a sibling.
_Place = tuple["Node", list["Node"], int, "_Place | None"]


def _first_row(node: Node, place: _Place, grammar: Grammar) -> int:
    """Where a symbol read starts: its wrapper (decorators, `export`, `template<>`) and
    the comments or attributes right above it, with no blank line between."""
    top, where = node, place
    while True:
        parent, siblings, _, above = where
        if above is None or parent.type not in grammar.wrappers:
            break
        if sum(s.is_named and s.type in grammar.rules for s in siblings) != 1:
            break
        top, where = parent, above
    start = int(top.start_point.row)
    _, siblings, index, _ = where
    while index > 0:
        above_node = siblings[index - 1]
        if above_node.type not in grammar.docs or _last_row(above_node) != start - 1:
            break
        if index > 1 and _last_row(siblings[index - 2]) >= above_node.start_point.row:
            break  # a comment after code on the same line belongs to that code
        start = int(above_node.start_point.row)
        index -= 1
    return start


def _walk(root: Node, grammar: Grammar, source: bytes) -> tuple[list[Symbol], int]:
    """The top-level symbols, and how many symbols there are in all."""
    top: list[Symbol] = []
    count = visited = 0
    deadline = time.monotonic() + WALK_SECONDS
    rules, containers, bodies = grammar.rules, grammar.containers, grammar.bodies
    marks = _mark_offsets(grammar, source)
    # (node, the symbol it belongs to, how many symbols enclose it, its index, its
    # parent's place)
    stack: list[tuple[Node, Symbol | None, int, int, _Place]] = []
    marked = grammar.marked
    _push(stack, root, None, 0, None, marks, marked)
    while stack and count < MAX_SYMBOLS:
        node, parent, depth, index, where = stack.pop()
        visited += 1
        if not visited & 4095 and time.monotonic() > deadline:
            raise TooCostly(f"listing the symbols took over {WALK_SECONDS:g} s")
        kind = node.type
        rule = rules.get(kind)
        named: Named | None = rule(node, source) if rule is not None else None
        owner = parent
        place = (where[0], where[1], index, where[3])
        if named is not None:
            if depth >= MAX_DEPTH:
                # Neither listed nor entered; the outline says so where it stops.
                if parent is not None and not parent.label.endswith(_DEEPER):
                    parent.label += _DEEPER
                continue
            owner = _symbol(node, named, parent, grammar, place)
            (parent.children if parent is not None else top).append(owner)
            count += 1
            depth += 1
        # Into containers, and into what a syntax error wrapped (its symbols still count).
        if kind in containers or kind == "ERROR":
            body = bodies.get(kind)
            if body is None or node.has_error:
                _push(stack, node, owner, depth, place, marks, marked)
            else:
                _push_body(stack, node, body, owner, depth, place, marks, marked)
    return top, count


def _mark_offsets(grammar: Grammar, source: bytes) -> list[int] | None:
    """Where the grammar's marks occur in `source` (None: it has none: walk everything)."""
    if not grammar.marks:
        return None
    found: list[int] = []
    # One `find` loop per mark: a search for one word runs in C and skips ahead,
    # three times faster than a regular expression of the alternatives.
    for mark in grammar.marks:
        at = source.find(mark)
        while at >= 0:
            found.append(at)
            at = source.find(mark, at + 1)
    found.sort()
    return found


def _push(
    stack: list[tuple[Node, Symbol | None, int, int, _Place]],
    node: Node,
    owner: Symbol | None,
    depth: int,
    place: _Place | None,
    marks: list[int] | None,
    marked: frozenset[str] | None,
) -> None:
    """Put the named children of `node` on the stack, the first on top: when the
    grammar has marks, only those whose bytes hold one, of the types it prunes (no
    symbol is in the others)."""
    children = node.children
    inside: _Place = (node, children, 0, place)
    for index in range(len(children) - 1, -1, -1):
        child = children[index]
        if child.is_named:
            if marks is not None and (marked is None or child.type in marked):
                at = bisect_left(marks, child.start_byte)
                if at == len(marks) or marks[at] >= child.end_byte:
                    continue
            stack.append((child, owner, depth, index, inside))


def _push_body(
    stack: list[tuple[Node, Symbol | None, int, int, _Place]],
    node: Node,
    name_field: str,
    owner: Symbol | None,
    depth: int,
    place: _Place,
    marks: list[int] | None,
    marked: frozenset[str] | None,
) -> None:
    """Put the one child of `node` that can hold its symbols (`Grammar.bodies`) on the
    stack, when it holds a mark: the other children are not even listed. The body is
    given as the only child of `node`: it is never a symbol, so no symbol's first line
    is looked for among its siblings."""
    body = node.child_by_field_name(name_field)
    if body is None:
        return
    if marks is not None and (marked is None or body.type in marked):
        at = bisect_left(marks, body.start_byte)
        if at == len(marks) or marks[at] >= body.end_byte:
            return
    stack.append((body, owner, depth, 0, (node, [body], 0, place)))


def _symbol(
    node: Node, named: Named, parent: Symbol | None, grammar: Grammar, place: _Place
) -> Symbol:
    kind = named.kind
    if kind == "function" and parent is not None and parent.kind in _CLASS_LIKE:
        kind = "method"
    whole = named.name or "(anonymous)"
    name = _short(whole, MAX_NAME_CHARS)
    parts = [parent.qualified_name if parent is not None else "", named.scope, name]
    # The outline line is readkeeper's: the file's words in it go through the naming rule
    # (a JS member may be named by a string literal holding line breaks).
    shown = f"{named.scope}.{name}" if named.scope else name
    label = quoting.phrase(_short(named.label)) if named.label else f"{kind} {quoting.name(shown)}"
    return Symbol(
        kind=kind,
        name=name,
        qualified_name=".".join(part for part in parts if part),
        start_line=_first_row(node, place, grammar) + 1,
        end_line=_last_row(node) + 1,
        label=label,
        whole=whole_key(whole) if name != whole else "",
    )


def _short(text: str, most: int = 120) -> str:
    """An outline label cut to `most` characters (a generated declarator can be huge)."""
    return text if len(text) <= most else text[: most - 1] + "…"


def walk(found: list[Symbol]) -> Iterator[tuple[int, Symbol]]:
    """Every symbol with its depth, in file order (iteratively)."""
    stack = [(0, symbol) for symbol in reversed(found)]
    while stack:
        depth, symbol = stack.pop()
        yield depth, symbol
        stack.extend((depth + 1, child) for child in reversed(symbol.children))


# --- drawing the outline ---------------------------------------------------------------------


@dataclass(frozen=True)
class Drawn:
    """An outline as text, and what it left out."""

    text: str
    total: int  # symbols in the file
    shown: int
    depth: int  # deepest level shown (0: top level only), -1 when even that was cut
    next_line: int | None = None  # when top-level symbols were cut: the first one left out


def _line(depth: int, symbol: Symbol, hidden: int) -> str:
    more = f" (+{hidden} inside)" if hidden else ""
    return f"{'  ' * depth}{symbol.lines} {symbol.label}{more}"


def render(found: list[Symbol], budget_chars: int) -> Drawn:
    """One line per symbol ("12-40 class Reader", children indented two spaces), as
    many whole levels as fit in `budget_chars`; a parent whose children are left out
    says how many. If the top level alone is over, its first symbols that fit."""
    every = _every(found)
    inside = _descendants(every)
    deepest = max((depth for depth, _ in every), default=0)
    # Each symbol's line without "(+N inside)" (drawn once: most are shown as they are),
    # the characters of each level's lines, and what "(+N inside)" adds when it is the last.
    plain = [_line(depth, symbol, 0) for depth, symbol in every]
    base = [0] * (deepest + 1)
    extra = [0] * (deepest + 1)
    for (depth, symbol), line in zip(every, plain, strict=True):
        base[depth] += len(line) + 1
        if symbol.children:
            extra[depth] += len(f" (+{inside[id(symbol)]} inside)")
    depth, size = -1, 0
    while depth < deepest and size + base[depth + 1] + extra[depth + 1] <= budget_chars:
        depth += 1
        size += base[depth]
    if depth < 0:
        return _top_only(found, inside, len(every), budget_chars)
    lines = [
        _line(level, symbol, inside[id(symbol)]) if level == depth and symbol.children else line
        for (level, symbol), line in zip(every, plain, strict=True)
        if level <= depth
    ]
    return Drawn("\n".join(lines), len(every), len(lines), depth)


def _every(found: list[Symbol]) -> list[tuple[int, Symbol]]:
    """`walk` as a list, made without a generator's step per symbol (`render`)."""
    every: list[tuple[int, Symbol]] = []
    stack = [(0, symbol) for symbol in reversed(found)]
    while stack:
        depth, symbol = item = stack.pop()
        every.append(item)
        if symbol.children:
            stack.extend([(depth + 1, child) for child in reversed(symbol.children)])
    return every


def _descendants(every: list[tuple[int, Symbol]]) -> dict[int, int]:
    """How many symbols each symbol holds at any depth (children come after their
    parent in `every`, so a backward pass sees them first)."""
    inside: dict[int, int] = {}
    for _, symbol in reversed(every):
        children = symbol.children
        if children:
            inside[id(symbol)] = len(children) + sum([inside[id(child)] for child in children])
        else:
            inside[id(symbol)] = 0
    return inside


def _top_only(found: list[Symbol], inside: dict[int, int], total: int, budget: int) -> Drawn:
    lines: list[str] = []
    size = 0
    next_line = None
    for symbol in found:
        line = _line(0, symbol, inside[id(symbol)])
        if size + len(line) + 1 > budget:
            next_line = symbol.start_line
            break
        lines.append(line)
        size += len(line) + 1
    return Drawn("\n".join(lines), total, len(lines), -1, next_line)
