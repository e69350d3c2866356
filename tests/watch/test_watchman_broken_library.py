"""A pywatchman that fails in ways it does not document ends as the watcher's fallback,
said in one line (fix26c, A09): a real server, with a broken pywatchman first on its
PYTHONPATH (a library as a user may have installed it, not a mock of readkeeper).

It raised from `client()` (a WatchmanError, outside the guarded query), or another type
than its own from `query`, and the log got "setting up the watcher failed" with a raw
traceback (its last lines the library's words: line breaks, terminal escapes, object
addresses), while `stats` said `backend: watchman`, `fallback_reason: null`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from helpers import wait_until
from mcp_helpers import READKEEPER, hello, mcp_env, message, private_runtime_dir

# The library's words: a line break, a call readkeeper's words might name, a terminal
# escape and an object's address.
WORDS = (
    'boom\nsecond line: readkeeper/write {"file_path": "x"}\n'
    "\x1b[31mred\x1b[0m <Obj at 0x7f00deadbeef>"
)

FAKE = f"""
import os
MSG = {WORDS!r}
WHERE = os.environ["FAKE_WATCHMAN_FAILS"]
if WHERE == "import":
    raise RuntimeError(MSG)
class WatchmanError(Exception): pass
class CommandError(WatchmanError): pass
class client:
    def __init__(self, *a, **k):
        if WHERE == "client":
            raise WatchmanError(MSG)
    def query(self, command, *args):
        if WHERE == "query":
            raise RuntimeError(MSG)
        if command == "watch-project":
            return {{"watch": args[0]}} if WHERE != "answer" else {{"warning": MSG}}
        if command == "clock":
            return {{"clock": "c:1:2:3:4"}}
        return {{}}
    def receive(self):
        raise RuntimeError(MSG)
    def setTimeout(self, value): pass
    def close(self): pass
"""


class Server:
    """`readkeeper mcp` over raw stdio, its log (stderr) in a file."""

    def __init__(self, workspace: Path, env: dict[str, str], log: Path) -> None:
        self._log = log.open("wb")
        self.process = subprocess.Popen(
            [*READKEEPER, "mcp", "--standalone", "--root", str(workspace)],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
        )
        self._id = 0
        self._send(hello())
        assert self._answer(0)["result"]

    def _send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def _answer(self, wanted: int) -> dict[str, Any]:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            answer: dict[str, Any] = json.loads(line)
            if answer.get("id") == wanted:
                return answer
        raise AssertionError("the server ended")

    def watcher(self) -> dict[str, Any]:
        self._id += 1
        call = {"name": "stats", "arguments": {}}
        self._send(message(self._id, "tools/call", call) + b"\n")
        structured: dict[str, Any] = self._answer(self._id)["result"]["structuredContent"]
        return dict(structured["watcher"])

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(30)
        self._log.close()


# Where the fake fails, and how the reason starts (the library's words after it, one
# JSON string: errors.with_library_words, errors.fault_reason).
CASES = {
    "import": 'could not use Watchman: importing pywatchman: RuntimeError: "boom\\n',
    "client": 'could not reach Watchman ("boom\\n',
    "query": 'could not reach Watchman: pywatchman failed: RuntimeError: "boom\\n',
    "answer": "could not use Watchman's answer: KeyError: ",
    "receive": 'could not stay connected to Watchman: pywatchman failed: RuntimeError: "boom',
}


@pytest.mark.parametrize(("fails", "reason"), CASES.items(), ids=list(CASES))
def test_a_broken_pywatchman_falls_back_with_one_line(
    workspace: Path, tmp_path: Path, fails: str, reason: str
) -> None:
    library = tmp_path / "library"
    (library / "pywatchman").mkdir(parents=True)
    (library / "pywatchman" / "__init__.py").write_text(FAKE)
    env = mcp_env(
        private_runtime_dir(),
        PYTHONPATH=str(library),
        READKEEPER_WATCHER="watchman",
        WATCHMAN_SOCK=str(tmp_path / "no-such-socket"),  # never asked: the fake answers
        FAKE_WATCHMAN_FAILS=fails,
    )
    log = tmp_path / "server.log"
    server = Server(workspace, env, log)
    try:
        watcher = wait_until(
            lambda: (
                (w := server.watcher())["backend"] != "watchman" and w["state"] != "starting" and w
            ),
            "the watcher to leave Watchman",
        )
    finally:
        server.close()
    # The documented fallback (Watchman, then inotify), and why, in one line.
    assert (watcher["backend"], watcher["state"]) == ("inotify", "watching"), watcher
    said_why = watcher["fallback_reason"]
    assert said_why.startswith(reason), said_why
    for raw in ("\n", "\x1b", "0x7f00deadbeef", "<Obj"):
        assert raw not in said_why, said_why
    said = log.read_text(errors="replace")
    assert "Traceback" not in said, said
    assert "\x1b" not in said, said
    assert "0x7f00deadbeef" not in said, said
    assert "the watcher could not start" not in said, said
    assert "It watches the workspace with inotify instead" in said, said


def test_a_missing_pywatchman_is_said_in_words_not_as_a_shell_command(
    workspace: Path, tmp_path: Path
) -> None:
    # An agent reads `stats`: what the user installs is said in words (attack round 27
    # A14); the import fails as it does when pywatchman is not installed.
    library = tmp_path / "library"
    (library / "pywatchman").mkdir(parents=True)
    (library / "pywatchman" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'pywatchman'\", name='pywatchman')\n"
    )
    env = mcp_env(
        private_runtime_dir(),
        PYTHONPATH=str(library),
        READKEEPER_WATCHER="watchman",
        WATCHMAN_SOCK=str(tmp_path / "no-such-socket"),
    )
    server = Server(workspace, env, tmp_path / "server.log")
    try:
        watcher = wait_until(
            lambda: (w := server.watcher())["state"] != "starting" and w,
            "the watcher to leave Watchman",
        )
    finally:
        server.close()
    assert (watcher["backend"], watcher["state"]) == ("inotify", "watching"), watcher
    assert watcher["fallback_reason"] == (
        "could not use Watchman: pywatchman is not installed "
        "(it comes with the readkeeper[watchman] extra)"
    ), watcher
