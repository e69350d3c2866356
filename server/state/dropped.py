"""What a session dropped at the session bound (sessions.py) is told: every answer
that speaks of its read-state (`changes` and the change notices attachment, `stats`,
`forget`, a read, readMany, and the refusals calls.py makes true) says it was dropped,
until the session starts afresh (its own `forget` of everything). Never "No changes",
"0 files" or a first read, said as if it had never read."""

from __future__ import annotations

from typing import Any

from . import sessions

# What each answer that speaks of the session's read-state is.
TOLD = frozenset(("changes", "attachments", "stats", "forget", "read", "readMany"))


def words() -> str:
    """Why the session holds nothing, and what to do."""
    return (
        "This session's read-state was dropped: the server keeps at most "
        f"{sessions.MAX_PER_PRINCIPAL} sessions per connection (the least recently used go "
        "first), and this one had been used less recently than that many others. What it "
        "read or changed before is no longer known, so read the file again."
    )


def told(method: str, result: Any) -> Any:
    """`result` of `method` for a dropped session, saying so (`session_dropped` and a
    note, where the answer has one)."""
    if method not in TOLD or not isinstance(result, dict):
        return result
    note = words() + " Changes to files it read before are not reported."
    if method == "attachments":  # the change notices it can no longer give, said
        lost = {"type": "changes", "source": None, "reason": note}
        return {**result, "dropped": [*(result.get("dropped") or []), lost]}
    if method == "read":
        file = result.get("file")
        if isinstance(file, dict) and result.get("type") != "file_unchanged":
            return {**result, "file": {**file, "note": _joined(note, file.get("note"))}}
        return result
    return {**result, "note": _joined(note, result.get("note")), "session_dropped": True}


def _joined(note: str, other: Any) -> str:
    return f"{note} {other}" if isinstance(other, str) and other else note
