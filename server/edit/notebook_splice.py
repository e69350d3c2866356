"""A cell edit as a splice of the notebook's own text: every character outside what the
edit changes is the file's own, by construction.

The notebook is never written back through `json.loads`/`json.dumps` (that loses a BOM,
a duplicated key, `1.10`, `1e5`, `"\\/"`, the digits of a long float, a layout that is not
Jupyter's, and turns `1e400` into `Infinity`, which is not JSON). Instead a scanner finds
where each cell, and each of the edited cell's members, begins and ends in the text
(json's own C scanner parses each value; only the structure around them is walked here),
and the edit replaces just those spans: a replaced source's value, an inserted cell's
text, a deleted cell's text and the comma before it. What is written new follows the
layout around it (its indent, line ending, separators).

The result is proved before it is written: parsed again, it must be the notebook the
edit means. When the spans cannot be found with certainty the edit is refused
(`Uncertain`), never reformatted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

_WS = " \t\n\r"
_DECODER = json.JSONDecoder()


class Uncertain(Exception):
    """The text's layout could not be followed with certainty (the reason)."""


@dataclass(frozen=True)
class _Member:
    key: str
    start: int  # the key's opening quote
    colon_end: int  # after the separator, where the value starts
    end: int  # after the value


@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    members: tuple[_Member, ...] = ()


@dataclass(frozen=True)
class Layout:
    """Where the cells are in a notebook's text."""

    text: str
    array: _Span  # the "cells" array, brackets included
    cells: tuple[_Span, ...]  # without their members, found only for the cells an edit needs

    def scanned(self, index: int) -> _Span:
        """Cell `index` with its members."""
        cell, _, _ = _object(self.text, self.cells[index].start)
        if cell.end != self.cells[index].end:
            raise Uncertain(f"cell {index} ends elsewhere than json found")
        return cell


def layout(text: str) -> Layout:
    """The spans of the notebook's cells (the last "cells" member counts, as json.loads
    takes the last of duplicated keys)."""
    at = _skip(text, 0)
    top, array, cells = _object(text, at, want="cells")
    if _skip(text, top.end) != len(text):
        raise Uncertain("text follows the notebook's JSON")
    if array is None:
        raise Uncertain('it has no "cells" list')
    return Layout(text, array, cells)


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _WS:
        at += 1
    return at


def _expect(text: str, at: int, char: str) -> int:
    if at >= len(text) or text[at] != char:
        raise Uncertain(f"expected {char!r} at character {at}")
    return at + 1


def _value_end(text: str, at: int) -> int:
    try:
        _, end = _DECODER.raw_decode(text, at)
    except (ValueError, RecursionError):
        raise Uncertain(f"no JSON value at character {at}") from None
    return int(end)


def _object(
    text: str, at: int, want: str | None = None
) -> tuple[_Span, _Span | None, tuple[_Span, ...]]:
    """The object at `at` with its members; when `want` names a member holding a list of
    objects, that list's span and its objects' spans (each with its members)."""
    start, at = at, _skip(text, _expect(text, at, "{"))
    members: list[_Member] = []
    array: _Span | None = None
    cells: tuple[_Span, ...] = ()
    if at < len(text) and text[at] == "}":
        return _Span(start, at + 1), None, ()
    while True:
        key_start = at
        try:
            key, at = scanstring(text, _expect(text, at, '"'))
        except ValueError:
            raise Uncertain(f"no key at character {key_start}") from None
        at = _skip(text, _expect(text, _skip(text, at), ":"))
        value_start = at
        if key == want:
            array, cells = _list_of_objects(text, at)
            at = array.end
        else:
            at = _value_end(text, at)
        members.append(_Member(key, key_start, value_start, at))
        at = _skip(text, at)
        if at < len(text) and text[at] == "}":
            return _Span(start, at + 1, tuple(members)), array, cells
        at = _skip(text, _expect(text, at, ","))


def _list_of_objects(text: str, at: int) -> tuple[_Span, tuple[_Span, ...]]:
    start, at = at, _skip(text, _expect(text, at, "["))
    found: list[_Span] = []
    if at < len(text) and text[at] == "]":
        return _Span(start, at + 1), ()
    while True:
        if at >= len(text) or text[at] != "{":
            raise Uncertain(f"a cell at character {at} is not an object")
        end = _value_end(text, at)  # json's C scanner: a cell's members are found when needed
        found.append(_Span(at, end))
        at = _skip(text, end)
        if at < len(text) and text[at] == "]":
            return _Span(start, at + 1), tuple(found)
        at = _skip(text, _expect(text, at, ","))


# --- writing in the file's own layout ----------------------------------------------------


def _indent_at(text: str, at: int) -> str:
    """The whitespace that starts the line holding `at`."""
    line = text.rfind("\n", 0, at) + 1
    end = line
    while end < at and text[end] in " \t":
        end += 1
    return text[line:end]


@dataclass(frozen=True)
class _Style:
    newline: str
    unit: str | None  # one indent step; None: written on one line
    colon: str  # between a key and its value
    comma: str  # between items written on one line
    ascii_only: bool

    def dump(self, value: Any, base: str) -> str:
        """`value` as JSON laid out like its neighbours, continuing lines at `base`."""
        if self.unit is None:
            return json.dumps(
                value, ensure_ascii=self.ascii_only, separators=(self.comma, self.colon)
            )
        text = json.dumps(
            value, ensure_ascii=self.ascii_only, indent=self.unit, separators=(",", self.colon)
        )
        return text.replace("\n", self.newline + base)


