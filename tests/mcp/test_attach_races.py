"""An attached agent held to WS/sub stays there under a race: the connection's check of a
path and the core's open of it are two steps, and a link inside sub swapped between
them must not lead the open to WS/secret.env (inside the editor's root, outside sub).

The swap is made to happen between the two on every try, not left to scheduling: the
listener's `before_call` hook runs after the scope has checked the request and before
the core opens anything, and it has a swapper thread exchange sub/f.txt (a regular
file when checked) with a symlink to WS/secret.env, waiting until it is done. Each try
then provably meets the link where the check saw the file; the secret must never come
back and never change, and every refusal must be a readkeeper one (`data.kind`). The
connection's session has read the secret (the core is called in its name): what would
let an edit or a write of it through, were it reached.
"""

from __future__ import annotations

import ctypes
import os
import queue
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_attach_scope import Raw, principal

from mcp_helpers import private_runtime_dir
from readkeeper import calls
from readkeeper.attach.listener import Listener
from readkeeper.core import Readkeeper
from readkeeper.state.sessions import scoped

TRIES = 60
SECRET = "TOKEN=hunter2\n"
INSIDE = "TOKEN=inside\n"
SESSION = "shared"
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    rename = libc.renameat2
    rename.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if rename(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) != 0:
        raise OSError(ctypes.get_errno(), "renameat2 RENAME_EXCHANGE failed")


class Swapper:
    """A thread that exchanges `name` (a regular file) with `link` (a symlink to the
    secret) when asked; `armed` makes the listener's hook ask on every call."""

    def __init__(self, name: Path, link: Path) -> None:
        self.name, self.link = name, link
        self.armed = False
        self.between = 0  # calls where the swap happened after the check, before the open
        self._asked: queue.Queue[threading.Event | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (done := self._asked.get()) is not None:
            _exchange(self.name, self.link)
            done.set()

    def hook(self, method: str) -> None:
        """The listener's `before_call`: the scope has checked the request's paths."""
        if not self.armed or not self.name.is_file() or self.name.is_symlink():
            return
        done = threading.Event()
        self._asked.put(done)
        done.wait()
        assert self.name.is_symlink()
        self.between += 1

    def restore(self) -> None:
        """sub/f.txt the regular file again, for the next check to pass."""
        if self.name.is_symlink():
            done = threading.Event()
            self._asked.put(done)
            done.wait()

    def stop(self) -> None:
        self._asked.put(None)
        self._thread.join()


@pytest.fixture
def raced(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Raw, Swapper, Path]]:
    (workspace / "secret.env").write_text(SECRET)
    sub = workspace / "sub"
    sub.mkdir()
    name = sub / "f.txt"
    name.write_text(INSIDE)
    link = sub / ".f.link"
    link.symlink_to(workspace / "secret.env")
    swapper = Swapper(name, link)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(private_runtime_dir()))
    listener = Listener(core, before_call=swapper.hook)
    assert listener.start([str(workspace)])
    raw = Raw(listener.socket_path)
    hello = raw.ask("hello", roots=[str(sub)])
    assert hello["result"]["roots"] == [str(sub)]
    # The connection's session holds the secret (no door of another principal reaches
    # it: the core is called in its name).
    raw.key = scoped(principal(hello), SESSION)
    secret = {"file_path": str(workspace / "secret.env"), "session": SESSION}
    assert "hunter2" in str(calls.call(core, "read", secret, principal(hello)))
    try:
        yield raw, swapper, workspace
    finally:
        listener.close()
        swapper.stop()


def _race(raw: Raw, swapper: Swapper, workspace: Path, method: str, **params: Any) -> None:
    escapes: list[str] = []
    before = swapper.between
    for i in range(TRIES):
        swapper.restore()
        read = raw.ask("read", file_path="f.txt", force=True, session=SESSION)
        assert read["result"]["type"] == "text"
        swapper.armed = True
        try:
            answer = raw.ask(method, session=SESSION, **params)
        finally:
            swapper.armed = False
        if "hunter2" in str(answer):
            escapes.append(f"{method} {i}: the answer carries the secret")
        if "error" in answer:
            assert answer["error"]["data"].get("kind"), answer
        if (workspace / "secret.env").read_text() != SECRET:
            escapes.append(f"{method} {i}: the secret changed")
            (workspace / "secret.env").write_text(SECRET)
    assert escapes == []
    # Every try met the link where the check saw the file.
    assert swapper.between - before == TRIES


def test_an_attached_read_never_follows_a_link_swapped_in_after_the_check(
    raced: tuple[Raw, Swapper, Path],
) -> None:
    _race(*raced, "read", file_path="f.txt", force=True)


def test_an_attached_edit_never_changes_a_file_swapped_in_after_the_check(
    raced: tuple[Raw, Swapper, Path],
) -> None:
    _race(*raced, "edit", file_path="f.txt", old_string="TOKEN=", new_string="CHANGED=")


def test_an_attached_write_never_replaces_a_file_swapped_in_after_the_check(
    raced: tuple[Raw, Swapper, Path],
) -> None:
    _race(*raced, "write", file_path="f.txt", content="OVERWRITTEN\n")


def test_attachments_never_carry_a_file_swapped_in_after_the_check(
    raced: tuple[Raw, Swapper, Path],
) -> None:
    # Mentioned files and the active editor's are read on the attachment threads.
    _race(*raced, "attachments", mentions=["f.txt"], types=["file"])
    _race(*raced, "attachments", active_editor={"file_path": "f.txt"}, types=["selection"])


def test_an_attached_forget_never_drops_a_file_swapped_in_after_the_check(
    raced: tuple[Raw, Swapper, Path], core: Readkeeper
) -> None:
    # The session read the secret: forgetting sub/f.txt,
    # swapped for a link to it after the check, must leave that read-state alone.
    raw, swapper, workspace = raced
    secret = str(workspace / "secret.env")
    for _ in range(TRIES):
        swapper.restore()
        swapper.armed = True
        try:
            answer = raw.ask("forget", paths=["f.txt"], session=SESSION)
        finally:
            swapper.armed = False
        assert "result" in answer, answer
        assert core.read_states.get(raw.key, secret) is not None
    assert swapper.between == TRIES
