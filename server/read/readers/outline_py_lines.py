"""The line loop of the Python outline scanner (outline_py.py): Python's blocks by
indentation over the masked lines (strings are `S`, a line inside one starts with
\\x01, a comment is `#`, every bracket is a parenthesis), and the symbols with their
line ranges, as tree-sitter's parse and outline.py's walk find them.

Comments are placed where tree-sitter's scanner places them: one below a header (before
the block's first statement) is the header's; one after a block's last statement stays
in the block while it is indented at least as deep as the block, or as the statement
that follows (so a function's last line can be a comment); one directly above a
statement, in its block, is a sibling that a symbol's first line takes in.

The structure is checked as far as it shapes the outline, and anything else declined
(`Decline`): indentation, a header's form (`def name(...) -> ...:`, `class name(...):`,
a colon in every compound statement), the order of clauses (`elif` after `if`,
`except` after `try`...), a decorator followed by a definition in its block, a line
in brackets indented less than its block (where tree-sitter's scanner may close the
block), the depth and symbol caps.
"""

from __future__ import annotations

import re

from ... import quoting
from .outline import MAX_DEPTH, MAX_NAME_CHARS, MAX_SYMBOLS, Symbol


class Decline(Exception):
    """The scanner cannot be sure: tree-sitter decides."""


def _balanced(levels: int) -> bytes:
    """A parenthesized group nested at most `levels` deep (possessive: no backtracking)."""
    inner = rb"[^()]*+"
    for _ in range(levels - 1):
        inner = rb"(?:[^()]++|\(" + inner + rb"\))*+"
    return rb"\(" + inner + rb"\)"


_GROUP = _balanced(6)
_GROUPS = re.compile(_GROUP)
_GAP = rb"[ \n\x01\\]*+"
_NAME = rb"([A-Za-z_][A-Za-z0-9_]*)"
_DEF = re.compile(
    rb"(?:async +)?def +"
    + _NAME
    + _GAP
    + rb"(?:"
    + _GROUP
    + _GAP
    + rb")??"
    + _GROUP
    + _GAP
    + rb"(?:->(?:[^():#]++|"
    + _GROUP
    + rb")++)?:"
)
_CLASS = re.compile(rb"class +" + _NAME + _GAP + rb"(?:" + _GROUP + _GAP + rb"){0,2}:")
_BARE = re.compile(rb"(?:else|try|finally) *:")
_FORMS = {b"def": _DEF, b"class": _CLASS, b"else": _BARE, b"try": _BARE, b"finally": _BARE}
_SYMBOL_NAME = re.compile(rb"(?:async +)?(?:def|class) +" + _NAME)
_ENDS = b" \n\x01\\#"  # what may follow a header's colon: spaces, a comment
_CLAUSE = re.compile(
    rb"(async +)?(if|elif|else|for|while|try|except|finally|with|def|class)(?![A-Za-z0-9_])"
)
# What each clause may follow in its block, by the clause before it.
_AFTER = {
    b"elif": (b"if", b"elif"),
    b"else": (b"if", b"elif", b"for", b"while", b"except"),
    b"except": (b"try", b"except"),
    b"finally": (b"try", b"except", b"else-try"),
}


class _Block:
    """An indented block: its indent, the symbol whose body it is (if any), the symbol
    its statements belong to with that symbol's depth, and its last statement's clause."""

    __slots__ = ("clause", "depth", "indent", "owner", "symbol")

    def __init__(self, indent: int, symbol: Symbol | None, owner: Symbol | None, depth: int):
        self.indent = indent
        self.symbol = symbol
        self.owner = owner
        self.depth = depth
        self.clause = b""


