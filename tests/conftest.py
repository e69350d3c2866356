"""Shared fixtures: a throwaway workspace, and the real server speaking LSP over stdio.

Helpers that are not fixtures live in tests/helpers.py; the hooks that make a skip of
an editor, inotify-fallback or Neovim test fail in CI in tests/ci_skips.py.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import pytest
import pytest_asyncio
import warm_server
from lsprotocol import types
from pytest_lsp import client_capabilities

# Hooks, found here by their names.
from ci_skips import pytest_configure, pytest_runtest_makereport  # noqa: F401
from readkeeper.client import JsonRpcException, ReadkeeperClient
from readkeeper.core import Readkeeper

if TYPE_CHECKING:
    from readkeeper.attach.listener import Listener


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root.resolve()


@pytest.fixture(autouse=True)
def _no_env_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings from the developer's environment must not leak into tests."""
    for name in list(os.environ):
        if name.startswith("READKEEPER_"):
            monkeypatch.delenv(name)


@pytest.fixture(autouse=True)
def _private_state(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The journals of temporary files (files/pending.py) and the cache (files/user_cache.py)
    go to folders of this test run's, not the developer's ~/.local/state and ~/.cache;
    servers started as processes inherit them."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.getbasetemp() / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.fixture
def tiktoken_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    """tiktoken counts rather than rs-bpe (read/bpe_count.py), in this process and the
    servers it starts: for the tests of tiktoken's own path (its table's cache, its
    index), which a table rs-bpe counts never takes."""
    monkeypatch.setenv("READKEEPER_TOKEN_COUNTER", "tiktoken")


class LinkedCache(NamedTuple):
    link: Path  # the environment's cache folder, a symlink to `elsewhere`
    elsewhere: Path  # a private folder the cache must never write in


@pytest.fixture
def symlinked_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LinkedCache:
    """The environment's cache folder (XDG_CACHE_HOME/readkeeper) made a symlink to a
    private folder elsewhere: a cache that followed it would write there."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    home = tmp_path / "cache-home"
    home.mkdir()
    link = home / "readkeeper"
    link.symlink_to(elsewhere)
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return LinkedCache(link, elsewhere)


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private XDG_RUNTIME_DIR of the test's own, where attach sockets are published."""
    from mcp_helpers import private_runtime_dir  # the MCP SDK, only for tests that attach

    folder = private_runtime_dir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    return folder


@pytest.fixture
def listener(runtime: Path, core: Readkeeper, workspace: Path) -> Iterator[Listener]:
    """The attach socket of a real core serving `workspace`, published in `runtime`."""
    from readkeeper.attach.listener import Listener

    served = Listener(core)
    assert served.start([str(workspace)])
    yield served
    served.close()


@pytest.fixture
def core(workspace: Path) -> Iterator[Readkeeper]:
    """A core whose token table is loaded, so every text read's `tokens` is the exact
    count (before the load, small reads answer an upper bound: test_token_bounds.py).
    Closed after the test, so a watcher a test started leaves no thread to the next."""
    core = Readkeeper(roots=[str(workspace)])
    core.tokens.warm_up()
    yield core
    core.close()


class Session:
    """A test-side handle on a live server: requests, and the errors they raise."""

    def __init__(self, client: ReadkeeperClient, root: Path) -> None:
        self.client = client
        self.root = root

    async def read(self, file_path: str | Path, **params: Any) -> Any:
        return await self.client.request("readkeeper/read", {"file_path": str(file_path), **params})

    async def error(self, method: str, params: dict[str, Any]) -> JsonRpcException:
        with pytest.raises(JsonRpcException) as caught:
            await self.client.request(method, params)
        return caught.value

    async def read_error(self, file_path: str | Path, **params: Any) -> JsonRpcException:
        return await self.error("readkeeper/read", {"file_path": str(file_path), **params})

    def open_document(self, path: Path, text: str, version: int = 1) -> str:
        uri = path.as_uri()
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="plaintext", version=version, text=text
                )
            )
        )
        return uri


async def start_session(
    root: Path,
    settings: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    editor: str = "visual-studio-code",
    client: ReadkeeperClient | None = None,
    real: bool = False,
) -> Session:
    client = client or ReadkeeperClient()
    if real or type(client).start_server is not ReadkeeperClient.start_server:
        # `python -m readkeeper serve` (its pid its own), or a client's own way of
        # starting it (in a namespace of lowered limits: test_lsp_watch.py).
        await client.start_server(env=env)
    else:  # forked from a warm parent (tests/warm_server.py): started in milliseconds
        await client.start_io(*warm_server.command("serve"), env={**os.environ, **(env or {})})
    uri = root.as_uri()
    await client.initialize_async(
        types.InitializeParams(
            process_id=os.getpid(),
            root_uri=uri,
            workspace_folders=[types.WorkspaceFolder(uri=uri, name=root.name)],
            # A real editor's capabilities, as pytest-lsp recorded them.
            capabilities=client_capabilities(editor),
            initialization_options=settings,
        )
    )
    client.initialized(types.InitializedParams())
    return Session(client, root)


@pytest_asyncio.fixture
async def lsp(workspace: Path) -> AsyncIterator[Session]:
    session = await start_session(workspace)
    yield session
    await session.client.close()
