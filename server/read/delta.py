"""Delta re-reads: the agent holds a file whole, and it changed; send the diff.

A session that read a file whole (or wrote it, or edited what it held whole) knows its
content. When that content changed since (its own edit, a formatter, another writer),
a re-read answers `file_changed`: a unified diff from the version the agent holds to the
current one, when that diff costs much less than the file itself. Otherwise the caller
sends the file as usual.
"""

from __future__ import annotations

from ..hints import again
from ..protocol import ChangedFile
from ..settings import Settings
from .diffs import bounded_diff
from .loop_guard import costly_step
from .tokens import TokenCounter, estimate_tokens

# Each numbered line costs its number and tab (about 2 tokens) on top of its text.
_NUMBERING_TOKENS_PER_LINE = 2
# Texts (before and after, in characters) small enough to diff on the event loop.
_QUICK_DIFF_CHARS = 8 * 1024


def changed_view(
    held: str, current: str, path: str, settings: Settings, counter: TokenCounter
) -> ChangedFile | None:
    """The diff from `held` to `current` as a `file_changed` view, or None when it would
    not save enough (over `delta_max_percent` of what the whole file costs) or was cut."""
    lines = current.count("\n") + (0 if current.endswith("\n") or not current else 1)
    whole = estimate_tokens(current) + _NUMBERING_TOKENS_PER_LINE * lines
    budget = whole * settings.delta_max_percent // 100
    if budget <= 0:
        return None
    if len(held) + len(current) > _QUICK_DIFF_CHARS:
        costly_step()  # difflib can be quadratic: not on the event loop
    diff, truncated = bounded_diff(held, current, path, budget)
    if truncated:
        return None
    tokens = counter.count(diff)
    if tokens > budget:
        return None
    return ChangedFile(
        file_path=path,
        diff=diff,
        total_lines=lines,
        tokens=tokens,
        note=(
            "Changed since you read it: this diff turns the content you hold into the "
            f"current one ({lines:,} lines). Read with {again(force=True)} for the whole file."
        ),
    )
