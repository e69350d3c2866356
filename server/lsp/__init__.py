"""The LSP front end (package `readkeeper.lsp`); `serve` is the way in.

`app` holds the one server and registers every handler on it: `lifecycle` (initialize,
settings, workspace folders, shutdown), `documents` (the editor's open documents),
`methods` (the readkeeper/* requests: one table, one decorator that maps failures to
error replies, `rpc_errors`), `watching` (change notices and the watcher's progress).
`server` is the pygls server itself, `editor` the editor's buffers and the
`workspace/applyEdit` bridge, `endpoint` readkeeper's pygls protocol (lifecycle rules,
quick reads answered on the event loop by `quick`, messages written with orjson), `logs`
where logging goes. The byte stream is readkeeper's own, not pygls': `transport` (the
connection), `framing` (frames cut from bytes) and `messages` (a frame's body as a
JSON-RPC message).
"""

from __future__ import annotations


def serve(tcp: tuple[str, int] | None = None) -> int:
    """Serve LSP on stdio (or to the first client on `tcp`) until `exit`; the process
    exit code."""
    from .app import serve as run  # pygls and the core load here, not with `transport`

    return run(tcp)