class Blocks:
    """One pass over the masked lines: `lines` returns the top-level symbols."""

    def __init__(self) -> None:
        self.top: list[Symbol] = []
        self.count = 0
        self.stack = [_Block(0, None, None, 0)]
        self.placed = -1  # the last row holding code or a comment inside the blocks
        # The comments directly above the next statement: (block, first row, last row).
        self.doc: tuple[_Block, int, int] | None = None
        self.opened = False  # the last logical line opened a block, not begun yet
        self.opener: Symbol | None = None  # the symbol whose body that block is
        self.decorated: tuple[_Block, int] | None = None  # the pending decorators
        # The open logical line: its physical lines, first row, keyword and symbol.
        self.parts: list[bytes] = []
        self.row = -1
        self.keyword = b""
        self.symbol: Symbol | None = None

    def lines(self, lines: list[bytes]) -> list[Symbol]:
        stack = self.stack
        depth = 0  # open brackets
        cont = False  # the last line ended with a backslash
        comments: list[tuple[int, int]] = []
        for row, line in enumerate(lines):
            if depth or cont or line[:1] == b"\x01":
                stripped = line.lstrip(b" ")
                # A line in brackets indented less than its block: tree-sitter's scanner
                # may close the block there (after a `.`, an operator).
                if stripped[:1] not in (b"", b"\x01") and (
                    len(line) - len(stripped) < stack[-1].indent
                ):
                    raise Decline
                if not stripped or stripped == b"#":
                    if cont:
                        raise Decline
                    continue
                depth += line.count(b"(") - line.count(b")")
                cont = line.endswith(b"\\")
                self.parts.append(line)
                self.placed = row
                continue
            if self.parts:
                self._end_logical()
            stripped = line.lstrip(b" ")
            if not stripped:
                continue
            indent = len(line) - len(stripped)
            if stripped == b"#":
                comments.append((row, indent))
                continue
            if comments:
                self._comments(comments, indent)
                comments = []
            self._begin(stripped, indent, row)
            depth = stripped.count(b"(") - stripped.count(b")")
            cont = stripped.endswith(b"\\")
            self.placed = row
        if depth or cont:
            raise Decline
        if self.parts:
            self._end_logical()
        if self.opened or self.decorated is not None:
            raise Decline
        if comments:
            self._comments(comments, 0)
        while len(stack) > 1:
            self._close()
        if stack[0].clause == b"try":
            raise Decline
        return self.top

    def _begin(self, stripped: bytes, indent: int, row: int) -> None:
        """A logical line starts: into or out of blocks, then its clause and symbol."""
        stack = self.stack
        if self.opened:
            outer = stack[-1]
            if indent <= outer.indent:
                raise Decline
            symbol = self.opener
            if symbol is None:
                stack.append(_Block(indent, None, outer.owner, outer.depth))
            else:
                stack.append(_Block(indent, symbol, symbol, outer.depth + 1))
            self.opened = False
            self.doc = None
        else:
            while stack[-1].indent > indent:
                self._close()
            if stack[-1].indent != indent:
                raise Decline
        block = stack[-1]
        first = self._doc_start(row)
        self.doc = None
        keyword = b""
        found = _CLAUSE.match(stripped)
        if found is not None:
            keyword = found[2]
            if found[1] and keyword not in (b"def", b"for", b"with"):
                raise Decline
        after = _AFTER.get(keyword)
        if after is not None and block.clause not in after:
            raise Decline
        if after is None and block.clause == b"try":
            raise Decline  # a try with neither except nor finally
        block.clause = b"else-try" if keyword == b"else" and block.clause == b"except" else keyword
        self.parts = [stripped]
        self.row = row
        self.keyword = keyword
        self.symbol = None
        decorated = self.decorated
        if stripped[:1] == b"@":
            if decorated is None:
                self.decorated = (block, first)
            elif decorated[0] is not block:
                raise Decline
            block.clause = b"@"
        elif keyword in (b"def", b"class"):
            if decorated is not None:
                if decorated[0] is not block:
                    raise Decline
                first = decorated[1]
                self.decorated = None
            self.symbol = self._symbol(stripped, keyword, row, first)
        elif decorated is not None:
            raise Decline  # a decorator on something neither a def nor a class

    def _end_logical(self) -> None:
        """A logical line ends: check its form; a header opens a block, a one-line
        definition ends here."""
        parts, keyword = self.parts, self.keyword
        self.parts = []
        end = parts[-1].rstrip(b" ")
        if end.endswith(b"#"):
            end = end[:-1].rstrip(b" ")
        opens = end.endswith(b":")
        if not keyword:
            if opens:
                raise Decline  # a colon ending what is not a compound statement
            return
        text = b"\n".join(parts)
        form = _FORMS.get(keyword)
        if form is not None:
            found = form.match(text)
            if found is None:
                raise Decline
            rest = text[found.end() :].strip(_ENDS)
        else:
            flat = _GROUPS.sub(b"S", text)
            colon = flat.find(b":")
            if b"(" in flat or b")" in flat or colon < 0:
                raise Decline  # nested past what the check reads, or no colon
            rest = b"" if opens else flat[colon + 1 :].strip(_ENDS)
        if opens:
            if rest:
                raise Decline
            self.opened, self.opener = True, self.symbol
        elif not rest:
            raise Decline
        elif self.symbol is not None:
            self.symbol.end_line = self.placed + 1

    def _comments(self, comments: list[tuple[int, int]], indent: int) -> None:
        """Place the comment lines before a statement indented `indent`: below a header
        they are the header's; else each closes the blocks deeper than both itself and
        the statement."""
        if self.opened:
            return
        stack = self.stack
        for row, at in comments:
            while stack[-1].indent > at and indent < stack[-1].indent:
                self._close()
            block = stack[-1]
            doc = self.doc
            if doc is not None and doc[0] is block and doc[2] == row - 1:
                self.doc = (block, doc[1], row)
            else:
                self.doc = (block, row, row)
            self.placed = row

    def _doc_start(self, row: int) -> int:
        doc = self.doc
        if doc is not None and doc[0] is self.stack[-1] and doc[2] == row - 1:
            return doc[1]
        return row

    def _close(self) -> None:
        block = self.stack.pop()
        if block.clause == b"try":
            raise Decline
        if block.symbol is not None:
            block.symbol.end_line = self.placed + 1

    def _symbol(self, stripped: bytes, keyword: bytes, row: int, first: int) -> Symbol:
        name_at = _SYMBOL_NAME.match(stripped)
        if name_at is None:
            raise Decline
        block = self.stack[-1]
        parent = block.owner
        if block.depth >= MAX_DEPTH or self.count + 1 >= MAX_SYMBOLS:
            raise Decline
        name = name_at[1].decode("ascii")
        if len(name) > MAX_NAME_CHARS:
            raise Decline
        kind = "class" if keyword == b"class" else "function"
        if kind == "function" and parent is not None and parent.kind == "class":
            kind = "method"
        qualified = f"{parent.qualified_name}.{name}" if parent is not None else name
        symbol = Symbol(kind, name, qualified, first + 1, row + 1, f"{kind} {quoting.name(name)}")
        (parent.children if parent is not None else self.top).append(symbol)
        self.count += 1
        return symbol
