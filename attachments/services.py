"""What gathering attachments needs of the server, and nothing more.

`collect.gather` takes any object with these attributes; the `Readkeeper` facade is one.
Naming them here keeps attachments from depending on the facade that depends on it.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from readkeeper.files.paths import Workspace
from readkeeper.protocol import ChangesParams, ChangesResult, ReadParams, ReadResult
from readkeeper.read.ahead import Ahead
from readkeeper.read.tokens import TokenCounter
from readkeeper.settings import Settings
from readkeeper.state.buffers import Buffers
from readkeeper.state.readstate import ReadStates
from readkeeper.watch.changes import ChangeNotices

from .diagnostics import DiagnosticsStore


class AttachmentServices(Protocol):
    """The parts of the server the attachment sources read from."""

    @property
    def settings(self) -> Settings:
        """The settings in force."""
        ...

    def changes_for(self, params: ChangesParams) -> ChangesResult:
        """The session's change notices, with why they may not be all (watch/blind.py)."""
        ...

    @property
    def trusted(self) -> bool:
        """False in restricted mode (an untrusted workspace): no program runs on it."""
        ...

    @property
    def workspace(self) -> Workspace:
        """The roots and what each session may read."""
        ...

    @property
    def tokens(self) -> TokenCounter:
        """The token counter of the settings' encoding."""
        ...

    @property
    def read_states(self) -> ReadStates:
        """What each session read."""
        ...

    @property
    def buffers(self) -> Buffers:
        """The editor's open documents."""
        ...

    @property
    def diagnostics(self) -> DiagnosticsStore:
        """The diagnostics the editor forwarded."""
        ...

    @property
    def notices(self) -> ChangeNotices:
        """The change notices waiting for each session."""
        ...

    @property
    def ahead(self) -> Ahead:
        """The reads made between calls (told what git status names)."""
        ...

    @property
    def attachment_pool(self) -> ThreadPoolExecutor:
        """The threads the sources run on."""
        ...

    def read(self, params: ReadParams) -> ReadResult:
        """Read a file for a session, as `readkeeper/read` does (a mentioned file)."""
        ...
