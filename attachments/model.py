"""What an attachment is, and what the agent is told about the ones it did not get."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from readkeeper import quoting
from readkeeper.errors import cut_middle, spelled

from .cut_notes import CutNote

# Priorities: higher is kept first. The user's own input is never dropped (it may be cut
# to fit, with a note), so it sits above everything else.
USER = 100
NEW_DIAGNOSTICS = 80
SELECTION = 75
CHANGES = 70
MEMORY = 60
DIAGNOSTICS = 50
GIT_STATUS = 30
ENVIRONMENT = 10


@dataclass
class Attachment:
    """One typed piece of context. `content` is text, except for non-text reads (an image
    mention carries its read result), whose size is fixed by their reader."""

    type: str
    content: Any
    priority: int
    max_tokens: int
    source: str  # where it came from: a path, "editor", "git", ...
    tokens: int = 0
    truncated: bool = False
    # How the agent gets what a cut left out; ends the note appended to cut content. For
    # file-backed text, the note names the exact `readkeeper/read` that continues it.
    rest_hint: str = ""
    file_path: str | None = None
    first_line: int = 1  # the line number of the content's first line in that file
    # The content is a label line, then the file's text in a fence (quoting.fence), then
    # maybe a note: a cut keeps the label and closes the fence (a memory file).
    fenced: bool = False
    protected: bool = False  # the user's own input: cut if it must be, never dropped
    # What a cut's note says (cut_notes.py): what was kept in the file's own terms and
    # the call for the rest. None: "showing K of N lines" and `rest_hint`.
    cut_note: CutNote | None = None
    # What its header and fences take as sent (render.attachment_header): counted in
    # the budget with `tokens` (the content's own count), set when it is kept.
    frame_tokens: int = 0

    def as_json(self) -> dict[str, Any]:
        """The attachment as `readkeeper/attachments` sends it."""
        return {
            "type": self.type,
            "priority": self.priority,
            "tokens": self.tokens,
            "content": self.content,
            "truncated": self.truncated,
            "source": self.source,
        }


@dataclass(frozen=True)
class Dropped:
    """Context the agent did not get (dropped for the budget, or from a source that
    failed or ran out of time), and why."""

    type: str
    source: str
    reason: str
    tokens: int | None = None

    def as_json(self) -> dict[str, Any]:
        """The entry as `readkeeper/attachments` lists it under `dropped`."""
        data: dict[str, Any] = {"type": self.type, "source": self.source, "reason": self.reason}
        if self.tokens is not None:
            data["tokens"] = self.tokens
        return data


@dataclass
class Fitted:
    """The budgeter's answer, the `readkeeper/attachments` result: what was kept, what
    was dropped."""

    attachments: list[Attachment] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    budget_tokens: int = 0

    @property
    def used_tokens(self) -> int:
        """The tokens the kept attachments take as sent: each one's content and its
        header and fences."""
        return sum(a.tokens + a.frame_tokens for a in self.attachments)

    def as_json(self, count: Callable[[str], int] | None = None) -> dict[str, Any]:
        """The `readkeeper/attachments` result as it is sent: the dropped ones listed
        within what the budget has left, counted by `count` (`dropped_shown`)."""
        room = self.budget_tokens - self.used_tokens - HEADER_TOKENS
        return {
            "attachments": [a.as_json() for a in self.attachments],
            "dropped": dropped_shown(self.dropped, room, count),
            "used_tokens": self.used_tokens,
            "budget_tokens": self.budget_tokens,
        }


# The answer's header line ("288 of 300 tokens") and its `dropped:` label.
HEADER_TOKENS = 12

# The dropped entries an answer lists one by one; the rest are counted per type, so the
# answer stays small however many were dropped. Each listed entry is bounded too (a
# source and a reason as JSON spells them, escapes counted), and the listed entries
# together: budget_tokens 1 with 20 long missing names sent ~118,000 tokens of reasons
# (attack round 27). At most about 3,300 tokens, whatever the names hold. A reason is
# readkeeper's words around the names it quotes, its kind first and the next call last,
# so a long one loses its middle (a long name's), never its ends; a source keeps the
# start of its path and its file's name.
DROPPED_SHOWN = 20
_ENTRY_TOKENS = 2  # a listed entry's separator in the list, and its line in the text
MAX_DROPPED_SOURCE_CHARS = 240
MAX_DROPPED_REASON_CHARS = 1_000
MAX_DROPPED_CHARS = 8_000


def _cut(text: str, most: int, own: bool = False) -> str:
    """`text` whole, or its middle cut so that about `most` characters remain as JSON
    spells them (errors.cut_middle): two fifths of them from its start, the rest from
    its end. A name's own `[` of cut-marker words is escaped (quoting.marks), so only
    readkeeper's mark reads as one; `own`: readkeeper's words (a reason), whose names
    were shown so already and whose marks are readkeeper's."""
    if sum(map(spelled, text)) <= most:
        return text if own else quoting.marks(text)
    part = str if own else quoting.marks
    return cut_middle(text, most * 2 // 5, most - most * 2 // 5, part)


def _bounded(item: Dropped) -> dict[str, Any]:
    entry = item.as_json()
    entry["source"] = _cut(item.source, MAX_DROPPED_SOURCE_CHARS)
    entry["reason"] = _cut(item.reason, MAX_DROPPED_REASON_CHARS, own=True)
    return entry


def dropped_shown(
    dropped: list[Dropped], room: int | None = None, count: Callable[[str], int] | None = None
) -> list[dict[str, Any]]:
    """The first `DROPPED_SHOWN` entries, each cut (`_cut`), while together they stay
    within `MAX_DROPPED_CHARS` and, given a `count`er, within `room` tokens (what the
    budget has left, each entry counted as sent: its JSON); then one entry per type of
    the rest: `{type, source: null, reason, count}`, readkeeper's own words of a fixed
    size per type (so a budget spent whole still says what it dropped), whose room is
    set aside before any entry is listed."""
    shown: list[dict[str, Any]] = []
    size = spent = 0
    if count is not None and room is not None:  # the summary of what is not listed, first
        kinds = {item.type: 99_999 for item in dropped}  # its widest count
        spent = sum(count(quoting.json_text(entry)) for entry in _counted(kinds))
    for item in dropped[:DROPPED_SHOWN]:
        entry = _bounded(item)
        said = quoting.json_text(entry)
        size += len(said)
        if shown and size > MAX_DROPPED_CHARS:
            break
        if count is not None and room is not None:
            spent += count(said) + _ENTRY_TOKENS
            if spent > room:
                break
        shown.append(entry)
    rest: dict[str, int] = {}
    for item in dropped[len(shown) :]:
        rest[item.type] = rest.get(item.type, 0) + 1
    return shown + _counted(rest)


def _counted(rest: dict[str, int]) -> list[dict[str, Any]]:
    said = []
    for kind, count in rest.items():
        reason = (
            f"{count:,} more of this type were dropped, not listed one by one to keep this "
            "answer small: ask for fewer at a time, or with a larger budget_tokens"
        )
        said.append({"type": kind, "source": None, "reason": reason, "count": count})
    return said


def more_dropped(shown: list[dict[str, Any]], more: list[Dropped]) -> list[dict[str, Any]]:
    """A `dropped_shown` list with `more` entries added by the same bounds: listed (each
    cut) while the listed ones stay within `DROPPED_SHOWN` and `MAX_DROPPED_CHARS`, the
    rest counted per type with those already counted (a front end's own drops: an
    attached agent's scope, attach/scope.py)."""
    listed = [d for d in shown if not (d.get("source") is None and "count" in d)]
    rest: dict[str, int] = {}
    for d in shown:
        if d not in listed:
            rest[str(d.get("type"))] = rest.get(str(d.get("type")), 0) + int(d["count"])
    size = sum(len(quoting.json_text(d)) for d in listed)
    for item in more:
        entry = _bounded(item)
        size += len(quoting.json_text(entry))
        if len(listed) >= DROPPED_SHOWN or size > MAX_DROPPED_CHARS:
            rest[item.type] = rest.get(item.type, 0) + 1
            continue
        listed.append(entry)
    return listed + _counted(rest)
