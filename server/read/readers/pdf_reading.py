"""One PDF read in progress: the worker it leased and the pages it asked for, and what
the agent is told when the file or a page fails (a limit hit, a damaged page, a worker
that stopped), with the read to try next: the same read, its pages (and the way they are
read) changed (`again`), so every front end says it as the whole call with the caller's
session and options."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from ...errors import ReadkeeperError
from ...hints import again
from ...settings import Settings
from ...words import compress
from ..room import LINES_MAX_CHARS
from . import worker

# A read stops starting new pages after this long (the page in flight is bounded by the
# worker's limits).
MAX_SECONDS = 10.0


@attrs.frozen
class Reading:
    """One read's worker and the pages it asked for: `chosen` now, `rest` later."""

    job: worker.Lease
    path: str
    size: int
    chosen: list[int]
    rest: list[int]
    page_count: int
    render: bool
    settings: Settings
    # Why a page does not show the other way (its text when drawing, else its drawing),
    # or None when it does: asked before a note names that way.
    other_fails: Callable[[int], str | None] = lambda number: None
    # The tokens kept under the cap for what is sent besides the pages (read/room.py).
    room: int = 0
    chars: int = LINES_MAX_CHARS  # the most characters the pages' text may take (room.py)

    def after(self, number: int) -> list[int]:
        """The pages asked for after `number`, for the next read."""
        return self.chosen[self.chosen.index(number) + 1 :] + self.rest

    def failed(self, failure: worker.Failure, number: int) -> ReadkeeperError:
        """The error for a read whose first page failed: what to try next."""
        return _page_failed(failure, number, self)

    def skipped(self, failure: worker.Failure, number: int) -> str:
        """The note for a page that failed after others were read."""
        if failure.kind == "internal":
            retry = again(pages=str(number))
            return f"Page {number} was skipped: {_why(failure, self.render)}; try {retry} again."
        why_not = self.other_fails(number)
        if why_not is not None:
            return (
                f"Page {number} was skipped: {_why(failure, self.render)}, and {why_not}: no "
                "read shows it; ask the user what it says."
            )
        other = (
            f"read its text instead with {again(pages=str(number), render=False)}"
            if self.render
            else f"draw it instead with {again(pages=str(number), render=True)}"
        )
        return f"Page {number} was skipped: {_why(failure, self.render)}; {other}."


# --- failures -------------------------------------------------------------------------


def _why(failure: worker.Failure, render: bool) -> str:
    """What went wrong on a page, for a note."""
    doing = "drawing it" if render else "reading its text"
    if failure.kind == "too_large":
        return f"{doing} went over {failure.reason}"
    if failure.kind == "corrupt":
        return f"{doing} failed ({failure.reason}): the file is likely damaged there"
    return f"the PDF worker stopped ({failure.reason})"


def open_failed(path: str, failure: worker.Failure) -> ReadkeeperError:
    """The error for a PDF that could not be opened at all."""
    if failure.kind == "encrypted":
        return ReadkeeperError(
            "encrypted",
            f"{path} is encrypted and needs a password to open. Ask the user for a copy "
            "without a password (saved again without one from a PDF tool).",
            file_path=path,
        )
    if failure.kind == "corrupt":
        return _corrupt(path, failure.reason)
    if failure.kind == "too_large":
        return ReadkeeperError(
            "too_large",
            f"{path} could not be opened within the limits of PDF reading: it went over "
            f"{failure.reason}. It is too big or complex to read here (or built to exhaust "
            "memory or time); nothing says it is damaged. Ask the user for a smaller copy "
            "(only the pages you need, taken out with a PDF tool), or one printed to PDF "
            "again.",
            file_path=path,
            reason=failure.reason,
        )
    return ReadkeeperError(
        "internal",
        f"{path}: the PDF worker stopped while opening it ({failure.reason}). Try the "
        "same read again.",
        file_path=path,
        reason=failure.reason,
    )


def _page_failed(failure: worker.Failure, number: int, reading: Reading) -> ReadkeeperError:
    """The error for a read whose first page could not be read or drawn."""
    path, render = reading.path, reading.render
    if failure.kind == "encrypted":
        return open_failed(path, failure)
    after = reading.after(number)
    rest = compress(after[: reading.settings.pdf_max_pages])
    skip = f" Go on with the pages after it: {again(pages=rest)}." if rest else ""
    data: dict[str, Any] = {
        "file_path": path,
        "page": number,
        "reason": failure.reason,
        "page_count": reading.page_count,
        "next_pages": rest or None,
    }
    if failure.kind == "internal":
        return ReadkeeperError(
            "internal",
            f"{path}: the PDF worker stopped while on page {number} ({failure.reason}). Try "
            "the same read again.",
            **data,
        )
    other = (
        f"Read its text instead: {again(pages=str(number), render=False)}."
        if render
        else f"Draw it instead: {again(pages=str(number), render=True)}."
    )
    if failure.kind == "too_large":
        message = (
            f"{path}: page {number} is too much to {'draw' if render else 'read as text'}: "
            f"it went over {failure.reason}, so it is built to exhaust memory or time (a "
            f"decompression bomb, say) or is far too complex. {other}{skip}"
        )
    else:
        message = (
            f"{path}: page {number} could not be {'drawn' if render else 'read'} "
            f"({failure.reason}): the file is likely damaged there. {other}{skip} Or ask the "
            "user for an intact copy, or to repair it with a PDF tool."
        )
    return ReadkeeperError(failure.kind, message, **data)


def _corrupt(path: str, detail: str) -> ReadkeeperError:
    return ReadkeeperError(
        "corrupt",
        f"{path} is not a readable PDF ({detail}). It may be truncated or damaged: ask the "
        "user for an intact copy, or to repair it with a PDF tool, and read that.",
        file_path=path,
        detail=detail,
    )


def neither_way(refused: ReadkeeperError, other_why: str, render: bool = True) -> ReadkeeperError:
    """The error for a page that could not be drawn (`render`) or whose text could not be
    read (`refused`), and that the other way does not show either (`other_why`, asked):
    it names no read, for none shows the page (never the two ways pointing at each
    other)."""
    data = refused.data
    path, number, rest = data["file_path"], data["page"], data.get("next_pages")
    went = "went over" if refused.kind == "too_large" else "failed on"
    first, second = (
        ("drawing it", "its text cannot be read either")
        if render
        else ("reading its text", "it cannot be drawn either")
    )
    skip = f" Go on with the pages after it: {again(pages=rest)}." if rest else ""
    return ReadkeeperError(
        refused.kind,
        f"{path}: no read shows page {number}: {first} {went} {data['reason']}, and "
        f"{second} ({other_why}).{skip} Ask the user for a copy that reads (e.g. printed "
        "to PDF again), or for what the page says.",
        **data,
        **{"text_reason" if render else "draw_reason": other_why},
    )