def _style(text: str, sample: _Span | None) -> _Style:
    """How the cell `sample` (or, without one, the notebook's top object) is written."""
    newline = "\r\n" if "\r\n" in text else "\n"
    ascii_only = text.isascii() and "\\u" in text
    start = sample.start if sample is not None else _skip(text, 0)
    members = sample.members if sample is not None else ()
    first = members[0].start if members else text.find('"', start)
    between = text[start + 1 : first] if first > start else ""
    colon = ": "
    if members:
        after_key = members[0].colon_end
        found = text[members[0].start : after_key]
        colon = found[found.rindex('"') + 1 :] if "\n" not in found else ": "
    if "\n" not in between:
        comma = ", " if members and text[members[0].end : members[0].end + 2] == ", " else ","
        return _Style(newline, None, colon, comma, ascii_only)
    own, outer = _indent_at(text, first), _indent_at(text, start)
    unit = own[len(outer) :] if own.startswith(outer) and len(own) > len(outer) else " "
    return _Style(newline, unit, colon, ",", ascii_only)


# --- the three edits ---------------------------------------------------------------------


def replaced(where: Layout, index: int, old: dict[str, Any], new: dict[str, Any]) -> str:
    """The text with cell `index` changed from `old` to `new`: each changed member's value
    rewritten in place, a removed member taken out with its comma, an added one put in
    key order (Jupyter sorts keys)."""
    text, cell = where.text, where.scanned(index)
    style = _style(text, cell)
    keys = [m.key for m in cell.members]
    edits: list[tuple[int, int, str]] = []
    for key in sorted(set(old) | set(new)):
        if key in old and key in new and old[key] == new[key]:
            continue
        if keys.count(key) > 1:
            raise Uncertain(f"the cell has the key {key!r} twice")
        if key in new and key in keys:
            member = cell.members[keys.index(key)]
            value = style.dump(new[key], _indent_at(text, member.start))
            edits.append((member.colon_end, member.end, value))
        elif key in new:
            edits.append(_added(text, cell, key, new[key], style))
        elif key in keys:
            edits.append(_removed(text, cell, keys.index(key)))
    for start, end, value in sorted(edits, reverse=True):
        text = text[:start] + value + text[end:]
    return text


def _added(text: str, cell: _Span, key: str, value: Any, style: _Style) -> tuple[int, int, str]:
    if not cell.members:
        raise Uncertain("the cell is an empty object")
    later = next((m for m in cell.members if m.key > key), None)
    last = cell.members[-1]
    anchor = later or last
    lead = _lead(text, cell, cell.members.index(anchor))
    member = json.dumps(key, ensure_ascii=style.ascii_only) + style.colon
    member += style.dump(value, _indent_at(text, anchor.start))
    if later is not None:
        return later.start, later.start, member + "," + lead
    return last.end, last.end, "," + lead + member


def _lead(text: str, cell: _Span, position: int) -> str:
    """The whitespace before member `position` of `cell`."""
    member = cell.members[position]
    before = cell.members[position - 1].end if position else cell.start + 1
    gap = text[before : member.start]
    return gap[gap.index(",") + 1 :] if position else gap


def _removed(text: str, cell: _Span, position: int) -> tuple[int, int, str]:
    members = cell.members
    if position + 1 < len(members):
        return members[position].start, members[position + 1].start, ""
    if position:
        return members[position - 1].end, members[position].end, ""
    raise Uncertain("the cell would have no members")


def inserted(where: Layout, at: int, cell: dict[str, Any]) -> str:
    """The text with `cell` put at position `at` of the cells."""
    text, cells = where.text, where.cells
    if not cells:
        return _into_empty(where, cell)
    sample = where.scanned(at - 1 if at else 0)
    style = _style(text, sample)
    body = style.dump(cell, _indent_at(text, sample.start))
    if at == 0:
        lead = text[where.array.start + 1 : cells[0].start]
        return text[: cells[0].start] + body + "," + lead + text[cells[0].start :]
    if len(cells) > 1:
        gap = text[cells[0].end : cells[1].start]
        between = gap[gap.index(",") + 1 :]
    else:
        between = text[where.array.start + 1 : cells[0].start]
    end = cells[at - 1].end
    return text[:end] + "," + between + body + text[end:]


def _into_empty(where: Layout, cell: dict[str, Any]) -> str:
    text, array = where.text, where.array
    style = _style(text, None)
    if style.unit is None:
        body = style.dump(cell, "")
        return text[: array.start + 1] + body + text[array.end - 1 :]
    outer = _indent_at(text, array.start)
    inner = outer + style.unit
    body = style.newline + inner + style.dump(cell, inner) + style.newline + outer
    return text[: array.start + 1] + body + text[array.end - 1 :]


def deleted(where: Layout, index: int) -> str:
    """The text without cell `index`, and without the comma that joined it."""
    text, cells = where.text, where.cells
    if index:
        return text[: cells[index - 1].end] + text[cells[index].end :]
    if len(cells) > 1:
        return text[: cells[0].start] + text[cells[1].start :]
    return text[: where.array.start + 1] + text[where.array.end - 1 :]


def proved(text: str, expected: dict[str, Any]) -> None:
    """`Uncertain` unless `text` parses to `expected` (keys in any order)."""
    try:
        found = json.loads(text)
    except (ValueError, RecursionError):
        raise Uncertain("the spliced text would not be JSON") from None
    # A NaN is unequal to itself: only then are the two compared as canonical text.
    if found != expected and _canonical(found) != _canonical(expected):
        raise Uncertain("the spliced text would not be the notebook the edit means")


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=True)
