"""What the edit code needs from the rest of readkeeper, and nothing more.

Edits and writes are handed the core facade, but see it only as `EditServices`: the
workspace, the settings, the read-states and snapshots, the editor's open buffers
(`state.buffers`) and the diagnostics baselines. The facade satisfies it structurally,
so this folder never imports the core (or the attachments, whose diagnostics store is
described here by the two methods an edit calls).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from ..files.paths import Workspace
from ..read.tokens import TokenCounter
from ..settings import Settings
from ..state.buffers import Buffers
from ..state.readstate import ReadStates
from ..state.snapshots import Snapshots

# What makes two diagnostics the same problem: severity, message, source, code (the
# diagnostics store's `Key`).
DiagnosticKey = tuple[int, str, str, str]


@dataclass(frozen=True)
class TextChange:
    """Replace text[start:end] with `text` (offsets in the text the change applies to)."""

    start: int
    end: int
    text: str


# Why an editor did not apply an edit: it refused, failed the request, did not answer
# in time, said it applied it yet its buffer does not hold it, had closed the document,
# or cannot apply edits at all.
UnappliedReason = Literal["refused", "failed", "no_answer", "not_applied", "closed", "unsupported"]


@dataclass(frozen=True)
class Unapplied:
    """Why the editor did not apply an edit: `reason`, and `said`, the editor's own
    words about it (another party's text: the core shows it only as data, on one line),
    or `waited_s`, how long it went unanswered."""

    reason: UnappliedReason
    said: str = ""
    waited_s: float = 0.0


@runtime_checkable
class BufferEditor(Protocol):
    """A front end that can change an open editor buffer (LSP: `workspace/applyEdit`)."""

    def apply_edits(
        self,
        real_path: str,
        version: int | None,
        text: str,
        changes: Sequence[TextChange],
        timeout: float,
    ) -> Unapplied | None:
        """Apply `changes` (offsets in `text`, the buffer at `version`), waiting at most
        `timeout` seconds for the editor; None when the buffer holds them, else why not."""
        ...


class DiagnosticBaselines(Protocol):
    """The part of the diagnostics store an edit uses: what is reported now, and what a
    session has seen."""

    def reported(self, path: str) -> Counter[DiagnosticKey]:
        """What the editor reports for `path` now."""
        ...

    def set_baseline(self, session: str, path: str, seen: Counter[DiagnosticKey]) -> None:
        """What `session` has seen reported for `path`; anything beyond it is new."""
        ...


class EditServices(Protocol):
    """The core as edits and writes see it (the `Readkeeper` facade satisfies it)."""

    @property
    def workspace(self) -> Workspace:
        """The roots and allowed paths, to resolve and refuse paths."""
        ...

    @property
    def settings(self) -> Settings:
        """The current settings (size limits, line endings, open-buffer policy)."""
        ...

    @property
    def tokens(self) -> TokenCounter:
        """The token counter, to refuse a change of a file no read would show (its path
        too long as shown: read/room.py)."""
        ...

    @property
    def read_states(self) -> ReadStates:
        """What each session read, to check and to record."""
        ...

    @property
    def snapshots(self) -> Snapshots:
        """What reads showed, for the disjoint merge and the diff of a `stale` refusal."""
        ...

    @property
    def buffers(self) -> Buffers:
        """The editor's open documents (a `BufferEditor` too when it can apply edits)."""
        ...

    @property
    def diagnostics(self) -> DiagnosticBaselines:
        """The editor's diagnostics, whose baseline an edit moves."""
        ...
