"""Helpers for the watcher's tests through the real server: a client that records change
notices and progress, and a handle on a watching server (`serving`). The Watchman
service a test starts for itself is in watchman_service.py, which the benchmarks share.
Whether a user namespace may lower the inotify limits here: `user_namespaces_work`.

Waiting is always a poll with a deadline. "Exactly one notice" is checked after a
sentinel: a later write to another read file, whose notice can only arrive once every
earlier event has been looked at.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import warm_server
from lsprotocol import types

from conftest import Session, start_session
from helpers import eventually
from readkeeper.client import ReadkeeperClient

DEADLINE_S = 15.0


class WatchClient(ReadkeeperClient):
    """Records readkeeper/didChangeReadFiles and work-done progress."""

    def __init__(self) -> None:
        super().__init__()
        self.notices = self.change_notices  # readkeeper/didChangeReadFiles, as sent
        self.progress: list[Any] = []

        @self.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def on_create(client: WatchClient, params: Any) -> None:
            return None

        @self.feature(types.PROGRESS)
        def on_progress(client: WatchClient, params: types.ProgressParams) -> None:
            client.progress.append(params.value)


async def until(condition: Callable[[], Any], what: str, timeout: float = DEADLINE_S) -> Any:
    """`helpers.eventually` with the watch tests' deadline."""
    return await eventually(condition, what, timeout)


class Watched:
    """A live server with its watcher: requests, and the notices it pushed."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.client = session.client
        assert isinstance(self.client, WatchClient)
        self.root = session.root
        self.exited = False

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """A request to the server, its result."""
        return await self.client.request(method, params or {})

    async def watcher(self) -> dict[str, Any]:
        """The watcher's block of readkeeper/stats."""
        return dict((await self.request("readkeeper/stats"))["watcher"])

    async def ready(self) -> dict[str, Any]:
        """Wait until the watcher's setup is over: its block of readkeeper/stats."""
        deadline = time.monotonic() + DEADLINE_S
        while True:
            watcher = await self.watcher()
            if watcher["state"] not in ("off", "starting"):
                return watcher
            assert time.monotonic() < deadline, f"the watcher did not start: {watcher}"
            await asyncio.sleep(0.01)

    async def read(self, path: str, session: str = "") -> None:
        """readkeeper/read `path` for `session`."""
        await self.request("readkeeper/read", {"file_path": path, "session": session})

    def pushed(self, path: str, session: str = "") -> list[dict[str, Any]]:
        """The changes to `path` pushed to `session` so far."""
        assert isinstance(self.client, WatchClient)
        full = str(self.root / path)
        return [
            change
            for notice in self.client.notices
            if notice["session"] == session
            for change in notice["changes"]
            if change["file_path"] == full
        ]

    async def notice(
        self, path: str, session: str = "", count: int = 1, timeout: float = DEADLINE_S
    ) -> list[dict[str, Any]]:
        """Wait for `count` notices of `path` to `session`: all of them so far."""
        found: list[dict[str, Any]] = await until(
            lambda: len(self.pushed(path, session)) >= count and self.pushed(path, session),
            f"{count} notice(s) for {path}",
            timeout,
        )
        return found

    async def sentinel(self, session: str = "") -> None:
        """Write a read file and wait for its notice: everything before is looked at."""
        path = self.root / "sentinel.txt"
        if not path.exists():
            path.write_text("0\n")
            await self.read("sentinel.txt", session)
        count = len(self.pushed("sentinel.txt", session))
        path.write_text(f"{count + 1}\n")
        await self.notice("sentinel.txt", session, count + 1)

    async def changes(self, session: str = "") -> list[dict[str, Any]]:
        """readkeeper/changes for `session`, the sentinel left out."""
        result = await self.request("readkeeper/changes", {"session": session})
        return [c for c in result["changes"] if not c["file_path"].endswith("sentinel.txt")]

    async def change(self, path: str, text: str, session: str = "") -> dict[str, Any]:
        """Read `path`, rewrite it with `text`, and return the one notice that brings."""
        await self.read(path, session)
        (self.root / path).write_text(text)
        [pushed] = await self.notice(path, session)
        return pushed

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """The server process stopped (SIGSTOP) for the block: what happens meanwhile, it
        learns once it runs again."""
        os.kill(self.pid, signal.SIGSTOP)
        try:
            yield
        finally:
            os.kill(self.pid, signal.SIGCONT)

    async def exit_after(self, *checks: tuple[Callable[[], Any], str]) -> None:
        """`shutdown`, then wait for each (condition, what) while the server has answered
        and not exited yet, then `exit`. A failed check kills the server: none is left
        running."""
        self.exited = True  # from here on, `serving` leaves the ending to this
        try:
            await self.client.shutdown_async(None)
            for condition, what in checks:
                await until(condition, what)
        except BaseException:
            server = self.client._server
            if server is not None and server.returncode is None:
                server.kill()
            await self.client.stop()  # type: ignore[no-untyped-call]
            raise
        self.client.exit(None)
        await self.client.stop()  # type: ignore[no-untyped-call]

    @property
    def pid(self) -> int:
        """The server process's id."""
        server = self.client._server
        assert server is not None
        return warm_server.real_pid(server.pid)


