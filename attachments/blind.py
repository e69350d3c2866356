"""The change notices' note when the watcher cannot hear every change (watch/blind.py).

Without it, no `changes` item would read as "none of the files you read changed" where
readkeeper cannot know; so the note is its own item, kept when the budget is tight
(`protected`: a cut shortens it, nothing drops it).
"""

from __future__ import annotations

from readkeeper import quoting

from .model import CHANGES, Attachment


def watcher_note(note: str | None, max_tokens: int) -> list[Attachment]:
    """The item saying why the changes listed may not be all, and what to do; none
    when there is no `note` (the watcher hears every change)."""
    if not note:
        return []
    item = Attachment(
        type="changes",
        content=f"[{quoting.line(note)}]",
        priority=CHANGES,
        source="watcher",
        max_tokens=max_tokens,
        protected=True,
    )
    return [item]


__all__ = ["watcher_note"]
