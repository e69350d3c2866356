"""What the notices decided together share: one batch of the watcher's changes, or one
`readkeeper/changes` call (changes.py).

They share the looks at each file (a file is read once per batch), the diffs made (one
per change, whichever sessions it is for), and one diff budget (diffs.py), so that ten
files costly to diff cost one budget, not ten. Smaller files are judged first, and what
is decided is pushed before a large diff starts: an ordinary file's notice never waits
behind another file's diff.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .. import render
from ..protocol import FileChange
from ..quoting import sent_chars
from ..read.diffs import Budget
from .looks import Look

if TYPE_CHECKING:
    from .coalesce import FsChange

# Texts (before and after, in characters) past which a diff may take a while: the
# notices decided so far are pushed before it starts.
QUICK_DIFF_CHARS = 64 * 1024


@dataclass
class Batch:
    """The looks, diffs and diff budget of notices decided together."""

    looks: dict[str, Look] = field(default_factory=dict)
    diffs: dict[tuple[str, str, str], tuple[str, bool]] = field(default_factory=dict)
    budget: Budget = field(default_factory=Budget)
    # Where the watcher's batch pushes notices, and those decided but not pushed yet.
    send: Callable[[str, list[FileChange]], None] | None = None
    pushed: dict[str, list[FileChange]] = field(default_factory=dict)

    def flush(self) -> None:
        """Push the notices decided so far."""
        pushed, self.pushed = self.pushed, {}
        for session, changes in pushed.items():
            if self.send is not None:
                self.send(session, changes)

    def before_diff(self, chars: int) -> None:
        """A diff of texts of `chars` characters is about to start."""
        if chars > QUICK_DIFF_CHARS:
            self.flush()


def cost_order(fs_change: FsChange) -> tuple[bool, int]:
    """Folders first, then files by size."""
    return (not fs_change.folder, 0 if fs_change.folder else size_of(fs_change.path))


def size_of(path: str) -> int:
    """The size of `path`, for ordering only (0 when it cannot be had)."""
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


_NOTICE_OVERHEAD_TOKENS = 24  # file_path, kind and the JSON around a diff


def notice_cost(count: Callable[[str], int], change: FileChange) -> tuple[int, int]:
    """What a notice sends, counted as it is shown (render.change_lines: its name
    escaped, its note, its diff's lines escaped and indented), and its fields'
    allowance (the JSON keys of the LSP's answer): its tokens and characters."""
    shown = {
        "kind": change.kind,
        "file_path": change.file_path,
        "new_path": change.new_path,
        "diff": change.diff,
        "truncated": change.truncated,
        "note": change.note,
    }
    said = "\n".join(render.change_lines(shown))
    return _NOTICE_OVERHEAD_TOKENS + count(said), sent_chars(said) + 1
