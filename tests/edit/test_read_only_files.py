"""A file whose mode lets no one write it (0444) is never changed, whichever user
readkeeper runs as: root would pass the permission check, so the mode itself is the
rule (commit.hold_for_change), and the refusal says the file is marked read-only and
what to do next, as root and as another user alike."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from helpers import NOBODY, run_as_nobody
from mcp_helpers import dropin_client, error_kind, ok, text_of
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError


def refused(core: Readkeeper, name: str, **params: Any) -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as caught:
        calls.call(core, name, params)
    return caught.value


def test_a_read_only_file_is_neither_edited_nor_written(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "locked.txt"
    path.write_text("one\n")
    path.chmod(0o444)
    calls.call(core, "read", {"file_path": str(path)})
    for name, params in (
        ("edit", {"old_string": "one", "new_string": "two"}),
        ("edit", {"edits": [{"old_string": "one", "new_string": "two"}]}),
        ("write", {"content": "two\n"}),
        ("patch", {"edits": [{"old_string": "one", "new_string": "two"}]}),
    ):
        error = refused(core, name, file_path=str(path), **params)
        assert error.kind == "unsupported", (name, error.message)
        assert "is marked read-only (mode 0444" in error.message
        assert "they give its owner leave to write it" in error.message
        assert "chmod" not in error.message  # words for the user, never a shell command
    assert path.read_text() == "one\n"
    assert path.stat().st_mode & 0o7777 == 0o444
    path.chmod(0o644)  # the user's answer: now it may change
    calls.call(core, "edit", {"file_path": str(path), "old_string": "one", "new_string": "two"})
    assert path.read_text() == "two\n"


def test_another_user_gets_the_same_words() -> None:
    base = Path(tempfile.mkdtemp(prefix="rk-readonly-"))
    try:
        base.chmod(0o755)
        (base / "ws").mkdir()
        path = base / "ws" / "a.txt"
        path.write_text("one\n")
        path.chmod(0o444)
        if os.geteuid() == 0:
            for owned in (base / "ws", path):
                os.chown(owned, NOBODY, NOBODY)
        core = Readkeeper(roots=[str(base / "ws")])
        core.tokens.warm_up()

        def client() -> bytes:
            calls.call(core, "read", {"file_path": str(path)})
            try:
                calls.call(core, "write", {"file_path": str(path), "content": "two\n"})
            except ReadkeeperError as exc:
                return f"{exc.kind}\n{exc.message}".encode()
            return b"written"

        answer = (run_as_nobody(client) if os.geteuid() == 0 else client()).decode()
        core.close()
        kind, message = answer.split("\n", 1)
        assert kind == "unsupported", answer
        assert "is marked read-only (mode 0444" in message
        assert path.read_text() == "one\n"
    finally:
        shutil.rmtree(base)


async def test_the_dropin_refuses_a_read_only_file(workspace: Path) -> None:
    path = workspace / "ro.txt"
    path.write_text("one\n")
    path.chmod(0o444)
    async with dropin_client(workspace) as client:
        await ok(client, "read_text_file", path="ro.txt")
        result = await client.call_tool("write_file", {"path": "ro.txt", "content": "two\n"})
        assert error_kind(result) == "unsupported"
        assert "marked read-only" in text_of(result)
    assert path.read_text() == "one\n"
