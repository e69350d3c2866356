"""Helpers for the watcher's tests through the real server: a client that records change
notices and progress, a handle on a watching server, and a Watchman service of a test's
own.

Waiting is always a poll with a deadline. "Exactly one notice" is checked after a
sentinel: a later write to another read file, whose notice can only arrive once every
earlier event has been looked at.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types

from conftest import Session, start_session
from helpers import eventually, wait_until
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

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return await self.client.request(method, params or {})

    async def watcher(self) -> dict[str, Any]:
        """The watcher's block of readkeeper/stats."""
        return dict((await self.request("readkeeper/stats"))["watcher"])

    async def ready(self) -> dict[str, Any]:
        deadline = time.monotonic() + DEADLINE_S
        while True:
            watcher = await self.watcher()
            if watcher["state"] not in ("off", "starting"):
                return watcher
            assert time.monotonic() < deadline, f"the watcher did not start: {watcher}"
            await asyncio.sleep(0.01)

    async def read(self, path: str, session: str = "") -> None:
        await self.request("readkeeper/read", {"file_path": path, "session": session})

    def pushed(self, path: str, session: str = "") -> list[dict[str, Any]]:
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
        found: list[dict[str, Any]] = await until(
            lambda: len(self.pushed(path, session)) >= count and self.pushed(path, session),
            f"{count} notice(s) for {path}",
            timeout,
        )
        return found

    async def sentinel(self, session: str = "") -> None:
        path = self.root / "sentinel.txt"
        if not path.exists():
            path.write_text("0\n")
            await self.read("sentinel.txt", session)
        count = len(self.pushed("sentinel.txt", session))
        path.write_text(f"{count + 1}\n")
        await self.notice("sentinel.txt", session, count + 1)

    async def changes(self, session: str = "") -> list[dict[str, Any]]:
        result = await self.request("readkeeper/changes", {"session": session})
        return [c for c in result["changes"] if not c["file_path"].endswith("sentinel.txt")]

    def pause(self) -> None:
        """Stop the server process (SIGSTOP): what happens meanwhile, it learns after
        `resume`."""
        os.kill(self.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.pid, signal.SIGCONT)

    @property
    def pid(self) -> int:
        server = self.client._server
        assert server is not None
        return server.pid


async def watched(
    root: Path,
    settings: dict[str, Any] | None = None,
    client: WatchClient | None = None,
    env: dict[str, str] | None = None,
) -> Watched:
    session = await start_session(root, settings, env=env, client=client or WatchClient())
    return Watched(session)


def make(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def shown_warnings(client: ReadkeeperClient, word: str) -> list[str]:
    """Warnings mentioning `word` as the user sees them: window/showMessage, not only the
    log."""
    return [
        m.message
        for m in client.shown_messages
        if word in m.message and m.type == types.MessageType.Warning
    ]


def os_thread_names(pid: int) -> list[str]:
    names = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            names.append(Path(f"/proc/{pid}/task/{task}/comm").read_text().strip())
        except OSError:
            continue
    return names


# --- a Watchman service of the test's own ---------------------------------------------------


def watchman_missing() -> str | None:
    """Why the tests against a real Watchman cannot run here, or None."""
    if shutil.which("watchman") is None:
        return "needs the `watchman` service (apt-get install watchman)"
    if importlib.util.find_spec("pywatchman") is None:
        return "needs pywatchman (.venv/bin/pip install -e '.[test]')"
    return None


class PrivateWatchman:
    """A Watchman service started for one test, its socket, state and log in a fresh
    folder of its own: the machine's Watchman (other tools' watches) is never asked,
    killed or given a watch. The server under test finds it through `env`
    (WATCHMAN_SOCK)."""

    def __init__(self) -> None:
        # A short path: a Unix socket's path may not be longer than 107 bytes.
        self.folder = Path(tempfile.mkdtemp(prefix="rk-wm-"))
        self.sock = str(self.folder / "sock")
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def env(self) -> dict[str, str]:
        return {"WATCHMAN_SOCK": self.sock}

    def start(self) -> PrivateWatchman:
        self._process = subprocess.Popen(
            [
                "watchman",
                "--foreground",
                "--no-save-state",
                f"--sockname={self.sock}",
                f"--statefile={self.folder / 'state'}",
                f"--logfile={self.folder / 'log'}",
                f"--pidfile={self.folder / 'pid'}",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until(lambda: self._answers(), "the private Watchman service to answer")
        return self

    def _answers(self) -> bool:
        assert self._process is not None
        if self._process.poll() is not None:
            raise AssertionError(f"watchman exited: {(self.folder / 'log').read_text()[-2000:]}")
        return self._run("get-pid").returncode == 0

    def command(self, *args: str) -> dict[str, Any]:
        """A command of the `watchman` CLI against this service, its JSON answer."""
        done = self._run(*args)
        assert done.returncode == 0, done.stderr or done.stdout
        answer: dict[str, Any] = json.loads(done.stdout)
        return answer

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["watchman", "-U", self.sock, "--no-spawn", "--no-local", "--no-pretty", *args],
            capture_output=True,
            text=True,
            timeout=60,
        )

    def watches(self) -> list[str]:
        return list(self.command("watch-list")["roots"])

    def kill(self) -> None:
        """SIGKILL the service (it gets no chance to say goodbye to its clients)."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait(timeout=30)

    def close(self) -> None:
        self.kill()
        with contextlib.suppress(OSError):
            shutil.rmtree(self.folder)
