"""A Watchman service of one test's or one benchmark's own.

Its socket, state and log live in a fresh folder of its own, so the machine's Watchman
(other tools' watches) is never asked, killed or given a watch; a server under test
finds it through `env` (WATCHMAN_SOCK). Standard library only, so that the benchmarks
(bench/bench_monorepo.py) start their service with the same code as the tests
(tests/watch_helpers.py).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any

START_TIMEOUT_S = 30.0


class PrivateWatchman:
    """A Watchman service started for one test or benchmark, stopped by `close` (or at
    the end of a `with` block)."""

    def __init__(self) -> None:
        # A short path: a Unix socket's path may not be longer than 107 bytes.
        self.folder = Path(tempfile.mkdtemp(prefix="rk-wm-"))
        self.sock = str(self.folder / "sock")
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def env(self) -> dict[str, str]:
        """The environment that points a server at this service."""
        return {"WATCHMAN_SOCK": self.sock}

    @property
    def pid(self) -> int:
        """The service's process id."""
        assert self._process is not None, "not started"
        return self._process.pid

    def start(self) -> PrivateWatchman:
        """Start the service, and wait until it answers."""
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
        try:
            self._wait_for_answer(self._process)
        except BaseException:
            self.close()
            raise
        return self

    def _wait_for_answer(self, process: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while self._run(["get-pid"], timeout=60).returncode != 0:
            if process.poll() is not None or time.monotonic() > deadline:
                try:
                    log = (self.folder / "log").read_text(errors="replace")[-2000:]
                except OSError as exc:
                    log = f"(no log: {exc})"
                raise RuntimeError(f"the private Watchman service did not start: {log}")
            time.sleep(0.05)

    def command(self, *command: Any, timeout: float = 60) -> dict[str, Any]:
        """One command to the service (as JSON, e.g. "watch-project", root), its answer."""
        done = self._run(list(command), timeout)
        if done.returncode != 0:
            raise RuntimeError(f"watchman {command[0]} failed: {done.stderr or done.stdout}")
        answer: dict[str, Any] = json.loads(done.stdout)
        return answer

    def _run(self, command: list[Any], timeout: float) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["watchman", "-U", self.sock, "--no-spawn", "--no-local", "--no-pretty", "-j"],
            input=json.dumps(command),
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def watches(self) -> list[str]:
        """The roots the service watches."""
        return list(self.command("watch-list")["roots"])

    def kill(self) -> None:
        """SIGKILL the service (it gets no chance to say goodbye to its clients)."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait(timeout=30)

    def close(self) -> None:
        """Kill the service and remove its folder."""
        self.kill()
        with contextlib.suppress(OSError):
            shutil.rmtree(self.folder)

    def __enter__(self) -> PrivateWatchman:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
