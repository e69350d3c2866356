"""The documents open in the editor, kept as `editor.OpenDocument`s by real path: opened,
saved (the text the disk now has) and closed. pygls keeps their text current on
`didChange` itself.

What the editor opens is held in memory, so it is held within caps: `MAX_DOCUMENTS`
documents and `MAX_CHARS` characters of their text (pygls' copies under every URI, and
the saved text kept beside an edited one). A document opened or grown past them is not
tracked: pygls forgets it, a warning is logged, and `readkeeper/stats` counts it under
`client_state_dropped`. Reads and edits of it then go to the disk, as for a closed one
(an edit checks the disk's text it read, so a buffer it cannot see is never overwritten
silently: saving the buffer later is the editor's own conflict). A document whose
changes were too costly to apply is *lost* instead (document_changes.py): its text
unknown, every call naming it is refused `dirty_buffer` until the editor saves or
closes it. A document that is not a file (untitled:, git:) is never tracked:
readkeeper reads files only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from lsprotocol import types

from ..errors import shown_name
from ..files.paths import uri_path
from ..files.reach import remembering
from .document_changes import WORK_BUDGET, length
from .editor import OpenDocument
from .server import ReadkeeperServer

log = logging.getLogger("readkeeper")

# Far above what an editor holds open; each is also cut by the message size cap.
MAX_DOCUMENTS = 2_000
MAX_CHARS = 64_000_000
_CAPS = f"readkeeper's caps ({MAX_DOCUMENTS} documents, {MAX_CHARS} characters of open text)"


def on_open(ls: ReadkeeperServer, params: types.DidOpenTextDocumentParams) -> None:
    """Keep the opened document, and whether its text is what the disk has."""
    uri = params.text_document.uri
    path = uri_path(uri)
    if not path:
        ls.workspace.remove_text_document(uri)
    elif not _within_caps(ls):
        _untrack(ls, uri, path, f"opened past {_CAPS}")
    else:
        # pygls has just stored the document (under its own spelling of the URI); its
        # copy is the one didChange updates.
        document = ls.workspace.get_text_document(uri)
        # Opened as the disk has it (usual), or with unsaved changes already (a server
        # started after the person typed, a restored session): only the first is clean.
        # Its walks share the folders they pass, as a call's do (round 46: a document
        # 2,000 folders deep held the editor's next request 5 s).
        with remembering():
            disk = ls.core.disk_text(path)
            if disk is None:  # over the read cap (or not text): compared byte for byte
                from ..read import pipeline  # loaded by disk_text already

                same = pipeline.disk_has(ls.core, path, document.source)
            else:
                same = disk == document.source
        ls.open_documents[path] = OpenDocument(uri, document, document.source if same else None)


def on_change(ls: ReadkeeperServer, params: types.DidChangeTextDocumentParams) -> None:
    """A document grown past the caps (the change applied), or whose changes were past
    the work one notification may cost (not applied: endpoint.py has let it go), stops
    being tracked."""
    uri = params.text_document.uri
    if unquote(uri) not in ls.workspace.text_documents:
        _lose(ls, uri, uri_path(uri))
    elif not _within_caps(ls):
        _untrack(ls, uri, uri_path(uri), f"grown past {_CAPS}")


def _within_caps(ls: ReadkeeperServer) -> bool:
    held = ls.workspace.text_documents
    if len(held) > MAX_DOCUMENTS:
        return False
    chars = sum(length(document) for document in held.values())
    # An edited document's saved text is a second copy.
    chars += sum(
        len(opened.baseline)
        for opened in ls.open_documents.values()
        if opened.baseline is not None and opened.baseline is not opened.document.source
    )
    return chars <= MAX_CHARS


def _lose(ls: ReadkeeperServer, uri: str, path: str | None) -> None:
    """A document whose changes were past the work one notification may cost: its text
    is unknown from here on, so calls naming it are refused (`dirty_buffer`) until the
    editor saves or closes it, rather than read or written on the disk beneath unsaved
    work (round 42)."""
    opened = ls.open_documents.get(path) if path else None
    if path and opened and opened.uri == uri:
        ls.open_documents[path] = opened._replace(lost=True)
    log.warning(
        "Not following the editor's document %s: its changes were past the work one "
        "notification may cost (%s characters); calls naming it are refused until it is "
        "saved or closed.",
        shown_name(uri),
        f"{WORK_BUDGET:,}",
    )
    ls.core.stats.client_state_dropped("documents")


def _untrack(ls: ReadkeeperServer, uri: str, path: str | None, why: str) -> None:
    ls.workspace.remove_text_document(uri)
    opened = ls.open_documents.get(path) if path else None
    if path and opened and opened.uri == uri:
        del ls.open_documents[path]
    log.warning(
        "Not tracking the editor's document %s: %s; reads and edits of it use the file on disk.",
        shown_name(uri),
        why,
    )
    ls.core.stats.client_state_dropped("documents")


def on_save(ls: ReadkeeperServer, params: types.DidSaveTextDocumentParams) -> None:
    """A saved document is clean again: its text is what the disk has."""
    path = uri_path(params.text_document.uri)
    opened = ls.open_documents.get(path) if path else None
    if path and opened and opened.lost:  # the disk has its text now: read from there
        del ls.open_documents[path]
    elif path and opened:  # what the editor has now is what the disk has
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
    types.TEXT_DOCUMENT_DID_CHANGE: on_change,
    types.TEXT_DOCUMENT_DID_SAVE: on_save,
    types.TEXT_DOCUMENT_DID_CLOSE: on_close,
}
