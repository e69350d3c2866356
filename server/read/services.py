"""What a read needs from the rest of readkeeper, and nothing more.

The read pipeline is handed the core facade, but sees it only as `ReadServices`: the
workspace to open files beneath, the settings and the token counter in force, the
session's read-state, the snapshots and counters a read updates, the editor's open
buffers, the output folders of rendered pages, and the one method of the diagnostics
store a read calls. The facade satisfies it structurally, so this folder never imports
the core (or the attachments, whose diagnostics store is described here by that method).
The members are read on every use, never kept: settings and the token counter change
when the client configures the server.
"""

from __future__ import annotations

from typing import Protocol

from ..files.outputs import OutputFolders
from ..files.paths import Workspace
from ..settings import Settings
from ..state.buffers import Buffers
from ..state.readstate import ReadStates
from ..state.shown_lines import ShownLines
from ..state.snapshots import Snapshots
from ..state.stats import Stats
from .tokens import TokenCounter


class SeenDiagnostics(Protocol):
    """The part of the diagnostics store a read uses: a session that read a file has
    seen what the editor reports for it."""

    def mark_seen(self, session: str, path: str) -> None:
        """`session` read `path`: what is reported for it now is no longer news."""
        ...


class ReadServices(Protocol):
    """The core as a read sees it (the `Readkeeper` facade satisfies it)."""

    @property
    def workspace(self) -> Workspace:
        """The roots, allowed paths and grants: where a file is opened beneath."""
        ...

    @property
    def settings(self) -> Settings:
        """The settings in force (caps, limits, line numbering)."""
        ...

    @property
    def tokens(self) -> TokenCounter:
        """The token counter of the configured encoding."""
        ...

    @property
    def read_states(self) -> ReadStates:
        """What each session holds: the stub rule's memory."""
        ...

    @property
    def snapshots(self) -> Snapshots:
        """What reads showed, for later diffs and disjoint edits."""
        ...

    @property
    def stats(self) -> Stats:
        """The counters `readkeeper/stats` reports."""
        ...

    @property
    def buffers(self) -> Buffers:
        """The editor's open documents, which stand in for the disk when edited."""
        ...

    @property
    def outputs(self) -> OutputFolders:
        """The sessions' folders for rendered PDF pages."""
        ...

    @property
    def diagnostics(self) -> SeenDiagnostics:
        """The editor's diagnostics, which a read marks as seen."""
        ...

    @property
    def shown_lines(self) -> ShownLines:
        """Which lines each session was shown, at which content (read/anchors.py)."""
        ...
