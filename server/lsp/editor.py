"""The editor's open documents as the core sees them (its `Buffers`), and the bridge that
applies an edit of an open document through `workspace/applyEdit` (`edit.services.
BufferEditor`): the worker thread running the edit waits while the event loop sends the
request and the editor answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from ..core import Buffer

if TYPE_CHECKING:  # the edit code loads with the first edit, as in the core
    from ..edit.services import TextChange

# How long an edit of an open buffer waits for the editor to answer workspace/applyEdit.
APPLY_EDIT_TIMEOUT_S = 30.0


class OpenDocument(NamedTuple):
    """A document open in the editor: the URI as the editor sent it (for
    workspace/applyEdit), pygls' copy, which didChange keeps current, and its text when
    the editor opened or last saved it."""

    uri: str
    document: TextDocument
    baseline: str | None  # None: opened with text the disk does not have (unsaved)


class EditorBuffers:
    """The core's view of documents open in the editor, keyed like the core's files: by
    real path (`uri_path`), whatever spelling of the URI the editor used."""

    def __init__(self, server: LanguageServer, documents: dict[str, OpenDocument]) -> None:
        self._server = server
        self._documents = documents

    def get(self, real_path: str) -> Buffer | None:
        """The editor's copy of the document at `real_path`; None when it is not open."""
        opened = self._documents.get(real_path)
        if opened is None:
            return None
        text = opened.document.source
        return Buffer(text, opened.document.version, edited=text != opened.baseline)

    def paths(self) -> list[str]:
        """The real paths of the open documents."""
        return list(self._documents)

    # --- edits of open buffers (edit.services.BufferEditor) ---

    # The event loop that sends workspace/applyEdit: lent by whatever runs an edit.
    loop: asyncio.AbstractEventLoop | None = None

    def apply_edits(
        self, real_path: str, version: int | None, text: str, changes: Sequence[TextChange]
    ) -> str | None:
        """Apply `changes` to the open document with `workspace/applyEdit`; None when the
        editor applied them, else why not. Runs on a worker thread, which waits for
        the editor's answer while the event loop sends the request."""
        server = self._server
        opened = self._documents.get(real_path)
        if opened is None or self.loop is None:
            return "the document is no longer open"
        uri = opened.uri
        caps = server.client_capabilities.workspace
        if not (caps and caps.apply_edit):
            return "the editor does not accept workspace/applyEdit"
        from ..edit.buffers import lsp_position

        encoding = server.workspace.position_encoding
        units = str(getattr(encoding, "value", encoding) or "utf-16")
        text_edits = [
            types.TextEdit(
                range=types.Range(
                    start=types.Position(*lsp_position(text, change.start, units)),
                    end=types.Position(*lsp_position(text, change.end, units)),
                ),
                new_text=change.text,
            )
            for change in changes
        ]
        if caps.workspace_edit and caps.workspace_edit.document_changes:
            # Versioned: the editor refuses it if the person typed since we looked.
            document = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
            edit = types.WorkspaceEdit(
                document_changes=[types.TextDocumentEdit(text_document=document, edits=text_edits)]
            )
        else:
            edit = types.WorkspaceEdit(changes={uri: text_edits})
        params = types.ApplyWorkspaceEditParams(edit=edit, label="readkeeper: agent edit")

        async def send() -> types.ApplyWorkspaceEditResult:
            return await server.workspace_apply_edit_async(params)

        try:
            pending = asyncio.run_coroutine_threadsafe(send(), self.loop)
            answer = pending.result(APPLY_EDIT_TIMEOUT_S)
        except Exception as exc:  # a timeout, or the client failed the request
            return f"workspace/applyEdit failed: {exc or type(exc).__name__}"
        if not answer.applied:
            return answer.failure_reason or "the editor did not apply it"
        return None
