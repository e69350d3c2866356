"""The disjoint merge: an edit of a file that changed since the session read it is
applied to the current content when the change provably leaves the edited text alone
(DESIGN.md, "Read-state: the rules"); otherwise it is refused as `stale`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..protocol import EditParams
from ..read.diffs import TooCostly, text_hunks
from ..state.readstate import ReadRecord
from .matching import Normalized, find_all, line_numbers
from .refusals import stale
from .services import EditServices


def merge_or_refuse(
    core: EditServices,
    record: ReadRecord,
    current: Normalized,
    old: str,
    params: EditParams,
    leased: bool,
) -> tuple[list[int], str]:
    """The hits to edit in the changed file, and the snapshot it was read as; or the
    `stale` error when the change cannot be proven disjoint from the edit."""
    path = record.path
    snapshot = core.snapshots.get(path, record.digest) if record.scope == "file" else None
    if snapshot is None:
        raise stale(core, record, current.text, path, "edit", None)
    hits_or_why = disjoint_hits(snapshot, current, old, params.replace_all, leased)
    if isinstance(hits_or_why, str):
        raise stale(core, record, current.text, path, "edit", hits_or_why)
    return hits_or_why, snapshot


def disjoint_hits(
    snapshot: str, current: Normalized, old: str, replace_all: bool, leased: bool
) -> list[int] | str:
    """Where to apply the edit in `current`, if the change from `snapshot` (what the
    agent read) to `current` provably does not touch it; else why not.

    Proof: with a line diff of the two, every match of `old` in `current` must lie in
    lines the diff leaves alone, and map there to a match in `snapshot`, one to one,
    covering all of them (or the single one without `replace_all`). Then editing
    `current` gives what the agent's edit of `snapshot` followed by the other change
    would: the two commute.
    """
    before = Normalized(snapshot)
    was = find_all(before.norm, old)
    now = find_all(current.norm, old)
    if not now:
        return "old_string is no longer in the file"
    if not was:
        return "old_string was not in the file you read either"
    if not replace_all and (len(was) > 1 or len(now) > 1):
        return "old_string matches more than one place"
    if len(was) != len(now):
        return f"the change made old_string match {len(now)} places instead of {len(was)}"
    try:
        hunks, a_lines, b_lines = text_hunks(snapshot, current.text)
    except TooCostly:
        return "the change is too large to compare with the edit"
    if not leased and any(i2 == a_lines or j2 == b_lines for _, i2, _, j2 in hunks):
        # Without a lease, a file still being written looks like this: refuse.
        return "the change reaches the end of the file (it may still be being written)"
    was_at = set(zip(line_numbers(before.norm, was), _columns(before.norm, was), strict=True))
    # A match spans its first line and as many more as it has line breaks before its
    # last character (a final LF belongs to the line it ends).
    extra_lines = old[:-1].count("\n")
    for line, column in zip(
        line_numbers(current.norm, now), _columns(current.norm, now), strict=True
    ):
        first = line - 1  # 0-based, as the hunks count
        last = first + extra_lines
        shift = 0
        for i1, i2, j1, j2 in hunks:
            touches = (j1 <= last and first < j2) if j1 < j2 else first < j1 <= last
            if touches:
                return (
                    f"the change touches lines {j1 + 1}-{max(j1 + 1, j2)}, which the edit "
                    f"spans (lines {first + 1}-{last + 1})"
                )
            if j2 <= first:
                shift += (i2 - i1) - (j2 - j1)
        if (line + shift, column) not in was_at:
            return f"the match at line {line} is not where it was when you read the file"
    return now


def _columns(text: str, offsets: Sequence[int]) -> list[int]:
    return [offset - (text.rfind("\n", 0, offset) + 1) for offset in offsets]
