"""The outline of a Python file without tree-sitter (issue 34): the same symbols as
outline.py's parse and walk, from a scanner that runs mostly in C, or None when it
cannot be sure of them (the caller then parses).

Three passes. `re.sub` masks every string and comment (a string becomes `S`, a line
inside it starts with \\x01, a comment becomes `#`), so no quote, `#` or bracket in
them is seen again. Checks over the masked text in C then decline whatever the scanner
does not model: a quote left over (a string it could not settle, or a 3.12 f-string
nesting its own quotes), a backslash that does not end a line, a bracket out of place,
`match`/`case` (tree-sitter lists no symbol inside them), `except*`, a compound
statement after `;` or `:`. Last, one loop over the lines follows Python's blocks by
indentation, as tree-sitter's scanner does, including where it puts comments: one
below a header belongs to the header; one after a block's last statement stays in the
block while it is indented at least as deep (so a function's last line can be a
comment); one directly above a symbol, in its block, starts the symbol. Anything
else out of the ordinary (an indentation error, a decorator on nothing, tabs, form
feeds, carriage returns, a BOM, surrogates, control characters, a name that is not
ASCII, a cap passed) is declined rather than guessed.

Every step is linear in the file: the regular expressions use possessive quantifiers
(no backtracking), the bracket check stops after `_BRACKET_PASSES` passes.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ... import quoting
from .outline import MAX_DEPTH, MAX_NAME_CHARS, MAX_SYMBOLS, Symbol

# Larger files go to tree-sitter, whose parse has its own deadline.
MAX_BYTES = 4_000_000
# Brackets nested deeper than this are declined (each pass removes one level).
_BRACKET_PASSES = 64

_REFUSED = re.compile("[\x00-\x09\x0b-\x1f\x7f\ufeff\ud800-\udfff]")
_TOKENS = re.compile(
    rb"#[^\n]*+"
    rb'|"""(?:[^"\\]++|\\.|"(?!""))*+"""'
    rb"|'''(?:[^'\\]++|\\.|'(?!''))*+'''"
    rb'|"(?:[^"\\\n]++|\\.)*+"'
    rb"|'(?:[^'\\\n]++|\\.)*+'",
    re.S,
)
_PREFIXES = {b"r", b"u", b"b", b"br", b"rb", b"f", b"fr", b"rf"}
_IDENT = bytes(range(48, 58)) + bytes(range(65, 91)) + bytes(range(97, 123)) + b"_"
# What the masked text may not hold: a quote (an unsettled string), a byte that is not
# ASCII (outside strings and comments: a name tree-sitter may read otherwise), a
# backslash not ending its line.
_STRAY = re.compile(rb"[\"'\x80-\xff]|\\(?!\n)")
_WORD_END = rb"(?![A-Za-z0-9_])"
# What the scanner does not model: `match`/`case` (no symbol is listed inside them),
# `except*`, a compound statement after `;` or `:` on its line, a lambda in a return
# annotation (its colon would end the header).
_ODD = re.compile(
    rb"^ *(?:match|case)(?![A-Za-z0-9_]| *(?:[=.,)\]}:]|[-+*/%&|^<>@]=))"
    rb"|except *\*"
    rb"|[;:] *(?:async +)?(?:def|class)" + _WORD_END + rb"|; *(?:if|elif|else|for|while|with"
    rb"|try|except|finally|async|@)" + _WORD_END + rb"|\blambda\b[^\n]*->|->[^\n]*\blambda\b",
    re.M,
)
_NOT_BRACKETS = re.compile(rb"[^()\[\]{}]++")
_ONE_KIND = bytes.maketrans(b"[{]}", b"(())")
_KEYWORD = re.compile(rb"(?:async +)?(?:def|class)" + _WORD_END)
_HEADER = re.compile(rb"(?:async +)?(def|class) +([A-Za-z_][A-Za-z0-9_]*) *([(\[:])")


class _Decline(Exception):
    """The scanner cannot be sure: tree-sitter decides."""


def scan(text: str) -> list[Symbol] | None:
    """The top-level symbols of a Python text as outline.symbols finds them, each with
    its nested ones; None when the scanner declines."""
    if len(text) > MAX_BYTES or _REFUSED.search(text):
        return None
    data = text.encode("utf-8")
    try:
        masked = _TOKENS.sub(_masker(data), data)
        if _STRAY.search(masked) or _ODD.search(masked) or not _balanced(masked):
            return None
        return _Blocks().lines(masked.translate(_ONE_KIND).split(b"\n"))
    except _Decline:
        return None


def _masker(data: bytes) -> Callable[[re.Match[bytes]], bytes]:
    def mask(match: re.Match[bytes]) -> bytes:
        token = match.group()
        if token[0] == 35:  # a comment
            return b"#"
        start = match.start()
        if start and data[start - 1] in _IDENT:
            _check_prefix(data, start, token)
        lines = token.count(b"\n")
        return b"S" + b"\n\x01" * lines if lines else b"S"

    return mask


def _check_prefix(data: bytes, start: int, token: bytes) -> None:
    """A string's prefix is one Python knows; an f-string's braces pair up (one cut
    short by a nested quote of its own kind, as 3.12 allows, does not)."""
    begin = start
    while begin > 0 and start - begin < 3 and data[begin - 1] in _IDENT:
        begin -= 1
    prefix = data[begin:start].lower()
    if (begin > 0 and data[begin - 1] in _IDENT) or prefix not in _PREFIXES:
        raise _Decline
    if b"f" in prefix:
        inner = token.replace(b"{{", b"").replace(b"}}", b"")
        if inner.count(b"{") != inner.count(b"}"):
            raise _Decline


def _balanced(masked: bytes) -> bool:
    """Every bracket closes the one last opened."""
    left = _NOT_BRACKETS.sub(b"", masked)
    for _ in range(_BRACKET_PASSES):
        if not left:
            return True
        shorter = left.replace(b"()", b"").replace(b"[]", b"").replace(b"{}", b"")
        if len(shorter) == len(left):
            return False
        left = shorter
    return not left


class _Block:
    """An indented block: its indent, the symbol whose body it is (if any), and the
    symbol its statements belong to, with that symbol's depth."""

    __slots__ = ("depth", "indent", "owner", "symbol")

    def __init__(self, indent: int, symbol: Symbol | None, owner: Symbol | None, depth: int):
        self.indent = indent
        self.symbol = symbol
        self.owner = owner
        self.depth = depth


class _Blocks:
    """The line loop: blocks by indentation, symbols with their line ranges."""

    def __init__(self) -> None:
        self.top: list[Symbol] = []
        self.count = 0
        self.stack = [_Block(0, None, None, 0)]
        self.placed = -1  # the last row holding code or a comment inside the blocks
        # The comments directly above the next statement: (block, first row, last row).
        self.doc: tuple[_Block, int, int] | None = None

    def lines(self, lines: list[bytes]) -> list[Symbol]:
        stack = self.stack
        depth = 0  # open brackets
        cont = False  # the last line ended with a backslash
        logical: Symbol | None = None  # the def/class the open logical line starts
        tail = b""  # the open logical line's last physical line ("" when none is open)
        tail_row = -1
        header: tuple[int, Symbol | None] | None = None  # a block opened, not yet indented
        decorated = -1  # the first row of pending decorators
        comments: list[tuple[int, int]] = []
        for row, line in enumerate(lines):
            if depth or cont or line[:1] == b"\x01":
                stripped = line.lstrip(b" ")
                # A line inside brackets indented less than its block: tree-sitter's
                # scanner may close the block there (after a `.`, an operator).
                if (
                    stripped[:1] not in (b"", b"\x01")
                    and len(line) - len(stripped) < stack[-1].indent
                ):
                    raise _Decline
                if not stripped or stripped == b"#":
                    if cont:
                        raise _Decline
                    continue
                depth += line.count(b"(") - line.count(b")")
                cont = line.endswith(b"\\")
                tail, tail_row = line, row
                continue
            if tail:
                header = self._end_line(tail, tail_row, logical, stack[-1])
                if header is None and decorated < 0 and logical is not None:
                    logical.end_line = tail_row + 1
                tail, logical = b"", None
            stripped = line.lstrip(b" ")
            if not stripped:
                continue
            indent = len(line) - len(stripped)
            if stripped == b"#":
                comments.append((row, indent))
                continue
            if comments:
                self._comments(comments, indent, header is not None)
                comments = []
            if header is not None:
                outer = stack[-1]
                if indent <= outer.indent:
                    raise _Decline
                symbol = header[1]
                if symbol is None:
                    stack.append(_Block(indent, None, outer.owner, outer.depth))
                else:
                    stack.append(_Block(indent, symbol, symbol, outer.depth + 1))
                header = None
                self.doc = None
            else:
                while stack[-1].indent > indent:
                    self._close()
                if stack[-1].indent != indent:
                    raise _Decline
            first = self._doc_start(row)
            self.doc = None
            if stripped[:1] == b"@":
                if decorated < 0:
                    decorated = first
            elif _KEYWORD.match(stripped):
                logical = self._symbol(stripped, row, first if decorated < 0 else decorated)
                decorated = -1
            elif decorated >= 0:
                raise _Decline  # a decorator on something neither a def nor a class
            depth = line.count(b"(") - line.count(b")")
            cont = line.endswith(b"\\")
            tail, tail_row = line, row
            self.placed = row
        if depth or cont:
            raise _Decline
        if tail:
            header = self._end_line(tail, tail_row, logical, stack[-1])
            if header is None and decorated < 0 and logical is not None:
                logical.end_line = tail_row + 1
        if header is not None or decorated >= 0:
            raise _Decline
        if comments:
            self._comments(comments, 0, False)
        while len(stack) > 1:
            self._close()
        return self.top

    def _end_line(
        self, tail: bytes, row: int, logical: Symbol | None, block: _Block
    ) -> tuple[int, Symbol | None] | None:
        """At the end of a logical line: the block it opens (it ends with a colon), or
        None. Its last row counts as placed."""
        self.placed = max(self.placed, row)
        end = tail.rstrip(b" ")
        if end.endswith(b"#"):
            end = end[:-1].rstrip(b" ")
        if end.endswith(b":"):
            return (block.indent, logical)
        return None

    def _comments(self, comments: list[tuple[int, int]], indent: int, in_header: bool) -> None:
        """Place the comment lines before a statement indented `indent`, as
        tree-sitter's scanner does: below a header they are the header's; else each
        closes the blocks deeper than both itself and the statement."""
        if in_header:
            return
        stack = self.stack
        for row, at in comments:
            while stack[-1].indent > at and indent < stack[-1].indent:
                self._close()
            block = stack[-1]
            run = self.doc
            if run is not None and run[0] is block and run[2] == row - 1:
                self.doc = (block, run[1], row)
            else:
                self.doc = (block, row, row)
            self.placed = row

    def _doc_start(self, row: int) -> int:
        run = self.doc
        if run is not None and run[0] is self.stack[-1] and run[2] == row - 1:
            return run[1]
        return row

    def _close(self) -> None:
        block = self.stack.pop()
        if block.symbol is not None:
            block.symbol.end_line = self.placed + 1

    def _symbol(self, stripped: bytes, row: int, first: int) -> Symbol:
        match = _HEADER.match(stripped)
        if match is None or (match[1] == b"def" and match[3] == b":"):
            raise _Decline
        block = self.stack[-1]
        parent = block.owner
        if block.depth >= MAX_DEPTH or self.count + 1 >= MAX_SYMBOLS:
            raise _Decline
        name = match[2].decode("ascii")
        if len(name) > MAX_NAME_CHARS:
            raise _Decline
        kind = "class" if match[1] == b"class" else "function"
        if kind == "function" and parent is not None and parent.kind == "class":
            kind = "method"
        qualified = f"{parent.qualified_name}.{name}" if parent is not None else name
        symbol = Symbol(kind, name, qualified, first + 1, row + 1, f"{kind} {quoting.name(name)}")
        (parent.children if parent is not None else self.top).append(symbol)
        self.count += 1
        return symbol
