"""One cap on an incoming message's size (message_cap.py), on MCP's stdio as on the
other front ends (attack round 8, finding 12(e): a 150 MB `write` was taken whole and
the server grew to 430 MB). A line over the cap is answered `too_large` under its own
id, never read whole, and the server serves the next line; a write at the cap keeps the
server's peak memory under a generous bound."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import IO, Any

from peak_rss import vm_peak_mb

from mcp_helpers import READKEEPER, hello, mcp_env, message, private_runtime_dir
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.lsp.framing import MAX_BODY
from readkeeper.mcp.line_cap import Lines
from readkeeper.message_cap import MAX_MESSAGE_BYTES
from readkeeper.protocol import WriteParams

# The interpreter and the core (some 120 MB), a message at the cap, its parsed text and
# the file's bytes, with slack: far under the 430 MB the 150 MB write took before.
PEAK_CAP_MB = 700


def write_call(msg_id: int, name: str, size: int) -> bytes:
    # The id before the params, as the SDK writes it; the content's text is padding.
    arguments = {"file_path": name, "content": "x" * size}
    return message(msg_id, "tools/call", {"name": "write", "arguments": arguments}) + b"\n"


class Answers:
    """The server's answers by id, read on a thread as they come."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.by_id: dict[Any, dict[str, Any]] = {}
        self.arrived = threading.Condition()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: IO[bytes]) -> None:
        for line in stream:
            answer = json.loads(line)
            with self.arrived:
                self.by_id[answer.get("id")] = answer
                self.arrived.notify_all()

    def wait(self, msg_id: Any) -> dict[str, Any]:
        with self.arrived:
            assert self.arrived.wait_for(lambda: msg_id in self.by_id, timeout=300)
            return self.by_id[msg_id]


def serve(workspace: Path, stdin: Any = subprocess.PIPE) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*READKEEPER, "mcp", "--standalone", "--root", str(workspace)],
        # A file as large as a message may carry is one readkeeper may make only when its
        # edits may load it whole (a write never makes a file past that cap).
        env={
            **mcp_env(private_runtime_dir()),
            "READKEEPER_MAX_SIZE_BYTES": str(2 * MAX_MESSAGE_BYTES),
        },
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


def test_every_front_end_has_the_one_cap() -> None:
    from readkeeper.attach.framing import MAX_FRAME

    assert MAX_BODY == MAX_FRAME == MAX_MESSAGE_BYTES


def test_a_line_over_the_cap_is_refused_and_the_next_is_served(workspace: Path) -> None:
    server = serve(workspace)
    assert server.stdin is not None
    assert server.stdout is not None
    answers = Answers(server.stdout)
    try:
        server.stdin.write(hello())
        server.stdin.write(write_call(7, "huge.txt", MAX_MESSAGE_BYTES + 1000))
        server.stdin.write(message(8, "tools/list", {}) + b"\n")
        server.stdin.flush()
        refused = answers.wait(7)
        assert refused["error"]["data"]["kind"] == "too_large"
        assert f"over the {MAX_MESSAGE_BYTES:,}-byte limit" in refused["error"]["message"]
        assert "tools" in answers.wait(8)["result"]
        assert not (workspace / "huge.txt").exists()
        # A write at the cap is taken, and the server stays under a generous bound.
        server.stdin.write(write_call(9, "big.txt", MAX_MESSAGE_BYTES - 4096))
        server.stdin.flush()
        written = answers.wait(9)
        assert "result" in written, written
        assert (workspace / "big.txt").stat().st_size == MAX_MESSAGE_BYTES - 4096
        assert vm_peak_mb(server.pid) < PEAK_CAP_MB
    finally:
        server.kill()
        server.wait()


def test_stdin_from_a_file_holds_a_line_to_the_cap_too(workspace: Path, tmp_path: Path) -> None:
    requests = tmp_path / "requests.jsonl"
    with requests.open("wb") as out:
        out.write(hello())
        out.write(write_call(7, "huge.txt", MAX_MESSAGE_BYTES + 1000))
        out.write(message(8, "tools/list", {}) + b"\n")
    with requests.open("rb") as stdin:
        server = serve(workspace, stdin)
        assert server.stdout is not None
        answers = Answers(server.stdout)
        try:
            assert answers.wait(7)["error"]["data"]["kind"] == "too_large"
            assert "tools" in answers.wait(8)["result"]
            assert vm_peak_mb(server.pid) < PEAK_CAP_MB
        finally:
            server.kill()
            server.wait()


def test_the_line_reader_keeps_no_more_than_the_cap(tmp_path: Path) -> None:
    import os

    path = tmp_path / "lines"
    path.write_bytes(b'{"id": 3, "x": "' + b"y" * (MAX_MESSAGE_BYTES + 5) + b'"}\nnext\n')
    fd = os.open(path, os.O_RDONLY)
    try:
        lines = Lines(fd, 1 << 20)
        first = lines.readline()
        assert len(first) <= 64 << 10
        assert first.startswith(b'{"id": 3')
        assert lines.readline() == b"next\n"
        assert lines.readline() == b""
    finally:
        os.close(fd)


def test_the_core_refuses_a_write_over_the_cap_before_any_work(
    core: Readkeeper, workspace: Path
) -> None:
    import pytest

    with pytest.raises(ReadkeeperError) as refused:
        core.write(WriteParams(file_path="huge.txt", content="x" * (MAX_MESSAGE_BYTES + 1)))
    assert refused.value.kind == "too_large"
    assert "Write it from a program instead" in refused.value.message
    assert not (workspace / "huge.txt").exists()
