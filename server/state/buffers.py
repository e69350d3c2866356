"""The editor's open documents, as the front end that sees them reports them.

A language server hears `didOpen`/`didChange`/`didClose`, so the LSP front end knows
which documents the editor holds and what they say now. It lends that knowledge to the
core as `Buffers`; reads show an edited buffer in place of the disk, and edits refuse
to write underneath one. Front ends without an editor (the CLI, a bare MCP server) lend
`NoBuffers`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Buffer:
    """An editor's in-memory copy of a document."""

    text: str
    version: int | None
    # Whether it changed since the editor opened or last saved it. A buffer that did not
    # but differs from the disk is a clean one the editor has not reloaded yet.
    edited: bool = True


class Buffers(Protocol):
    """Where the core learns about open editor documents (the LSP front end)."""

    def get(self, real_path: str) -> Buffer | None:
        """The editor's copy of the document at `real_path`; None when it is not open."""
        ...

    def paths(self) -> list[str]:
        """The real paths of every open document (a folder's move checks those in it)."""
        ...


class NoBuffers:
    """The buffers of a front end without an editor: no document is ever open."""

    def get(self, real_path: str) -> Buffer | None:
        """None: nothing is open."""
        return None

    def paths(self) -> list[str]:
        """None open."""
        return []
