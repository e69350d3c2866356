"""Edits by anchor: lines named as an anchored read showed them ("12ab"), never repeated.

An anchor is valid only if this session was shown that line with the content the file
has there now (state/shown_lines.py keeps what each session was shown; the short hash
only catches a slip). A line that moved since, found once within `RELOCATE_WINDOW`
lines of where it was, is used where it is now and the answer says so; anything else is
`stale`, answered with the lines as they are now and their anchors, so the agent retries
without reading the file again. For a span (`start`..`end`) every line between was
shown too, at its content now, and the span moved as one.

Everything about one call is checked before anything is applied: the shape of each
edit first (`bad_params`, before the file is looked at), then every anchor against the
file (`stale`), then that no two edits touch the same lines (`bad_params`). The edits
are then applied bottom to top to the text as it is, in one commit (edit/batch.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .. import words
from ..errors import ReadkeeperError
from ..hints import call
from ..protocol import AnchorEdit, Relocation
from ..protocol.convert import as_sent
from ..read.anchors import NO_ANCHOR, line_hash, short_hash
from ..read.diffs import common_ends
from .matching import Normalized, Planned
from .services import TextChange

RELOCATE_WINDOW = 20  # lines either way an unambiguous moved line is looked for
MAX_EDITS = 1_000  # anchor edits in one call
_ANCHOR = re.compile(r"\s*(\d+)\s*[#:.]?\s*([a-z]{2}|--)\s*")
_EXAMPLE = '[{"op": "replace", "start": "12ab", "end": "14cd", "lines": ["new text"]}]'


@dataclass(frozen=True)
class Anchor:
    """An anchor as given: its text, the line it names and the hash it says it has."""

    text: str
    line: int
    short: str


@dataclass(frozen=True)
class Checked:
    """One anchor edit with its anchors parsed and its shape checked."""

    index: int
    op: str
    start: Anchor
    end: Anchor
    lines: list[str]


@dataclass(frozen=True)
class Step:
    """One anchor edit located in the file: replace its lines [first, end) (0-based;
    first == end inserts there) with `lines`."""

    index: int
    first: int
    end: int
    lines: list[str]
    anchor_line: int  # 1-based: the line its start anchor names now


def check_shape(edits: Sequence[AnchorEdit], file_path: str) -> list[Checked]:
    """Each edit's anchors parsed and its fields checked (`bad_params`), and no two of
    them on the same lines as given (`file_path`: the edit's, as given, which an anchored
    read of it names)."""
    if not edits:
        raise _bad("anchor_edits is empty. Give at least one edit, e.g. " + _EXAMPLE + ".")
    if len(edits) > MAX_EDITS:
        raise _bad(f"anchor_edits has {len(edits):,} edits; at most {MAX_EDITS:,} in one call.")
    checked = []
    for index, edit in enumerate(edits):
        where = f"anchor_edits[{index}]"
        start = parse(edit.start, f"{where}.start", file_path)
        end = parse(edit.end, f"{where}.end", file_path) if edit.end is not None else start
        inserting = edit.op in ("insert_after", "insert_before")
        if inserting and edit.end is not None:
            raise _bad(f"{where} is an {edit.op}, which takes no end: drop end.")
        if end.line < start.line:
            raise _bad(f"{where} ends (line {end.line}) before it starts (line {start.line}).")
        lines = [part for item in edit.lines or () for part in item.split("\n")]
        lines = [part.removesuffix("\r") for part in lines]
        if inserting and not lines:
            raise _bad(f"{where} is an {edit.op} with no lines: give the lines to insert.")
        if edit.op == "replace" and edit.lines is None:
            raise _bad(f"{where} is a replace without lines: give lines (or use op=delete).")
        if edit.op == "delete" and lines:
            raise _bad(f"{where} is a delete with lines: use op=replace to put lines there.")
        checked.append(Checked(index, edit.op, start, end, lines))
    _refuse_overlaps([_span(c, c.start.line, c.end.line) for c in checked])
    return checked


def parse(raw: str, where: str, file_path: str) -> Anchor:
    """An anchor as given ("12ab", also "12#ab"), or `bad_params` saying what one is and
    naming the anchored read of `file_path` that shows them."""
    found = _ANCHOR.fullmatch(raw)
    if found is None or words.whole(found[1]) < 1:
        raise _bad(
            f"{where} is {as_sent(raw)}, which is not an anchor. An anchor is a line's number and "
            "the two letters an anchored read shows after it (e.g. '12ab'); read the lines "
            f"anchored to get them: {call('read', file_path=file_path, line_format='anchors')}.",
            field=where,
        )
    if found[2] == NO_ANCHOR:
        raise _bad(
            f"{where} is {as_sent(raw)}: line {found[1]} was shown cut or with escaped line "
            "breaks, so it has no anchor. Change it with old_string/new_string instead.",
            field=where,
        )
    return Anchor(raw, words.whole(found[1]), found[2])


@dataclass(frozen=True)
class Stale:
    """Why an anchor does not name a line the session was shown (1-based `near`)."""

    anchor: str
    near: int
    why: str


def locate(
    checked: Sequence[Checked], current: Sequence[str], shown: Mapping[int, int]
) -> tuple[list[Step], list[Relocation], list[Stale]]:
    """Each edit located in `current` (the file's lines, without endings) by what the
    session was shown (`shown`: line -> hash); the anchors found moved; and the stale
    ones (when any is, no step is to be applied)."""
    steps: list[Step] = []
    moved: list[Relocation] = []
    problems: list[Stale] = []
    hashes: dict[int, int] = {}

    def now(line: int) -> int:  # the hash of `line` (1-based) as the file is now
        if line not in hashes:
            hashes[line] = line_hash(current[line - 1])
        return hashes[line]

    def find(anchor: Anchor) -> int | None:
        seen = shown.get(anchor.line)
        if seen is None:
            problems.append(Stale(anchor.text, anchor.line, "not a line this session was shown"))
            return None
        if anchor.line <= len(current) and now(anchor.line) == seen:
            if short_hash(current[anchor.line - 1]) == anchor.short:
                return anchor.line
            problems.append(Stale(anchor.text, anchor.line, "not the hash you were shown"))
            return None
        low = max(1, anchor.line - RELOCATE_WINDOW)
        high = min(len(current), anchor.line + RELOCATE_WINDOW)
        found = [n for n in range(low, high + 1) if now(n) == seen]
        found = [n for n in found if short_hash(current[n - 1]) == anchor.short]
        if len(found) == 1:
            moved.append(Relocation(anchor.text, found[0]))
            return found[0]
        why = "changed since you were shown it" if not found else "moved, and is not unique"
        problems.append(Stale(anchor.text, anchor.line, why))
        return None

    for edit in checked:
        first = find(edit.start)
        if first is None:
            continue
        if edit.op in ("insert_after", "insert_before"):
            at = first if edit.op == "insert_after" else first - 1
            steps.append(Step(edit.index, at, at, edit.lines, first))
            continue
        shift = first - edit.start.line
        last = first if edit.end is edit.start else find(edit.end)
        if last is None:
            continue
        if last - first != edit.end.line - edit.start.line:
            problems.append(Stale(edit.end.text, last, "lines were added or removed in the span"))
            continue
        for line in range(edit.start.line + 1, edit.end.line):
            if shown.get(line) != now(line + shift):
                why = "a line in the span you were not shown as it is now"
                problems.append(Stale(f"line {line}", line + shift, why))
                break
        else:
            steps.append(Step(edit.index, first - 1, last, edit.lines, first))
    if not problems:
        _refuse_overlaps([(s.index, s.first, s.end, s.anchor_line) for s in steps])
    return sorted(steps, key=lambda s: (s.first, s.end)), moved, problems


def apply(base: Normalized, steps: Sequence[Step], eol: str) -> tuple[Planned, list[int]]:
    """The text with `steps` (in order, not overlapping) applied bottom to top, only the
    lines they name touched; and the first line of each step in the new text.

    A file that does not end with a line break is edited as if it did, and the result
    then has none either: whichever line ends up last (an untouched one, or one an
    edit put there) ends the file without one, as the old last line did."""
    if base.norm and not base.norm.endswith("\n"):
        ended = Normalized(base.text + eol)
        planned, firsts = apply(ended, steps, eol)
        text = planned.text
        text = text.removesuffix("\r\n") if eol == "\r\n" else text.removesuffix("\n")
        change = _trimmed(base.text, text)
        return Planned(text, [change], [(change.start, change.start + len(change.text))]), firsts
    starts = [0]
    for line in base.norm.split("\n")[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    changes: list[TextChange] = []
    for step in reversed(steps):
        begin, stop = base.original(starts[step.first]), base.original(starts[step.end])
        text = "".join(line + eol for line in step.lines)
        changes.insert(0, TextChange(begin, stop, text))
    pieces, last, spans, shift = [], 0, [], 0
    for change in changes:
        pieces += [base.text[last : change.start], change.text]
        spans.append((change.start + shift, change.start + shift + len(change.text)))
        shift += len(change.text) - (change.end - change.start)
        last = change.end
    pieces.append(base.text[last:])
    firsts, delta = [], 0
    for step in steps:
        firsts.append(step.first + 1 + delta)
        delta += len(step.lines) - (step.end - step.first)
    return Planned("".join(pieces), changes, spans), firsts


def _trimmed(before: str, after: str) -> TextChange:
    """`before` -> `after` as one change, trimmed to the part that differs."""
    head, tail = common_ends(before, after)
    return TextChange(head, len(before) - tail, after[head : len(after) - tail])


def _span(edit: Checked, first: int, last: int) -> tuple[int, int, int, int]:
    """An edit as (index, first, end, anchor line), 0-based [first, end)."""
    if edit.op == "insert_after":
        return edit.index, first, first, first
    if edit.op == "insert_before":
        return edit.index, first - 1, first - 1, first
    return edit.index, first - 1, last, first


def _refuse_overlaps(spans: Sequence[tuple[int, int, int, int]]) -> None:
    """`bad_params` when two edits touch the same lines, insert at the same place, or
    one inserts next to a line another replaces or deletes."""
    ordered = sorted(spans, key=lambda s: (s[1], s[2]))
    for i, (index, first, end, _) in enumerate(ordered):
        for other, o_first, o_end, o_anchor in ordered[i + 1 :]:
            if o_first > end:
                break
            inserts = first == end and o_first == o_end
            clash = o_first < end or (inserts and first == o_first)
            if not clash and o_first == o_end and first < o_anchor <= end and first < end:
                clash = True  # inserted next to a line the other edit takes away
            if clash:
                a, b = sorted((index, other))
                raise _bad(
                    f"anchor_edits[{a}] and anchor_edits[{b}] touch the same lines (or insert "
                    "at the same place). Merge them into one edit, then send the call again.",
                    edits=[a, b],
                )


def _bad(message: str, **data: object) -> ReadkeeperError:
    return ReadkeeperError("bad_params", message, **{"field": "anchor_edits", **data})
