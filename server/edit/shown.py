"""A file's text as readkeeper's views showed it, and the way back: where an
`old_string` copied from a read (or a diff) is in the file.

The escaping is per character (quoting.py: a line break but LF as `\\r` or `\\x0b`, a cut
marker's `[` as `\\x5b`, in a diff a line's first `-` or `+` before another as `\\x2d` or
`\\x2b`), so the shown text maps back to the file offset by offset. A shown match that
begins or ends inside an escape (`a \\` of `a \\x5bline cut`, `rhere` of `\\rhere`)
edits nothing there, but it is a place the old_string may have been copied from
(`ranges`' `cuts`): the caller is told (matching.as_shown), never sent to another place
that holds it. An old_string that neither holds an escape nor may cut one (`may_cut`)
is only ever matched as written (the common case: no second pass).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass

from .. import quoting

_DIFF_START = re.compile(r"^(?=--|\+\+)", re.MULTILINE)
# Each kind of escape a view makes, as it is shown (a diff's is always followed by
# the character it stands for: a line's `--` shown `\x2d-`).
_BREAK_ESCAPES = tuple(quoting.UNESCAPES)
_MARK_ESCAPES = tuple(quoting.OPENING_SHOWN.values())
_DIFF_ESCAPES = ("\\x2d-", "\\x2b+")


def may_cut(
    old: str, escapes: tuple[str, ...] = _BREAK_ESCAPES + _MARK_ESCAPES + _DIFF_ESCAPES
) -> bool:
    """Whether `old` could begin or end inside one of `escapes` (`x5bline` of `\\x5bline`,
    `a \\` of `a \\x5b`), or lie inside one: only then may a view show it by a cut."""
    for escape in escapes:
        for i in range(1, len(escape)):
            head, tail = escape[:i], escape[i:]
            if tail.startswith(old) or old.startswith(tail):
                return True
            if head.endswith(old) or old.endswith(head):
                return True
    return False


@dataclass(frozen=True)
class Shown:
    """A text as a view shows it: `text`, and each escape's place (`starts`: its shown
    offset, `ends`: where it ends, `raws`: the file offset of the character it stands
    for; one character each)."""

    text: str
    starts: list[int]
    ends: list[int]
    raws: list[int]

    def raw(self, offset: int) -> int | None:
        """The file offset of shown `offset`; None inside an escape."""
        index = bisect.bisect_right(self.starts, offset) - 1
        if index < 0:
            return offset
        if offset < self.ends[index] and offset != self.starts[index]:
            return None
        if offset == self.starts[index]:
            return self.raws[index]
        return self.raws[index] + 1 + offset - self.ends[index]

    def edge(self, offset: int, step: int) -> tuple[int, int]:
        """Shown `offset`, moved by `step` out of any escape it is inside, and its file
        offset."""
        raw = self.raw(offset)
        while raw is None:
            offset += step
            raw = self.raw(offset)
        return offset, raw


def views(text: str, old: str) -> list[Shown]:
    """The shown forms of `text` (LF-normalized) in which `old` may have been copied:
    a read's (and grep's, and an edit preview's), and when `old` holds a diff's line
    escape a diff's; none when the file holds nothing a view escapes."""
    # A match holding no escape of a kind is a match of the view without that kind:
    # only the kinds `old` holds are made (a regex's `\\d` in old costs no view).
    escapes: dict[int, str] = {}
    breaks = any(e in old for e in _BREAK_ESCAPES) or may_cut(old, _BREAK_ESCAPES)
    if breaks and quoting.has_break(text):
        escapes = {m.start(): quoting.line(m.group()) for m in quoting.BREAK.finditer(text)}
    marks = any(e in old for e in _MARK_ESCAPES) or may_cut(old, _MARK_ESCAPES)
    if marks and quoting.has_marks(text):
        escapes |= dict(_marks(_shown(text, escapes) if escapes else None, text))
    found = [_shown(text, escapes)] if escapes else []
    if "\\x2d" in old or "\\x2b" in old or may_cut(old, _DIFF_ESCAPES):
        starts = {m.start(): f"\\x{ord(text[m.start()]):02x}" for m in _DIFF_START.finditer(text)}
        if starts:
            found.append(_shown(text, escapes | starts))
    return found


def _marks(escaped: Shown | None, text: str) -> Iterator[tuple[int, str]]:
    """The file offset and escape of each `[` a read escapes: found, as the read finds
    them, in the text with its line breaks already escaped (`escaped`, if any)."""
    shown = escaped.text if escaped else text
    for found in quoting.CUT_OPENING.finditer(shown):
        # Each view escapes a line at a time: the marker's words are in the same line.
        end = shown.find("\n", found.start())
        if quoting.CUT_OPENING.match(shown, found.start(), len(shown) if end < 0 else end):
            at = escaped.raw(found.start()) if escaped else found.start()
            if at is not None:
                yield at, quoting.OPENING_SHOWN[found.group()]


def _shown(text: str, escapes: dict[int, str]) -> Shown:
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    raws: list[int] = []
    last = 0
    length = 0
    for at in sorted(escapes):
        escape = escapes[at]
        pieces.append(text[last:at])
        length += at - last
        starts.append(length)
        ends.append(length + len(escape))
        raws.append(at)
        pieces.append(escape)
        length += len(escape)
        last = at + 1
    pieces.append(text[last:])
    return Shown("".join(pieces), starts, ends, raws)


def ranges(
    text: str, old: str, shown: list[Shown], cuts: list[int] | None = None
) -> dict[tuple[int, int], tuple[Shown, int] | None]:
    """Every range of `text` whose shown form (in one of `shown`, its `views`) is `old`,
    or that is `old` as written (then None), with the view and shown offset it was
    found at. The file offset where each shown match that cuts an escape begins goes
    into `cuts` (in order, once each)."""
    found: dict[tuple[int, int], tuple[Shown, int] | None] = {}
    at = text.find(old)
    while at != -1:
        found[(at, at + len(old))] = None
        at = text.find(old, at + len(old))
    cut: set[int] = set()
    for view in shown:
        at = view.text.find(old)
        while at != -1:
            start, end = view.raw(at), view.raw(at + len(old))
            if start is not None and end is not None:
                found.setdefault((start, end), (view, at))
            else:
                cut.add(view.edge(at, -1)[1])
            at = view.text.find(old, at + 1)
    if cuts is not None:
        cuts.extend(sorted(cut))
    return found
