"""The one exception type of the core, and the error kinds of the protocol.

Every failure an agent can cause is a `ReadkeeperError` with a `kind` from DESIGN.md and
a message written for the agent: what happened, and the next call that will work.
Front ends turn it into their own error shape (a JSON-RPC error with `data.kind`, a CLI
exit code); nothing else in the core raises to the user.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Literal

from . import quoting

ErrorKind = Literal[
    "not_found",
    "outside_workspace",
    "is_directory",
    "binary",
    "too_large",
    "token_limit",
    "pages_required",
    "not_read",
    "stale",
    "dirty_buffer",
    "no_match",
    "ambiguous_match",
    "no_change",
    "bad_params",
    "unsupported",
    "encrypted",
    "corrupt",
    "internal",
    "cancelled",
]


# The data fields that hold names (of files, folders, roots, symbols): where the message
# names one, it shows it as quoting.name does, so no name can break the message's lines
# or pose as its prose.
_NAME_FIELDS = (
    "file_path",
    "path",
    "new_path",
    "real_path",
    "root",
    "roots",
    "files",
    "symbol",
    "suggestions",
    "paths",
)


# The data fields that hold a file's own text which the message shows too (a `stale`
# refusal's diff, a `no_match`'s closest lines, an anchored edit's `stale` lines as they
# are now, a damaged notebook's numbered lines around its fault): never readkeeper's
# words, so no front end rewords them (hints.rewrite) and no name in them is quoted. A
# refusal that shows a file's text puts that text in one of these fields, as the message
# shows it (tests/search/test_hints_verbatim.py holds each such refusal to it).
CONTENT_FIELDS = ("diff", "closest", "current", "excerpt")
# How every diff readkeeper writes begins (read/diffs.py): its first header line. What
# stands in a diff's place without it (a change too costly to diff, said so) is
# readkeeper's sentence, reworded by every front end like any note.
DIFF_HEADER = "--- "


def is_diff(text: str) -> bool:
    """Whether `text`, found where a diff goes, is one (a file's lines) rather than
    readkeeper's words standing in for one."""
    return text.startswith(DIFF_HEADER)


def shown_content(data: dict[str, Any]) -> tuple[str, ...]:
    """The file texts error `data` holds (`CONTENT_FIELDS`): what its message shows as
    it is, and what a front end rewording the message must leave as it is."""
    return tuple(
        v
        for k in CONTENT_FIELDS
        if isinstance(v := data.get(k), str) and v and (k != "diff" or is_diff(v))
    )


def _shown(message: str, data: dict[str, Any]) -> str:
    content = shown_content(data)
    if content:  # a file's text, as it is: only the words around it are readkeeper's
        cut = re.compile("(" + "|".join(map(re.escape, sorted(content, key=len)[::-1])) + ")")
        parts = cut.split(message)
        return "".join(p if i % 2 else _words_shown(p, data) for i, p in enumerate(parts))
    return _words_shown(message, data)


# The most characters of readkeeper's words in one refusal, around the file text it
# shows: its sentences, names cut past MAX_NAME_CHARS and calls past MAX_CALL_NAME_CHARS,
# come to a few thousand. More is a value of the call echoed whole (round 38: an unknown
# parameter named by 600,000 spaces made a refusal of 1.8 MB, which the SDK's HTTP
# client drops): whatever said it, its middle is cut, marked as names are.
MAX_WORDS_CHARS = 16_000
# The most items a list in a refusal's data holds (line numbers of every place an
# old_string matches: 130,000 made 929,434 characters of structured content: round 38).
MAX_DATA_ITEMS = 1000


def _bounded(words: str) -> str:
    if len(words) <= MAX_WORDS_CHARS:
        return words
    half = MAX_WORDS_CHARS // 2
    return cut_middle(words, half, half, part=lambda text: text)


def _words_shown(message: str, data: dict[str, Any]) -> str:
    odd: dict[str, str] = {}  # each name not shown bare, and how it is shown
    cut: dict[str, str] = {}  # each name too long to show whole, as it and its quoted form
    for named in _names(data):
        shown = quoting.name(named)
        if len(shown) > MAX_NAME_CHARS:
            cut[named] = cut[shown] = shown_name(named)
        elif shown != named:
            odd[named] = shown
    if odd or cut:
        # One pass, the names as shown first (the message quoted them already: kept as
        # they are, never quoted again), then each name as it is, longest first: a name
        # given twice (a path and its suggestion), or one inside another, is quoted once;
        # a name too long is cut wherever the message's words say it. A next call's
        # params were cut as the call was written (hints.call: longer, so it can be sent).
        as_shown = sorted({*odd.values(), *cut}, key=len, reverse=True)
        as_named = sorted(odd, key=len, reverse=True)
        wanted = {**odd, **cut}
        found = [*as_shown, *as_named]
        message = _outside_calls(message, lambda text: _replaced(text, found, wanted))
    # Lines break at LF only: the message's own (before a numbered excerpt or a diff,
    # whose lines are escaped already); any other break from a file is escaped.
    return _bounded(quoting.line(message))


def _replaced(text: str, found: list[str], wanted: dict[str, str]) -> str:
    """`text` with each of `found` replaced by `wanted`'s form of it (itself when none),
    as one regex of them in that order would, leftmost first: found by `str.find`, not a
    compiled regex, which Python builds a character at a time (25 ms for a name of 4,000
    characters; a forget of 1,000 such names made as many refusals: 27 s, round 44)."""
    places: list[tuple[int, int, str]] = []  # (start, the name's rank, the name)
    for rank, name in enumerate(found):
        at = text.find(name)
        while at >= 0:
            places.append((at, rank, name))
            at = text.find(name, at + 1)  # overlapping: another name may end before it
    parts, end = [], 0
    for at, _, name in sorted(places):
        if at >= end:
            parts += [text[end:at], wanted.get(name, name)]
            end = at + len(name)
    return "".join(parts) + text[end:]


_CALL_START = re.compile(r"readkeeper/[A-Za-z]+ (?=\{)")
_JSON = json.JSONDecoder()


def _outside_calls(message: str, words: Callable[[str], str]) -> str:
    """`message` with `words` applied to all but its next calls' params (the JSON after
    `readkeeper/METHOD `, hints.call)."""
    parts, at = [], 0
    for found in _CALL_START.finditer(message):
        if found.start() < at:
            continue
        try:
            _, end = _JSON.raw_decode(message, found.end())
        except ValueError:
            continue
        parts += [words(message[at : found.end()]), message[found.end() : end]]
        at = end
    return "".join(parts) + words(message[at:])


def _names(data: dict[str, Any]) -> list[str]:
    named: list[str] = []
    for key in _NAME_FIELDS:
        value = data.get(key)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and item:
                named.append(item)
    return named


# The most of a name (a path, a symbol, a guess) any answer shows, as its words spell it
# (escapes counted): a longer one is cut in its middle, its start and its end kept (a
# path's folder and its file), marked as readkeeper marks cuts (` … [N characters cut]
# … `, the name's own such words escaped: quoting.marks). Every error's message and data
# name it so (ReadkeeperError), read_many's entries, a next call's params (hints.call):
# a 4,096-character path said three times with its guess sent 11,000 characters a
# refusal, and 20 of them in one read_many 228,798 (round 19 fixers).
MAX_NAME_CHARS = 240
_NAME_END_CHARS = 100
# The most of a name a next call's params show whole: a call is sent as it is written,
# and a name cut in it names a file that does not exist (round 36: a too_large's grep
# of a 900-character path, followed, was `not_found`); longer ones (hostile: beyond any
# real path's length) are cut all the same, so no refusal grows without bound.
MAX_CALL_NAME_CHARS = 1024


def spelled(char: str) -> int:
    """How many characters JSON spells `char` with, as a name's cut counts them: an
    escape (six) for a quote, a backslash and each character str.isprintable rejects."""
    return 1 if char.isprintable() and char not in '"\\' else 6


def _end(text: str, most: int) -> str:
    """The start of `text` up to `most` characters as `spelled` counts them."""
    spent = 0
    for index, char in enumerate(text):
        spent += spelled(char)
        if spent > most:
            return text[:index]
    return text


def cut_middle(text: str, head: int, tail: int, part: Callable[[str], str] = quoting.marks) -> str:
    """`text` cut in its middle, the one way readkeeper cuts a name or a reason too long
    to show whole (the caller decides what is too long): the most of its start that
    `spelled` counts within `head` characters, the most of its end within `tail`
    (whole characters: an astral one is one), each shown by `part` (by default with its
    own cut-marker words escaped, quoting.marks), and between them the mark
    ` … [N characters cut] … `."""
    start = _end(text, head)
    end = _end(text[len(start) :][::-1], tail)[::-1]
    cut = len(text) - len(start) - len(end)
    return f"{part(start)} … [{cut:,} characters cut] … {part(end)}"


def _too_long(text: str, most: int = MAX_NAME_CHARS) -> bool:
    # (shown, a name is never shorter than it is: the long ones are not escaped to tell)
    return len(text) > most or len(quoting.name(text)) > most


def cut_name(text: str, most: int = MAX_NAME_CHARS) -> str:
    """A name as data holds it: whole, or cut in its middle (`MAX_NAME_CHARS`, or
    `most`)."""
    if not _too_long(text, most):
        return text
    return cut_middle(text, _NAME_END_CHARS, _NAME_END_CHARS)


def shown_name(value: object) -> str:
    """A name as readkeeper's words show it (quoting.name), cut in its middle when long
    (`MAX_NAME_CHARS`): its start and end each shown as a name, the mark between."""
    text = str(value)
    if not _too_long(text):
        return quoting.name(text)
    return cut_middle(text, _NAME_END_CHARS, _NAME_END_CHARS, _shown_part)


def _shown_part(part: str) -> str:
    return quoting.marks(quoting.name(part)) if part else ""


def _cut_data(data: dict[str, Any]) -> dict[str, Any]:
    """`data` with each name it holds cut (`cut_name`); the guesses, which a caller
    sends as they are, as a next call's params are (`MAX_CALL_NAME_CHARS`), and so is
    any other string but a file's text (a parameter's name the call gave, echoed)."""
    for key, value in data.items():
        data[key] = _cut_value(key, value)
    return data


def _cut_value(key: str, value: Any) -> Any:
    """`value`, held in data under `key`, cut as `_cut_data` says, at any depth: the
    entries of a list of objects (a stale anchor's `{anchor, line}`s) are cut by their
    own keys, a list kept to `MAX_DATA_ITEMS` wherever it is."""
    if isinstance(value, list) and len(value) > MAX_DATA_ITEMS:
        value = value[:MAX_DATA_ITEMS]  # its count is in the message or data
    if key in CONTENT_FIELDS:
        return value
    if isinstance(value, dict):
        return {k: _cut_value(k, v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut_value(key, v) for v in value]
    if isinstance(value, str):
        name = key in _NAME_FIELDS and key != "suggestions"
        return cut_name(value, MAX_NAME_CHARS if name else MAX_CALL_NAME_CHARS)
    return value


def names_cut(value: Any) -> Any:
    """`value` (an answer's facts: JSON types) with every string cut as a name is
    (`cut_name`, past `MAX_CALL_NAME_CHARS`), keys too: for answers that list what the
    client or the workspace named (`stats`' roots: 20 roots of 300,000 characters made
    an answer of 36 MB, round 42)."""
    if isinstance(value, str):
        return cut_name(value, MAX_CALL_NAME_CHARS)
    if isinstance(value, dict):
        return {names_cut(k): names_cut(v) for k, v in value.items()}
    if isinstance(value, list):
        return [names_cut(v) for v in value]
    return value


# The most of a fault's reason a reply shows.
MAX_FAULT_CHARS = 500


def fault_reason(exc: BaseException) -> str:
    """A fault of readkeeper's own (`internal`) as its reply names it: the exception's
    type, then its message as a library's words are shown (`library_words`: one quoted
    string, cut when long), for it may hold any party's text (a file's, a client's, a
    library's). No object's repr or address (`library_detail`)."""
    said = library_detail(exc, fallback="")
    name = type(exc).__name__
    return f"{name}: {library_words(said, MAX_FAULT_CHARS)}" if said else name


# An object's default repr (`<_io.BytesIO object at 0x7fcb...>`, `<function f at 0x...>`)
# and any other long hexadecimal number a library's message may carry: a heap address,
# which tells the agent nothing and differs from run to run.
_OBJECT_REPR = re.compile(r"\s*<[^<>\n]{0,300}? at 0x[0-9a-fA-F]+>")
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{8,}\b")


def library_detail(exc: BaseException | str, fallback: str | None = None) -> str:
    """What a library's exception (Pillow's, pypdf's, pdfium's, nbformat's, json's,
    tree-sitter's, pygit2's, tiktoken's) says, as a readkeeper error's `detail` and
    message show it: its text without object reprs or addresses (`<... at 0x...>` is
    left out, another address shown `0x…`); the exception's type name if nothing is left
    (`fallback` instead, when given). The one place a library's words become ours."""
    said = exc if isinstance(exc, str) else str(exc)
    said = _ADDRESS.sub("0x…", _OBJECT_REPR.sub("", said)).strip()
    if said:
        return said
    if fallback is not None:
        return fallback
    return "no detail given" if isinstance(exc, str) else type(exc).__name__


# The most of a library's words (`library_words`) a refusal shows.
MAX_LIBRARY_CHARS = 300


def library_words(exc: BaseException | str, most: int = MAX_LIBRARY_CHARS) -> str:
    """A library's words (`library_detail`) as readkeeper's sentences show them: ONE
    quoted JSON string (quoting.json_text: one line, nothing unseen, its quotes escaped),
    cut past `most` characters, the cut marked after it. A library's message can echo a
    file's bytes (pypdf dumps the PDF around a parse error, a filter name's #-escapes,
    libgit2 a HEAD's text): quoted, nothing in it closes readkeeper's brackets nor
    passes for its words, and no front end rewords it (hints.rewrite leaves JSON strings
    as they are; attack round 24). The one way a library's words enter our text."""
    said = library_detail(exc)
    kept = _json_end(said, most)
    if kept == said:
        return quoting.json_text(said)
    return f"{quoting.json_text(kept)} … [{len(said) - len(kept):,} characters cut]"


def _json_end(text: str, most: int) -> str:
    """The start of `text` whose JSON string (quoting.json_text) spells it within `most`
    characters, its quotes aside: whole characters, each escape whole."""
    spent = 0
    for index, char in enumerate(text):
        spent += 1 if char.isprintable() and char not in '"\\' else len(quoting.json_text(char)) - 2
        if spent > most:
            return text[:index]
    return text


def with_library_words(own: str, words: object) -> str:
    """readkeeper's own words `own` followed by a library's (`library_words`) in
    brackets; the library's alone when `own` is empty; `own` alone when it said none."""
    if not words:
        return own
    quoted = library_words(str(words))
    return f"{own} ({quoted})" if own else quoted


class ReadkeeperError(Exception):
    """A failure the caller can act on. `data` travels with it to the client. The
    message names files as quoting.py shows names."""

    def __init__(self, kind: ErrorKind, message: str, **data: Any) -> None:
        message = _shown(message, data)
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message
        self.data = _cut_data(data)

    def to_data(self) -> dict[str, Any]:
        """The JSON-RPC error's `data`: the kind, and the facts that came with it."""
        return {"kind": self.kind, **self.data}

    def __repr__(self) -> str:
        return f"ReadkeeperError({self.kind!r}, {self.message!r})"


def too_deep(name: str) -> ReadkeeperError:
    """A call that met Python's recursion limit: nesting past what readkeeper follows,
    in its params (every front end's door bounds those) or in what it read. Never a
    fault of ours: `bad_params` on every front end."""
    return ReadkeeperError(
        "bad_params",
        f"{name} met something nested too deeply to follow (past Python's recursion "
        "limit): send the params as the tool's schema gives them; a file's nested content "
        "reads as a range of lines.",
    )
