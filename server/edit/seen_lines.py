"""An edit backed only by what searches showed: it may change only lines they showed.

A read, even a ranged one, gives the agent a view of the file it chose; a search shows
scattered lines it did not choose. So when every view the session holds of a file came
from searches (the record's views are all `grep:` ones, search/seen.py), the lines an
edit's `old_string` spans must all be lines a search showed; anything else needs a read
first. Any read of the file lifts this.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import ReadkeeperError
from ..hints import call
from ..state.readstate import ReadRecord
from .matching import line_numbers

SEARCH_VIEW = "grep:"


def shown_lines(record: ReadRecord) -> set[int] | None:
    """The lines searches showed of the file, or None when a read (or an edit or write)
    is among the session's views of it."""
    lines: set[int] = set()
    for view in record.views():
        if not view.view.startswith(SEARCH_VIEW) or view.origin != "read":
            return None
        lines.update(int(n) for n in view.view[len(SEARCH_VIEW) :].split(",") if n)
    return lines


def check_seen(record: ReadRecord, text: str, hits: Sequence[int], old: str, path: str) -> None:
    """Refuse (`not_read`) an edit touching a line no search showed, when searches are
    all the session has seen of the file (`text`: LF-normalized, `hits` offsets in it)."""
    shown = shown_lines(record)
    if shown is None:
        return
    span = old.rstrip("\n").count("\n")
    for first in line_numbers(text, list(hits)):
        unseen = [n for n in range(first, first + span + 1) if n not in shown]
        if unseen:
            last = first + span
            raise ReadkeeperError(
                "not_read",
                f"This session has seen {path} only through search, which did not show "
                f"line {unseen[0]}, and the edit changes lines {first}-{last}. Read them "
                f"({call('read', file_path=path, offset=first, limit=span + 1)}), then make "
                "the edit.",
                file_path=path,
                lines=[first, last],
            )
