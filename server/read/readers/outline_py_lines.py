"""The line loop of the Python outline scanner (outline_py.py): Python's blocks by
indentation over the masked text's logical lines (strings are `S`, a line inside one
starts with \\x01, a comment is `#`, every bracket is a parenthesis), and the symbols
with their line ranges, as tree-sitter's parse and outline.py's walk find them.

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
from .outline_symbol import MAX_DEPTH, MAX_NAME_CHARS, MAX_SYMBOLS, Symbol

_UNDERSCORE_QUOTED = quoting.name("_") == '"_"'


class Decline(Exception):
    """The scanner cannot be sure: tree-sitter decides."""


def _balanced(levels: int) -> bytes:
    """A parenthesized group nested at most `levels` deep (possessive: no backtracking)."""
    inner = rb"[^()]*+"
    for _ in range(levels - 1):
        inner = rb"(?:[^()]++|\(" + inner + rb"\))*+"
    return rb"\(" + inner + rb"\)"


# Brackets nested deeper than this are declined (outline_py._balanced).
MAX_NESTING = 10
_GROUP = _balanced(MAX_NESTING)
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
_INITIALS = frozenset(b"acdefitw")  # the first letters of _CLAUSE's words
_OPENERS = frozenset((b"if", b"elif", b"for", b"while", b"with", b"except"))
_ASYNC = frozenset((b"def", b"for", b"with"))
# A logical line: its indent, and its text up to the line feed that ends it (one inside
# brackets, after a backslash or before a line inside a string does not). Possessive:
# no backtracking; the masked text's brackets are balanced and nested at most
# MAX_NESTING deep, so each line is read whole.
_LOGICAL = re.compile(rb"( *)((?:[^()\n\\]++|\\\n|\n\x01|" + _GROUP + rb")*+)\n")
_LOW: dict[int, re.Pattern[bytes]] = {}  # by indent: a continued line indented less
_LOOSE_CONTINUATION = re.compile(rb"\\\n *+(?:#|\n|$)")
# What each clause may follow in its block, by the clause before it.
_AFTER = {
    b"elif": (b"if", b"elif"),
    b"else": (b"if", b"elif", b"for", b"while", b"except"),
    b"except": (b"try", b"except"),
    b"finally": (b"try", b"except", b"else-try"),
}


def _check_continued(body: bytes, indent: int) -> None:
    """A logical line on several lines: none of them (but inside a string, a comment
    line, or one that starts with a closing bracket) indented less than its block, where
    tree-sitter's scanner may close the block (after a `.`, an operator); no backslash
    before a blank or a comment line."""
    if indent:
        low = _LOW.get(indent)
        if low is None:
            low = _LOW[indent] = re.compile(rb"\n {0,%d}[^ \n\x01#)]" % (indent - 1))
        if low.search(body):
            raise Decline
    if b"\\" in body and _LOOSE_CONTINUATION.search(body):
        raise Decline


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

    def lines(self, masked: bytes) -> list[Symbol]:
        """The symbols of the masked text (ending with a line feed). `_LOGICAL` cuts it
        into logical lines in C; the loop keeps its state in locals (most logical lines
        are a simple statement in the block of the one before: a few steps); blocks
        closing, comments, symbols and compound statements' forms are methods."""
        stack = self.stack
        block = stack[-1]
        comments: list[tuple[int, int]] = []
        placed = -1  # the last row of code
        opened = False  # the last logical line opened a block, not begun yet
        opener: Symbol | None = None  # the definition whose body that block is
        decorated: tuple[_Block, int] | None = None  # the pending decorators' block, row
        doc: tuple[_Block, int, int] | None = None  # comments right above: block, rows
        # Whether the next statement needs more than the loop's own few steps: comments
        # before it, a block opened or decorators pending.
        special = False
        row = 0
        for spaces, body in _LOGICAL.findall(masked):
            start = row
            indent = len(spaces)
            if b"\n" in body:
                row += body.count(b"\n") + 1
                multi = True
            else:
                row += 1
                multi = False
            if not body:
                continue
            if body == b"#":
                comments.append((start, indent))
                special = True
                continue
            found = _CLAUSE.match(body) if body[0] in _INITIALS else None
            if not (special or multi or found or indent != block.indent or body[0] == 64):  # @
                # A simple statement on one line in the block of the one before.
                if block.clause:
                    if block.clause == b"try":
                        raise Decline  # a try with neither except nor finally
                    block.clause = b""
                if b":" in body and body.rstrip(b" #").endswith(b":"):
                    raise Decline  # a colon ending what is not a compound statement
                placed = start
                continue
            if comments:
                if not opened:  # below a header, comments are the header's
                    self.placed = placed
                    doc = self._comments(comments, indent, doc)
                    block = stack[-1]
                    placed = self.placed
                comments = []
            if opened:
                if indent <= block.indent:
                    raise Decline
                if opener is None:
                    block = _Block(indent, None, block.owner, block.depth)
                else:
                    block = _Block(indent, opener, opener, block.depth + 1)
                stack.append(block)
                opened = False
                doc = None
            elif indent != block.indent:
                while block.indent > indent:  # blocks closing (as `_close`, in line)
                    if block.clause == b"try":
                        raise Decline
                    if block.symbol is not None:
                        block.symbol.end_line = placed + 1
                    stack.pop()
                    block = stack[-1]
                if block.indent != indent:
                    raise Decline
            if multi:
                _check_continued(body, block.indent)
            first = start
            if doc is not None:
                if doc[0] is block and doc[2] == start - 1:
                    first = doc[1]
                doc = None
            clause = block.clause
            placed = row - 1
            if found is None:
                if clause:
                    if clause == b"try":
                        raise Decline  # a try with neither except nor finally
                    block.clause = b""
                if body[0] == 64:  # @
                    if decorated is None:
                        decorated = (block, first)
                    elif decorated[0] is not block:
                        raise Decline
                    block.clause = b"@"
                elif decorated is not None:
                    raise Decline  # a decorator on something neither a def nor a class
                if b":" in body and body.rstrip(b" #").endswith(b":"):
                    raise Decline
                special = decorated is not None
                continue
            keyword = found[2]
            if found[1] and keyword not in _ASYNC:
                raise Decline
            after = _AFTER.get(keyword)
            if after is not None:
                if clause not in after:
                    raise Decline
            elif clause == b"try":
                raise Decline
            block.clause = b"else-try" if keyword == b"else" and clause == b"except" else keyword
            symbol = None
            if keyword == b"def" or keyword == b"class":
                if decorated is not None:
                    if decorated[0] is not block:
                        raise Decline
                    first = decorated[1]
                    decorated = None
                symbol = self._symbol(body, keyword, start, first, block)
            elif decorated is not None:
                raise Decline
            if keyword in _OPENERS and not multi and body.rstrip(b" #")[-1:] == b":":
                opened, opener = True, None
            else:
                self.placed = placed
                opened = self._compound(body, keyword, symbol)
                opener = symbol
            special = opened
        if row != masked.count(b"\n"):
            raise Decline  # a line left unread (a safety net: the checks before prevent it)
        self.placed = placed
        if opened or decorated is not None:
            raise Decline
        if comments:
            self._comments(comments, 0, doc)
        while len(stack) > 1:
            self._close()
        if stack[0].clause == b"try":
            raise Decline
        return self.top

    def _compound(self, text: bytes, keyword: bytes, symbol: Symbol | None) -> bool:
        """A compound statement's logical line ends: whether it opens a block (else its
        body is on the line: a one-line definition ends here). Its form is checked."""
        opens = text.rstrip(b" #").endswith(b":")
        if keyword == b"def" and b"lambda" in text and b"->" in text:
            raise Decline  # a lambda in the return annotation: its colon is no header's
        form = _FORMS.get(keyword)
        if form is not None:
            found = form.match(text)
            if found is None:
                raise Decline
            rest = text[found.end() :].strip(_ENDS)
        elif opens:
            rest = b""
        else:
            flat = _GROUPS.sub(b"S", text)
            colon = flat.find(b":")
            if b"(" in flat or b")" in flat or colon < 0:
                raise Decline  # nested past what the check reads, or no colon
            rest = flat[colon + 1 :].strip(_ENDS)
        if opens:
            if rest:
                raise Decline
            return True
        if not rest:
            raise Decline
        if symbol is not None:
            symbol.end_line = self.placed + 1
        return False

    def _comments(
        self,
        comments: list[tuple[int, int]],
        indent: int,
        doc: tuple[_Block, int, int] | None,
    ) -> tuple[_Block, int, int] | None:
        """Place the comment lines before a statement indented `indent`: each closes the
        blocks deeper than both itself and the statement. Returns the run of them right
        above the statement, with their block."""
        stack = self.stack
        for row, at in comments:
            while stack[-1].indent > at and indent < stack[-1].indent:
                self._close()
            block = stack[-1]
            if doc is not None and doc[0] is block and doc[2] == row - 1:
                doc = (block, doc[1], row)
            else:
                doc = (block, row, row)
            self.placed = row
        return doc

    def _close(self) -> None:
        block = self.stack.pop()
        if block.clause == b"try":
            raise Decline
        if block.symbol is not None:
            block.symbol.end_line = self.placed + 1

    def _symbol(
        self, stripped: bytes, keyword: bytes, row: int, first: int, block: _Block
    ) -> Symbol:
        name_at = _SYMBOL_NAME.match(stripped)
        if name_at is None:
            raise Decline
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
        # The naming rule (quoting.name) on an ASCII identifier: bare when all letters and
        # digits, else quoted as the rule quotes "_" (no character in it is escaped).
        shown = name if name.isalnum() or not _UNDERSCORE_QUOTED else f'"{name}"'
        symbol = Symbol(kind, name, qualified, first + 1, row + 1, f"{kind} {shown}")
        (parent.children if parent is not None else self.top).append(symbol)
        self.count += 1
        return symbol
