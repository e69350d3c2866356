"""A refusal of a change names a next call that works for that path (DESIGN.md: "the
next call that will work"): a FIFO, socket or device is `unsupported` for every change
before the read-state is asked, since a read of it is refused too; and a file no read
would license a change of (binary) gets that refusal at once. Never `not_read` with a
read that leads nowhere (attack round 10, A27)."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError


@pytest.fixture
def core(workspace: Path) -> Readkeeper:
    return Readkeeper(roots=[str(workspace)])


def changes(path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every call that changes a file, naming `path`."""
    yield "write", {"file_path": path, "content": "x\n"}
    yield "edit", {"file_path": path, "old_string": "a", "new_string": "b"}
    yield "edit", {"file_path": path, "edits": [{"old_string": "a", "new_string": "b"}]}
    yield "edit", {"files": [{"file_path": path, "old_string": "a", "new_string": "b"}]}
    yield "edit", {"file_path": path, "cell_id": "cell-0", "new_source": "x"}
    yield "patch", {"file_path": path, "edits": [{"old_string": "a", "new_string": "b"}]}


def refusal(core: Readkeeper, method: str, raw: dict[str, Any]) -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as caught:
        calls.call(core, method, raw)
    return caught.value


def test_a_fifo_or_socket_is_unsupported_for_every_change_before_the_read_state(
    core: Readkeeper, workspace: Path
) -> None:
    os.mkfifo(workspace / "pipe.md")
    os.mkfifo(workspace / "pipe.ipynb")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(workspace / "sock.txt"))
        for name in ("pipe.md", "pipe.ipynb", "sock.txt"):
            assert refusal(core, "read", {"file_path": name}).kind == "unsupported"
            for method, raw in changes(str(workspace / name)):
                error = refusal(core, method, raw)
                assert error.kind == "unsupported", (name, raw, error.message)
                assert "readkeeper/read" not in error.message  # no read to go after
                assert "not a regular file" in error.message


def test_a_binary_file_is_refused_as_binary_not_sent_after_a_read(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "blob.txt").write_bytes(bytes(range(256)) * 4)
    assert refusal(core, "read", {"file_path": "blob.txt"}).kind == "binary"
    for method, raw in changes(str(workspace / "blob.txt")):
        if "cell_id" in raw:
            continue  # a notebook edit of a file not named .ipynb: its own refusal
        error = refusal(core, method, raw)
        assert error.kind == "binary", (raw, error.message)
        assert "readkeeper/read" not in error.message


def test_a_text_file_not_read_is_still_sent_after_its_read(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a\n")
    for method, raw in changes(str(workspace / "a.txt")):
        if "cell_id" in raw:
            continue
        error = refusal(core, method, raw)
        assert error.kind == "not_read", (raw, error.message)
        assert f'readkeeper/read {{"file_path": "{workspace / "a.txt"}"}}' in error.message
    calls.call(core, "read", {"file_path": "a.txt"})
    done = calls.call(core, "edit", {"file_path": "a.txt", "old_string": "a", "new_string": "b"})
    assert done["replacements"] == 1
    assert (workspace / "a.txt").read_text() == "b\n"


def test_listing_a_file_names_a_call_that_works_for_any_file(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "blob.bin").write_bytes(bytes(range(256)) * 4)  # a read is refused
    for method, raw in (
        ("list", {"path": "blob.bin"}),
        ("glob", {"pattern": "*", "path": "blob.bin"}),
    ):
        error = refusal(core, method, raw)
        assert error.kind == "bad_params"
        assert "readkeeper/read" not in error.message
        assert f'readkeeper/stat {{"path": "{workspace / "blob.bin"}"}}' in error.message
    assert calls.call(core, "stat", {"path": "blob.bin"})["kind"] == "file"
