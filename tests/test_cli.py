"""The `readkeeper` command: `read` for people and scripts, `serve --tcp`, `demo`."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import BinaryIO

READKEEPER = [sys.executable, "-m", "readkeeper"]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*READKEEPER, *args], cwd=cwd, capture_output=True, text=True, timeout=60)


def test_read_prints_numbered_lines(workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\nbeta\ngamma\n")
    done = run("read", "a.txt", "--offset", "2", "--limit", "1", cwd=workspace)
    assert done.returncode == 0
    assert done.stdout == "     2\tbeta\n"


def test_read_json_is_the_protocol_result(workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    done = run("read", "a.txt", "--json", cwd=workspace)
    result = json.loads(done.stdout)
    assert result["type"] == "text"
    assert result["file"]["file_path"] == str(workspace / "a.txt")
    assert result["file"]["content"] == "     1\talpha"


def test_read_error_exits_non_zero_with_the_kind(workspace: Path) -> None:
    (workspace / "alpha.txt").write_text("a\n")
    done = run("read", "alpah.txt", cwd=workspace)
    assert done.returncode == 1
    assert done.stderr.startswith("readkeeper: not_found:")
    assert "alpha.txt" in done.stderr
    as_json = json.loads(run("read", "alpah.txt", "--json", cwd=workspace).stdout)
    assert as_json["error"]["data"]["kind"] == "not_found"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _frame(message: dict[str, object]) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _receive(stream: BinaryIO) -> dict[str, object]:
    length = 0
    while (line := stream.readline()) not in (b"\r\n", b""):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    message: dict[str, object] = json.loads(stream.read(length))
    return message


def test_serve_over_tcp(workspace: Path) -> None:
    (workspace / "a.txt").write_text("over tcp\n")
    port = _free_port()
    server = subprocess.Popen(
        [*READKEEPER, "serve", "--tcp", f"127.0.0.1:{port}"], stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                stream = socket.create_connection(("127.0.0.1", port), timeout=30)
                break
            except ConnectionRefusedError:
                assert time.monotonic() < deadline, "server never listened"
                time.sleep(0.1)
        with stream, stream.makefile("rb") as incoming:
            stream.sendall(
                _frame(
                    {
                        "id": 1,
                        "method": "initialize",
                        "params": {
                            "processId": os.getpid(),
                            "rootUri": workspace.as_uri(),
                            "capabilities": {},
                        },
                    }
                )
            )
            assert "result" in _receive(incoming)
            stream.sendall(_frame({"method": "initialized", "params": {}}))
            stream.sendall(
                _frame({"id": 2, "method": "readkeeper/read", "params": {"file_path": "a.txt"}})
            )
            reply = _receive(incoming)
            while "id" not in reply:  # skip notifications
                reply = _receive(incoming)
            result = reply["result"]
            assert isinstance(result, dict)
            assert result["type"] == "text"
            assert result["file"]["file_path"] == str(workspace / "a.txt")
            assert result["file"]["content"] == "     1\tover tcp"
    finally:
        server.kill()
        server.wait()


def test_demo_plays_the_session(tmp_path: Path) -> None:
    done = run("demo", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert '"type": "file_unchanged"' in out
    assert "partial=True" in out
    assert "Did you mean" in out
    assert "1 replacement" in out
    assert "merged=True" in out  # a disjoint change merged
    assert "error stale" in out  # an overlapping one caught, with its diff
    assert "+        return [item for item in" in out
    assert "← changes" in out  # and the change notice attached for the next turn
    assert "1 stale edit caught" in out


def test_read_of_an_image_summarises_the_payload_unless_json(workspace: Path) -> None:
    from PIL import Image

    Image.new("RGB", (120, 80), (10, 120, 200)).save(workspace / "swatch.png")
    shown = json.loads(run("read", "swatch.png", cwd=workspace).stdout)
    assert shown["type"] == "image"
    assert shown["file"]["base64"].endswith("base64 characters; --json prints them>")
    raw = json.loads(run("read", "swatch.png", "--json", cwd=workspace).stdout)
    assert raw["file"]["base64"].startswith("iVBORw0KGgo")  # the PNG itself
