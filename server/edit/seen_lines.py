"""An edit backed only by what searches showed: it may change only what they showed.

A read, even a ranged one, gives the agent a view of the file it chose; a search shows
scattered lines it did not choose. So when every view the session holds of a file came
from searches (the record's views are all `grep:` ones, search/seen.py), the text an
edit's `old_string` spans must all be text a search showed: whole lines, and of a line
shown cut, only its first characters, up to the cut. Anything else needs a read first.
Any read of the file lifts this; an edit does not: what it leaves is still a search's
view (`after_edit`), of the lines shown that the edit moved but did not change, and of
the lines it wrote.
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import quoting
from ..errors import ReadkeeperError
from ..hints import call
from ..read.diffs import Bounded, TooCostly, common_line_ends
from ..state.readstate import ReadRecord
from .matching import line_numbers

SEARCH_VIEW = "grep:"


def shown_lines(record: ReadRecord) -> dict[int, int | None] | None:
    """The lines searches showed of the file, each with the characters shown of it when
    it was shown cut (None: shown whole), or None when a read (or a write, or an edit
    of a file read) is among the session's views of it."""
    lines: dict[int, int | None] = {}
    for view in record.views():
        if not view.view.startswith(SEARCH_VIEW):
            return None
        for item in filter(None, view.view[len(SEARCH_VIEW) :].split(",")):
            number, _, cut = item.partition(":")
            shown = int(cut) if cut else None
            if int(number) in lines:  # seen by two searches: the longer view counts
                before = lines[int(number)]
                shown = None if before is None or shown is None else max(before, shown)
            lines[int(number)] = shown
    return lines


def check_seen(record: ReadRecord, text: str, hits: Sequence[int], old: str, path: str) -> None:
    """Refuse (`not_read`) an edit touching text no search showed (a line not shown, or
    the part of a line past where it was shown cut), when searches are all the session
    has seen of the file (`text`: LF-normalized, `hits` offsets in it)."""
    shown = shown_lines(record)
    if shown is None:
        return
    span = old.rstrip("\n").count("\n")
    for hit, first in zip(hits, line_numbers(text, list(hits)), strict=True):
        last = first + span
        unseen = next((n for n in range(first, last + 1) if n not in shown), None)
        why = f"did not show line {unseen}"
        if unseen is None:
            unseen = _past_cut(text, hit, hit + len(old.rstrip("\n")), first, shown)
            why = f"showed line {unseen} cut short of what the edit changes"
        if unseen is not None:
            raise ReadkeeperError(
                "not_read",
                f"This session has seen {quoting.name(path)} only through search, which {why}, and "
                f"the edit changes lines {first}-{last}. Read them "
                f"({call('read', file_path=path, offset=first, limit=span + 1)}), then make "
                "the edit.",
                file_path=path,
                lines=[first, last],
            )


def _past_cut(
    text: str, start: int, end: int, first: int, shown: dict[int, int | None]
) -> int | None:
    """The first line in `text[start:end]` (which begins on line `first`) whose part
    there reaches past the characters a search showed of it; None when none does."""
    line_start = text.rfind("\n", 0, start) + 1
    number = first
    while line_start <= end:
        line_end = text.find("\n", line_start)
        line_end = len(text) if line_end < 0 else line_end
        cut = shown.get(number)
        if cut is not None and min(end, line_end) - line_start > cut:
            return number
        line_start, number = line_end + 1, number + 1
    return None


def after_edit(record: ReadRecord | None, before: str | None, after: str) -> str:
    """The view an edit leaves of a file the session has seen only through search
    (`record`, its view before the edit): the lines shown that the edit kept, at their
    new numbers, and the lines it wrote (the edit's answer shows them); "" when the
    session had read the file (the edit's record then lifts nothing that was there).
    Without the text before the edit, nothing is kept: the next edit needs a read. Only
    the changed middle is compared line by line, within diffs.Bounded's budget: past it,
    none of its lines stays seen (the session reads before it edits one there)."""
    shown = shown_lines(record) if record is not None else None
    if shown is None:
        return ""
    kept: dict[int, int | None] = {}
    if before is not None:
        old, new = before.split("\n"), after.split("\n")
        head, tail = common_line_ends(old, new)
        for i, j in [(k, k) for k in range(head)] + [
            (len(old) - tail + k, len(new) - tail + k) for k in range(tail)
        ]:
            if i + 1 in shown:
                kept[j + 1] = shown[i + 1]
        middle_old, middle_new = old[head : len(old) - tail], new[head : len(new) - tail]
        try:
            opcodes = Bounded(middle_old, middle_new).get_opcodes()
        except TooCostly:
            opcodes = []  # none of the middle's lines kept as seen
        for tag, i1, i2, j1, j2 in opcodes:
            if tag == "equal":
                for k in range(i2 - i1):
                    if head + i1 + k + 1 in shown:
                        kept[head + j1 + k + 1] = shown[head + i1 + k + 1]
            else:
                kept.update((head + j + 1, None) for j in range(j1, j2))
    items = (str(n) if cut is None else f"{n}:{cut}" for n, cut in sorted(kept.items()))
    return SEARCH_VIEW + ",".join(items)
