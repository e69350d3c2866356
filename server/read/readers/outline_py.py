"""The outline of a Python file without tree-sitter (issue 34): the same symbols as
outline.py's parse and walk, from a scanner that runs mostly in C, or None when it
cannot be sure of them (the caller then parses).

Three passes. `re.sub` masks every string and comment (a string becomes `S`, a line
inside it is \x01 and its last line starts \x01\x01, a comment becomes `#`), so no
quote, `#` or bracket in them is seen again. Checks over the masked text in C then
decline whatever the scanner does not model: a quote left over (a string it could not
settle, or a 3.12 f-string nesting its own quotes), a byte that is not ASCII, a
backslash that does not end a line, brackets out of place or nested past
`MAX_NESTING`, `match`/`case` (tree-sitter lists no symbol inside them), `except*`, a
compound statement after `;`, a lambda in a return annotation. Last, a loop over the
logical lines (outline_py_lines.py, cut in C) follows Python's blocks by indentation
as tree-sitter's scanner does, and declines what it would recover from otherwise: a
`def` or `class` word that starts no listed symbol, tabs, form feeds, carriage
returns, a BOM, surrogates, control characters, a cap passed.

Every step is linear in the file: the regular expressions use possessive quantifiers
(no backtracking), the bracket check stops after `MAX_NESTING` passes, and a text
over `MAX_CHARS` or `MAX_LINES` goes to tree-sitter (whose parse and walk have their
deadlines).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .outline_py_lines import MAX_NESTING, Blocks, Decline
from .outline_symbol import Symbol

# Larger files go to tree-sitter, whose parse and walk have their own deadlines: the
# scanner's time is bounded by these (about 0.1 s at most).
MAX_CHARS = 2_000_000
MAX_LINES = 100_000
# Each pass of the bracket check removes one level.
_BRACKET_PASSES = MAX_NESTING

# Bytes a scanned text may not hold: every control character but the line feed (tabs,
# form feeds, carriage returns, NUL...); `translate` leaves only those.
_NOT_CONTROLS = bytes(i for i in range(256) if (i >= 32 and i != 127) or i == 10)
# A comment or a string; a string left open matches to its end too (the end of its line,
# or of the text), so that no later quote is tried as a start (which would make the
# search quadratic), and the mask declines it: its closing group did not match.
_TOKENS = re.compile(
    rb"#[^\n]*+"
    rb'|"""(?:[^"\\]++|\\.|"(?!""))*+(""")?'
    rb"|'''(?:[^'\\]++|\\.|'(?!''))*+(''')?"
    rb'|"(?:[^"\\\n]++|\\.)*+(")?'
    rb"|'(?:[^'\\\n]++|\\.)*+(')?",
    re.S,
)
_FIELD_MARKS = re.compile(rb"[{}'\"]")
_PREFIXES = {b"r", b"u", b"b", b"br", b"rb", b"f", b"fr", b"rf"}
_IDENT = bytes(range(48, 58)) + bytes(range(65, 91)) + bytes(range(97, 123)) + b"_"
_WORD_END = rb"(?![A-Za-z0-9_])"
# What the scanner does not model: `except*`, a compound statement after `;`. Each
# starts with a literal: the search skips ahead in C.
_ODD = [
    re.compile(rb"except *\*"),
    re.compile(
        rb";[ \\\n]*+(?:if|elif|else|for|while|with|try|except|finally|async|@)" + _WORD_END
    ),
]
# `match` and `case` starting a line, not as names (`match = ...`): a match statement,
# inside which tree-sitter lists no symbol.
# (After a line feed: the literal lets the search skip ahead in C; the first line is
# matched with a line feed put before it.)
_SOFT = re.compile(rb"\n *+(?:match|case)(?![A-Za-z0-9_]| *(?:[=.,)\]}:]|[-+*/%&|^<>@]=))")
_LOOSE_BACKSLASH = re.compile(rb"\\(?!\n)")
_BRACKETS_DELETE = bytes(i for i in range(256) if i not in b"()[]{}")
_ONE_KIND = bytes.maketrans(b"[{]}", b"(())")
# The words `def` and `class`, the literal first (the search skips ahead in C).
_KEYWORDS = [
    re.compile(word + rb"(?<![A-Za-z0-9_]" + word + rb")" + _WORD_END)
    for word in (b"def", b"class")
]


def scan(text: str) -> list[Symbol] | None:
    """The top-level symbols of a Python text as tree-sitter's parse and outline.py's
    walk find them, each with its nested ones; None when the scanner declines."""
    counted = scan_counted(text)
    return None if counted is None else counted[0]


def scan_counted(text: str) -> tuple[list[Symbol], int] | None:
    """`scan`, with how many symbols there are in all."""
    if len(text) > MAX_CHARS or "\ufeff" in text:
        return None
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates
        return None
    if data.translate(None, _NOT_CONTROLS) or data.count(b"\n") >= MAX_LINES:
        return None
    try:
        masked = _TOKENS.sub(_masker(data), data)
        if not _plain(masked) or not _balanced(masked):
            return None
        blocks = Blocks()
        found = blocks.lines(masked.translate(_ONE_KIND) + b"\n")
        # Every `def` and `class` outside strings and comments starts a listed symbol
        # (one inside brackets or after other code is an error tree-sitter recovers from).
        if not _all_listed(masked, blocks.count):
            return None
        return found, blocks.count
    except Decline:
        return None


def _plain(masked: bytes) -> bool:
    """Whether the masked text holds nothing the scanner does not model: no quote (a
    string not settled), no byte that is not ASCII (outside strings and comments: a
    name tree-sitter may read otherwise), no backslash but at a line's end, no `_ODD`,
    no match statement."""
    if b'"' in masked or b"'" in masked or not masked.isascii():
        return False
    if _LOOSE_BACKSLASH.search(masked):
        return False
    if any(odd.search(masked) for odd in _ODD):
        return False
    return not (_SOFT.match(b"\n" + masked[:200]) or _SOFT.search(masked))


def _all_listed(masked: bytes, count: int) -> bool:
    """Whether the masked text holds `count` words `def` and `class`."""
    return sum(len(word.findall(masked)) for word in _KEYWORDS) == count


def _masker(data: bytes) -> Callable[[re.Match[bytes]], bytes]:
    def mask(match: re.Match[bytes]) -> bytes:
        token = match.group()
        if token[0] == 35:  # a comment
            return b"#"
        if match.lastindex is None:
            raise Decline  # a string left open
        quotes = 3 if match.lastindex < 3 else 1
        start = match.start()
        if start and data[start - 1] in _IDENT:
            _check_prefix(data, start, token, quotes)
        lines = token.count(b"\n")
        # A line inside the string is \x01 alone, its last line starts \x01\x01.
        return b"S" + b"\n\x01" * lines + b"\x01" if lines else b"S"

    return mask


def _check_prefix(data: bytes, start: int, token: bytes, quotes: int) -> None:
    """A string's prefix is one Python knows; an f-string's braces pair up (one cut
    short by a nested quote of its own kind, as 3.12 allows, does not)."""
    begin = start
    while begin > 0 and start - begin < 3 and data[begin - 1] in _IDENT:
        begin -= 1
    prefix = data[begin:start].lower()
    if (begin > 0 and data[begin - 1] in _IDENT) or prefix not in _PREFIXES:
        raise Decline
    if b"f" in prefix and b"{" in token and not _fields_close(token[quotes:-quotes]):
        raise Decline


def _fields_close(inner: bytes) -> bool:
    """Whether every replacement field of an f-string's text closes: where a nested
    quote of the string's own kind cut it short (3.12), one is left open."""
    depth = at = 0
    while (found := _FIELD_MARKS.search(inner, at)) is not None:
        at = found.end()
        char = inner[found.start()]
        if depth == 0:
            if char in b"'\"":
                continue
            if inner[at : at + 1] == bytes((char,)):  # {{ or }}: a brace in the text
                at += 1
            elif char == 0x7D:
                return False
            else:
                depth = 1
        elif char in b"{}":
            depth += 1 if char == 0x7B else -1
        else:  # a string inside a field: its braces are not the field's
            end = inner.find(bytes((char,)), at)
            if end < 0:
                return False
            at = end + 1
    return depth == 0


def _balanced(masked: bytes) -> bool:
    """Every bracket closes the one last opened."""
    left = masked.translate(None, _BRACKETS_DELETE)
    for _ in range(_BRACKET_PASSES):
        if not left:
            return True
        shorter = left.replace(b"()", b"").replace(b"[]", b"").replace(b"{}", b"")
        if len(shorter) == len(left):
            return False
        left = shorter
    return not left
