"""A small readkeeper client over stdio, for the demo, the benchmarks and your own agent.

It is pygls' `LanguageClient` with one change: results and notifications of readkeeper's
own methods stay plain JSON (dicts and lists) instead of pygls' namedtuples.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import cattrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.client import LanguageClient
from pygls.protocol import JsonRPCNotification, JsonRPCResponseMessage, default_converter


def raw_json_converter() -> cattrs.Converter:
    """pygls' converter, minus the namedtuples for untyped results and notifications."""
    converter: cattrs.Converter = default_converter()  # type: ignore[no-untyped-call]
    for cls in (JsonRPCResponseMessage, JsonRPCNotification):
        converter.register_structure_hook(cls, lambda obj, cls: cls(**obj))
    return converter


class ReadkeeperClient(LanguageClient):
    """A language client of `readkeeper serve` that keeps what the server sends besides
    results: log and shown messages, change notices, and the end of its stderr."""

    STDERR_KEPT = 1 << 20

    def __init__(self) -> None:
        super().__init__("readkeeper-client", "0", converter_factory=raw_json_converter)
        self.log_messages: list[types.LogMessageParams] = []
        self.shown_messages: list[types.ShowMessageParams] = []
        self.change_notices: list[Any] = []  # readkeeper/didChangeReadFiles, as sent
        self.server_stderr = bytearray()  # the end of the server's log

        @self.feature(types.WINDOW_LOG_MESSAGE)
        def on_log(client: ReadkeeperClient, params: types.LogMessageParams) -> None:
            client.log_messages.append(params)

        @self.feature(types.WINDOW_SHOW_MESSAGE)
        def on_show(client: ReadkeeperClient, params: types.ShowMessageParams) -> None:
            client.shown_messages.append(params)

        @self.feature("readkeeper/didChangeReadFiles")
        def on_changes(client: ReadkeeperClient, params: Any) -> None:
            client.change_notices.append(params)

    async def start_server(self, *extra_args: str, env: dict[str, str] | None = None) -> None:
        """Start `python -m readkeeper serve` with `extra_args` (and `env` over this
        process's environment), and speak LSP to it over stdio."""
        await self.start_io(
            sys.executable,
            "-m",
            "readkeeper",
            "serve",
            *extra_args,
            env={**os.environ, **(env or {})},
        )

    async def start_io(self, cmd: str, *args: Any, **kwargs: Any) -> None:
        """pygls' start, plus a reader of the server's stderr: pygls pipes it and never
        reads it, so a server that logs enough would block writing its log and stop
        answering. The last `STDERR_KEPT` bytes are kept in `server_stderr`."""
        await super().start_io(cmd, *args, **kwargs)
        server = self._server
        if server is not None and server.stderr is not None:
            self._async_tasks.append(asyncio.create_task(self._drain(server.stderr)))

    async def _drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(1 << 16):
            self.server_stderr += chunk
            del self.server_stderr[: -self.STDERR_KEPT]

    async def open_workspace(
        self, root: str | Path, settings: dict[str, Any] | None = None
    ) -> types.InitializeResult:
        """`initialize` with `root` as the one workspace folder and `settings` as the
        initialization options, then `initialized`."""
        uri = Path(root).resolve().as_uri()
        result = await self.initialize_async(
            types.InitializeParams(
                process_id=os.getpid(),
                root_uri=uri,
                workspace_folders=[types.WorkspaceFolder(uri=uri, name=Path(root).name)],
                capabilities=types.ClientCapabilities(),
                initialization_options=settings,
            )
        )
        self.initialized(types.InitializedParams())
        return result

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send a request (e.g. `readkeeper/read`) and return its result as plain JSON; an
        error answer raises `JsonRpcException`."""
        return await self.protocol.send_request_async(method, params or {})

    async def close(self) -> None:
        """Shut the server down, tell it to exit, and stop the client."""
        await self.shutdown_async(None)
        self.exit(None)
        await self.stop()  # type: ignore[no-untyped-call]


__all__ = ["JsonRpcException", "ReadkeeperClient", "raw_json_converter"]
