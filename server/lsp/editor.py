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

from .. import quoting
from ..core import Buffer
from ..errors import ReadkeeperError

if TYPE_CHECKING:  # the edit code loads with the first edit, as in the core
    from ..edit.services import TextChange, Unapplied

# After the editor answers `applied: true`, how long its buffer change (didChange) may
# lag behind the answer: SETTLE_STEPS looks, SETTLE_STEP_S apart (a real editor sends
# it first, so only an editor that never sends it waits this out).
SETTLE_STEPS = 50
SETTLE_STEP_S = 0.02


class OpenDocument(NamedTuple):
    """A document open in the editor: the URI as the editor sent it (for
    workspace/applyEdit), pygls' copy, which didChange keeps current, and its text when
    the editor opened or last saved it."""

    uri: str
    document: TextDocument
    baseline: str | None  # None: opened with text the disk does not have (unsaved)
    # Changed in a way readkeeper could not follow (lsp/document_changes.py): its text
    # is unknown, so no call may read or write the file until it is saved or closed.
    lost: bool = False


def _lost(path: str, version: int | None) -> ReadkeeperError:
    """The `dirty_buffer` refusal of a document whose changes could not be followed."""
    return ReadkeeperError(
        "dirty_buffer",
        f"{quoting.name(path)} is open in the editor with unsaved changes that readkeeper "
        "could not follow (one change to it was too costly to apply), so it neither reads "
        "nor writes the file now: ask the user to save or close it, then read it again.",
        file_path=path,
        buffer_version=version,
    )


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
        if opened.lost:
            raise _lost(real_path, opened.document.version)
        text = opened.document.source
        return Buffer(text, opened.document.version, edited=text != opened.baseline)

    def paths(self) -> list[str]:
        """The real paths of the open documents."""
        return list(self._documents)

    # --- edits of open buffers (edit.services.BufferEditor) ---

    # The event loop that sends workspace/applyEdit: lent by whatever runs an edit.
    loop: asyncio.AbstractEventLoop | None = None

    def apply_edits(
        self,
        real_path: str,
        version: int | None,
        text: str,
        changes: Sequence[TextChange],
        timeout: float,
    ) -> Unapplied | None:
        """Apply `changes` to the open document with `workspace/applyEdit`; None when the
        buffer holds them, else why not. Runs on a worker thread, which waits for the
        editor's answer (at most `timeout` seconds) while the event loop sends the request."""
        from ..edit.services import Unapplied

        server = self._server
        opened = self._documents.get(real_path)
        if opened is None or self.loop is None:
            return Unapplied("closed")
        caps = server.client_capabilities.workspace
        if not (caps and caps.apply_edit):
            return Unapplied("unsupported")
        params = _request(server, opened.uri, version, text, changes)

        async def send() -> Unapplied | None:
            try:
                request = server.workspace_apply_edit_async(params)
                answer = await asyncio.wait_for(request, timeout)
            except TimeoutError:
                return Unapplied("no_answer", waited_s=timeout)
            except Exception as exc:  # the client failed the request: its words
                return Unapplied("failed", said=str(exc) or type(exc).__name__)
            if not answer.applied:
                return Unapplied("refused", said=answer.failure_reason or "")
            # An editor tells the change (didChange) before it answers; a late one gets
            # a moment. Done only when the buffer holds the edit, whatever the editor said:
            # a buffer as it was, or holding other text, did not take it.
            wanted = _line_feeds(_applied(text, changes))
            for _ in range(SETTLE_STEPS):
                if self._holds(real_path, wanted):
                    return None
                await asyncio.sleep(SETTLE_STEP_S)
            return None if self._holds(real_path, wanted) else Unapplied("not_applied")

        pending = asyncio.run_coroutine_threadsafe(send(), self.loop)
        try:  # bounded inside; this only outlasts an event loop that stopped
            return pending.result(timeout + SETTLE_STEPS * SETTLE_STEP_S + 5)
        except Exception:
            pending.cancel()
            return Unapplied("no_answer", waited_s=timeout)

    def _holds(self, real_path: str, wanted: str) -> bool:
        """Whether the open document holds `wanted` (line ends aside: an editor may make
        them its own), or was closed (its text is then the disk's, which a read shows)."""
        opened = self._documents.get(real_path)
        return opened is None or _line_feeds(opened.document.source) == wanted


def _applied(text: str, changes: Sequence[TextChange]) -> str:
    """`text` with `changes` (offsets in `text`, none overlapping) made."""
    for change in sorted(changes, key=lambda c: c.start, reverse=True):
        text = text[: change.start] + change.text + text[change.end :]
    return text


def _line_feeds(text: str) -> str:
    return text.replace("\r\n", "\n")


def _request(
    server: LanguageServer,
    uri: str,
    version: int | None,
    text: str,
    changes: Sequence[TextChange],
) -> types.ApplyWorkspaceEditParams:
    """The `workspace/applyEdit` of `changes` to the document `uri` holding `text`."""
    from ..edit.buffers import encoding_name, lsp_position

    caps = server.client_capabilities.workspace
    encoding = server.workspace.position_encoding
    units = encoding_name(encoding)
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
    if caps and caps.workspace_edit and caps.workspace_edit.document_changes:
        # Versioned: the editor refuses it if the person typed since we looked.
        document = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
        edit = types.WorkspaceEdit(
            document_changes=[types.TextDocumentEdit(text_document=document, edits=text_edits)]
        )
    else:
        edit = types.WorkspaceEdit(changes={uri: text_edits})
    return types.ApplyWorkspaceEditParams(edit=edit, label="readkeeper: agent edit")