async def watched(
    root: Path,
    settings: dict[str, Any] | None = None,
    client: WatchClient | None = None,
    env: dict[str, str] | None = None,
) -> Watched:
    """A server started on `root` with these settings, not waited for."""
    session = await start_session(root, settings, env=env, client=client or WatchClient())
    return Watched(session)


@contextlib.asynccontextmanager
async def serving(
    root: Path,
    settings: dict[str, Any] | None = None,
    client: WatchClient | None = None,
    env: dict[str, str] | None = None,
) -> AsyncIterator[Watched]:
    """A watching server for the block (`watched`), shut down after it."""
    w = await watched(root, settings, client, env)
    try:
        yield w
    finally:
        if not w.exited:
            await w.client.close()


async def warned_once(w: Watched, word: str) -> str:
    """The warning mentioning `word` shown to the user: waited for, and still the only
    one once every earlier event has been looked at."""
    [shown] = await until(lambda: shown_warnings(w.client, word), f"the {word} warning shown")
    await w.sentinel()
    assert len(shown_warnings(w.client, word)) == 1
    return str(shown)


async def external_write_once(w: Watched, path: str) -> dict[str, Any]:
    """Read `path` ("x = 1"), write "x = 2" over it: its notice, checked to be the one
    modification with that diff."""
    make(w.root / path, "x = 1\n")
    pushed = await w.change(path, "x = 2\n")
    assert pushed["kind"] == "modified"
    assert "-x = 1" in pushed["diff"]
    assert "+x = 2" in pushed["diff"]
    await w.sentinel()
    assert len(w.pushed(path)) == 1
    return pushed


def make(path: Path, text: str) -> Path:
    """Write `text` to `path`, making its folders first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def save_like_a_formatter(path: Path, first: str, then: str, final: str) -> None:
    """What a formatter and an editor do on save: truncate and write `first`, append
    `then`, then replace the file with `final` atomically, through a temporary file."""
    with open(path, "w") as f:
        f.write(first)
    with open(path, "a") as f:
        f.write(then)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(final)
    os.replace(tmp, path)


def shown_warnings(client: ReadkeeperClient, word: str) -> list[str]:
    """Warnings mentioning `word` as the user sees them: window/showMessage, not only the
    log."""
    return [
        m.message
        for m in client.shown_messages
        if word in m.message and m.type == types.MessageType.Warning
    ]


def os_thread_names(pid: int) -> list[str]:
    """The OS-level names of process `pid`'s threads."""
    names = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            names.append(Path(f"/proc/{pid}/task/{task}/comm").read_text().strip())
        except OSError:
            continue
    return names


def watchman_missing() -> str | None:
    """Why the tests against a real Watchman cannot run here, or None."""
    if shutil.which("watchman") is None:
        return "needs the `watchman` service (apt-get install watchman)"
    if importlib.util.find_spec("pywatchman") is None:
        return "needs pywatchman (.venv/bin/pip install -e '.[test]')"
    return None


@functools.cache
def user_namespaces_work() -> bool:
    """Whether `unshare -Ur` may lower an inotify limit here (asked once per process,
    when a test first needs it, never at import)."""
    if not sys.platform.startswith("linux") or shutil.which("unshare") is None:
        return False
    probe = "echo 1 > /proc/sys/user/max_inotify_watches"
    try:
        done = subprocess.run(
            ["unshare", "-Ur", "sh", "-c", probe], capture_output=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def max_queued_events() -> int:
    """The kernel's inotify queue length (events kept for a reader), 0 if unreadable."""
    try:
        return int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    except (OSError, ValueError):
        return 0


# Overflow tests fill the queue: they need to know its length, and one not so long that
# filling it takes long.
needs_a_default_sized_queue = pytest.mark.skipif(
    not 0 < max_queued_events() <= 65_536, reason="needs a readable, default-sized inotify queue"
)
