"""A Watchman that accepts connections and never answers, as a hung service does, ends
as the watcher's fallback with a reason (fix27b, attack round 27 A15): a real server,
real pywatchman, and a real Unix socket no one answers on.

Every wait on Watchman was bounded only by pywatchman's per-read timeout of 300 s: after
90 s `stats` still said `"state": "starting", "backend": "watchman"` with no reason, and
with `auto` the backend was still being chosen (null)."""

from __future__ import annotations

import contextlib
import shutil
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_watchman_broken_library import Server

from helpers import wait_until
from mcp_helpers import mcp_env, private_runtime_dir

pytest.importorskip("pywatchman")  # the readkeeper[watchman] extra


@contextlib.contextmanager
def silent_socket() -> Iterator[str]:
    """A Unix socket that accepts every connection and never writes a byte."""
    # A short path: a Unix socket's path may not be longer than 107 bytes.
    folder = tempfile.mkdtemp(prefix="rk-silent-")
    path = f"{folder}/sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(50)
    held: list[socket.socket] = []
    stopping = threading.Event()

    def accept() -> None:
        while not stopping.is_set():
            with contextlib.suppress(OSError):
                held.append(listener.accept()[0])  # kept open, never answered

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield path
    finally:
        stopping.set()
        listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        thread.join(10)
        for connection in held:
            connection.close()
        shutil.rmtree(folder, ignore_errors=True)


# The `watcher` setting, and the reason `stats` gives: asked for, Watchman is left with
# why; under `auto` it is never chosen (it does not watch the workspace), so inotify
# watches with nothing to explain.
CASES = {"watchman": "Watchman did not answer within 10 s", "auto": None}


@pytest.mark.parametrize(("setting", "reason"), CASES.items(), ids=list(CASES))
def test_a_watchman_that_never_answers_falls_back_to_inotify(
    workspace: Path, tmp_path: Path, setting: str, reason: str | None
) -> None:
    with silent_socket() as sock:
        env = mcp_env(private_runtime_dir(), READKEEPER_WATCHER=setting, WATCHMAN_SOCK=sock)
        log = tmp_path / "server.log"
        server = Server(workspace, env, log)
        try:
            watcher = wait_until(
                lambda: (w := server.watcher())["state"] != "starting" and w,
                "the watcher to be set up",
                timeout=60,
            )
        finally:
            server.close()
    assert (watcher["backend"], watcher["state"]) == ("inotify", "watching"), watcher
    assert watcher["fallback_reason"] == reason, watcher
    if reason is not None:
        said = log.read_text(errors="replace")
        assert f"readkeeper: {reason} while watching {workspace}" in said, said
        assert "It watches the workspace with inotify instead" in said, said
