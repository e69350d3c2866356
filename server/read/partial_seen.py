"""A read never counts as seeing what it did not show.

A read of part of a file (a range, head or tail, a symbol, anchors, read_many's ranges,
an outline, the stub of a re-read of such lines) that finds the file changed since the
session's record of it shows the agent only the lines it shows. What the session knows
of the rest stays what it knew: its earlier content, with only the changes inside the
lines shown taken in. That is what the read records (as a merged edit records what the
agent knows, edit/unseen.py), so a whole-file write is refused `stale` with the diff of
the change it never saw, an edit of those lines needs a read (a disjoint one is merged
with the change shown), and a whole read, which shows everything, makes the record the
file again. When the earlier content is not kept, the session knows nothing it may
write over: the record matches no file until a whole read.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import quoting
from ..state.known import known_digest
from ..state.readstate import ReadRecord
from .diffs import TooCostly, text_hunks
from .services import ReadServices


@dataclass(frozen=True)
class Known:
    """What the session knows of a file after a partial read that did not show all of a
    change: the digest its record keeps (of `text`, or one no file has)."""

    digest: str
    text: str | None


def known_after_read(
    services: ReadServices,
    session: str,
    path: str,
    digest: str,
    text: str,
    first: int,
    count: int,
) -> Known | None:
    """What the session knows of `path` after a read showed lines [first, first + count)
    (0-based, of `text`, whose digest is `digest`): None when that is the file itself
    (nothing held before, or nothing changed outside those lines)."""
    previous = services.read_states.get(session, path)
    if not _changed_since(previous, digest) or previous is None:
        return None
    before = services.snapshots.get(path, previous.digest)
    known = None if before is None else taken_in(before, text, first, count)
    if known == text:
        return None
    recorded = known_digest(known, digest)
    if known is not None:
        services.snapshots.put(path, recorded, known)
    return Known(recorded, known)


def note(path: str, earlier: str | None) -> str:
    """What a partial read that left a change unseen says about it."""
    said = (
        f"{quoting.name(path)} changed since you read it, outside these lines; read it "
        "whole to see "
        "(until then a whole-file write is refused as stale)."
    )
    return f"{earlier} {said}" if earlier else said


def _changed_since(previous: ReadRecord | None, digest: str) -> bool:
    return previous is not None and previous.scope == "file" and previous.digest != digest


def taken_in(before: str, now: str, first: int, count: int) -> str | None:
    """`before` with only the changes that made `now` whose new lines lie within lines
    [first, first + count) of `now` (a removal: strictly between two lines shown);
    None when comparing them is too costly."""
    try:
        hunks, _, _ = text_hunks(before, now)
    except TooCostly:
        return None
    old, new = lines_of(before), lines_of(now)
    stop = first + count
    pieces: list[str] = []
    kept = 0  # lines of `before` already copied
    for i1, i2, j1, j2 in hunks:
        inside = first <= j1 and j2 <= stop if j1 < j2 else first < j1 < stop
        if not inside:
            continue
        pieces += old[kept:i1] + new[j1:j2]
        kept = i2
    pieces += old[kept:]
    return "".join(pieces)


def lines_of(text: str) -> list[str]:
    """`text`'s lines, each with its LF (the last without one when the text ends
    without it): the lines `text_hunks` numbers."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines
