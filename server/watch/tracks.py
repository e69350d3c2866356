"""One session's knowledge of one file it read, and what it was told of it since
(changes.py): where each notice's diff starts."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..state.readstate import ReadRecord


@dataclass
class Track:
    """One session's knowledge of one file it read, and what it was told since."""

    record_ns: int  # the read-state record this is about (a new read starts afresh)
    known: str  # state token of the content the session knows
    notified: str | None = None  # token last pushed to the editor
    reported: str | None = None  # token last returned by readkeeper/changes
    pending: bool = False  # maybe something for readkeeper/changes
    moved_to: str | None = None
    known_size: int | None = None  # bytes of the known content, when known


def track_of(record: ReadRecord, old: Track | None) -> Track:
    """The track of `record`, given the session's track of the file so far (`old`).
    A new read of the file starts afresh from what it showed, but a partial view (a
    search, a range, a symbol, a cell) of other content than the session held never
    moves what it knows of the lines it did not show: the track goes on from the one
    of the record it replaced, or starts from that record (`held_before`)."""
    if old is not None and old.record_ns == record.recorded_ns:
        return old
    if old is not None and record.follows_ns is not None and old.record_ns == record.follows_ns:
        return replace(old, record_ns=record.recorded_ns)
    held = record.held_before or record
    return Track(record.recorded_ns, known_token(held), known_size=held.size)


def known_token(record: ReadRecord) -> str:
    """The state token of the content `record` holds: its digest, or (a file read in
    ranges, too large to hold) its stat."""
    if record.scope == "file":
        return f"={record.digest}"
    return f"~{record.mtime_ns}:{record.size}"
