"""The documents open in the editor, kept as `editor.OpenDocument`s by real path: opened,
saved (the text the disk now has) and closed. pygls keeps their text current on
`didChange` itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lsprotocol import types

from ..files.paths import uri_path
from .editor import OpenDocument
from .server import ReadkeeperServer


def on_open(ls: ReadkeeperServer, params: types.DidOpenTextDocumentParams) -> None:
    """Keep the opened document, and whether its text is what the disk has."""
    uri = params.text_document.uri
    path = uri_path(uri)
    if path:
        # pygls has just stored the document (under its own spelling of the URI); its
        # copy is the one didChange updates.
        document = ls.workspace.get_text_document(uri)
        # Opened as the disk has it (usual), or with unsaved changes already (a server
        # started after the person typed, a restored session): only the first is clean.
        same = ls.core.disk_text(path) == document.source
        ls.open_documents[path] = OpenDocument(uri, document, document.source if same else None)


def on_save(ls: ReadkeeperServer, params: types.DidSaveTextDocumentParams) -> None:
    """A saved document is clean again: its text is what the disk has."""
    path = uri_path(params.text_document.uri)
    opened = ls.open_documents.get(path) if path else None
    if path and opened:  # what the editor has now is what the disk has
        ls.open_documents[path] = opened._replace(baseline=opened.document.source)


def on_close(ls: ReadkeeperServer, params: types.DidCloseTextDocumentParams) -> None:
    """Forget a closed document, when it is the URI the document was kept under."""
    path = uri_path(params.text_document.uri)
    opened = ls.open_documents.get(path) if path else None
    if path and opened and opened.uri == params.text_document.uri:
        del ls.open_documents[path]


# The LSP methods served here, as the server registers them.
FEATURES: dict[str, Callable[..., Any]] = {
    types.TEXT_DOCUMENT_DID_OPEN: on_open,
    types.TEXT_DOCUMENT_DID_SAVE: on_save,
    types.TEXT_DOCUMENT_DID_CLOSE: on_close,
}
