"""A client that writes requests and stops reading the answers: `readkeeper mcp` stops
reading its requests once a bounded amount of output waits, so its memory stays
bounded, and it answers every request once the client reads again.

The requests go through the SDK's path (a `_meta` entry of our own keeps them off the
quick path of quick.py, which waits for the pipe on every answer anyway).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pty
import subprocess
import termios
import threading
import tty
from pathlib import Path
from typing import IO, Any

from helpers import wait_until
from mcp_helpers import READKEEPER, mcp_env, private_runtime_dir

REQUESTS = 10000
ANSWER_BYTES = 90_000  # a read of big.txt, forced (no stub)
# What the server may hold at its peak: the interpreter and the core (about 140 MB
# here), the 64 MB of answers waiting, the calls in flight, and slack (measured: 340 MB).
# Unbounded, the 10,000 answers (900 MB of JSON) took 730 MB here, and grow with more.
PEAK_RSS_CAP_KB = 480_000
# Over a terminal: 540 MB of answers if nothing holds them back.
TERMINAL_REQUESTS = 6000


def line(message: dict[str, Any]) -> bytes:
    return (json.dumps(message) + "\n").encode()


def peak_rss_kb(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(row.split()[1] for row in status.splitlines() if row.startswith("VmHWM:")))


def unread_bytes(pipe: IO[bytes]) -> int:
    """How many bytes wait in a pipe for its reader."""
    buf = bytearray(4)
    fcntl.ioctl(pipe.fileno(), termios.FIONREAD, buf)
    return int.from_bytes(buf, "little")


def test_a_client_that_stops_reading_leaves_the_server_bounded(workspace: Path) -> None:
    rows = "".join(f"line {i:06d} {'x' * 40}\n" for i in range(1500))
    (workspace / "big.txt").write_text(rows)
    server = subprocess.Popen(
        [*READKEEPER, "mcp", "--standalone", "--root", str(workspace)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=mcp_env(private_runtime_dir()),
    )
    assert server.stdin is not None
    assert server.stdout is not None
    try:
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
        hello["clientInfo"] = {"name": "test", "version": "1"}
        server.stdin.write(
            line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello})
        )
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["id"] == 0
        server.stdin.write(line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        call = {"name": "read", "arguments": {"file_path": "big.txt", "force": True}}
        call["_meta"] = {"example.com/path": "sdk"}
        requests = b"".join(
            line({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": call})
            for i in range(1, REQUESTS + 1)
        )
        written = threading.Event()

        def write_all() -> None:
            assert server.stdin is not None
            server.stdin.write(requests)
            server.stdin.flush()
            written.set()

        writer = threading.Thread(target=write_all, daemon=True)
        writer.start()
        pipe_size = fcntl.fcntl(server.stdin.fileno(), fcntl.F_GETPIPE_SZ)
        # Either the server stopped reading (its stdin pipe is full) or it took all.
        wait_until(
            lambda: written.is_set() or unread_bytes(server.stdin) >= pipe_size - 1024,  # type: ignore[arg-type]
            "the server to stop reading, or to take every request",
            timeout=300,
        )

        seen = set()
        for _ in range(REQUESTS):
            answer = json.loads(server.stdout.readline())
            assert "result" in answer, str(answer)[:500]
            assert not answer["result"].get("isError"), str(answer)[:500]
            assert len(json.dumps(answer)) > ANSWER_BYTES // 2
            seen.add(answer["id"])
        assert seen == set(range(1, REQUESTS + 1))
        writer.join()
        peak = peak_rss_kb(server.pid)
        assert peak < PEAK_RSS_CAP_KB, f"peak RSS {peak} kB"
    finally:
        server.kill()
        server.wait()


def test_requests_the_sdk_never_answers_hold_no_place(workspace: Path) -> None:
    # Lines the SDK refuses or never answers (bad envelopes, odd ids, notifications
    # sent with an id), more of each than the requests let in flight: a tool call
    # after them is still answered.
    server = subprocess.Popen(
        [*READKEEPER, "mcp", "--standalone", "--root", str(workspace)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=mcp_env(private_runtime_dir()),
    )
    assert server.stdin is not None
    assert server.stdout is not None
    try:
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
        hello["clientInfo"] = {"name": "test", "version": "1"}
        odd: list[dict[str, Any]] = [
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}
        ]
        odd.append({"jsonrpc": "2.0", "method": "notifications/initialized"})
        stats = {"name": "stats", "arguments": {}}
        for n in range(100):
            odd += [
                {"jsonrpc": "2.0", "id": 1000 + n, "method": "tools/call", "params": "x"},
                {"jsonrpc": "1.0", "id": 2000 + n, "method": "tools/call", "params": stats},
                {"jsonrpc": "2.0", "id": [n], "method": "tools/call", "params": stats},
                {"jsonrpc": "2.0", "id": 3000 + n, "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 4000 + n, "method": "tools/call", "params": {"name": 7}},
            ]
        odd.append({"jsonrpc": "2.0", "id": "last", "method": "tools/call", "params": stats})
        server.stdin.write(b"".join(line(message) for message in odd))
        server.stdin.close()
        while True:
            answer = server.stdout.readline()
            assert answer, "the server ended without answering the last call"
            if json.loads(answer).get("id") == "last":
                break
    finally:
        server.kill()
        server.wait()


def test_a_terminal_that_stops_reading_leaves_the_server_bounded(workspace: Path) -> None:
    # stdin and stdout a terminal (not pipes): the SDK's own reader and writer, through
    # worker threads, which read every line at once unless held back.
    rows = "".join(f"line {i:06d} {'x' * 40}\n" for i in range(1500))
    (workspace / "big.txt").write_text(rows)
    master, terminal = pty.openpty()
    tty.setraw(terminal)
    server = subprocess.Popen(
        [*READKEEPER, "mcp", "--standalone", "--root", str(workspace)],
        stdin=terminal,
        stdout=terminal,
        stderr=subprocess.DEVNULL,
        env=mcp_env(private_runtime_dir()),
    )
    os.close(terminal)
    calls = TERMINAL_REQUESTS
    try:
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
        hello["clientInfo"] = {"name": "test", "version": "1"}
        call = {"name": "read", "arguments": {"file_path": "big.txt", "force": True}}
        call["_meta"] = {"example.com/path": "sdk"}
        requests = line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello})
        requests += line({"jsonrpc": "2.0", "method": "notifications/initialized"})
        requests += b"".join(
            line({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": call})
            for i in range(1, calls + 1)
        )

        def write_all() -> None:
            with contextlib.suppress(OSError):
                _write_fully(master, requests)

        threading.Thread(target=write_all, daemon=True).start()
        last = [-1]

        def steady() -> bool:
            peak = peak_rss_kb(server.pid)
            grown, last[0] = peak != last[0], peak
            if grown:
                threading.Event().wait(3)
            return not grown

        wait_until(steady, "the server's memory to settle", timeout=300)
        peak = peak_rss_kb(server.pid)
        assert peak < PEAK_RSS_CAP_KB, f"peak RSS {peak} kB"
        seen: set[int] = set()
        buffer = b""
        while len(seen) < calls + 1:
            chunk = os.read(master, 1 << 20)
            assert chunk, "the server closed its terminal"
            buffer += chunk
            *done, buffer = buffer.split(b"\n")
            for row in done:
                answer = json.loads(row)
                assert "result" in answer, str(answer)[:500]
                seen.add(answer["id"])
        assert seen == set(range(calls + 1))
    finally:
        server.kill()
        server.wait()
        os.close(master)


def _write_fully(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def test_requests_from_a_file_are_answered_into_a_file(workspace: Path, tmp_path: Path) -> None:
    # Neither stream a pipe nor a terminal: the same line reader, to the end of input.
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
    hello["clientInfo"] = {"name": "test", "version": "1"}
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(
        line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello})
        + line({"jsonrpc": "2.0", "method": "notifications/initialized"})
        + line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    )
    answers = tmp_path / "answers.jsonl"
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        done = subprocess.run(
            [*READKEEPER, "mcp", "--standalone", "--root", str(workspace)],
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.DEVNULL,
            env=mcp_env(private_runtime_dir()),
            timeout=120,
        )
    assert done.returncode == 0
    replies = [json.loads(row) for row in answers.read_text().splitlines()]
    assert [reply["id"] for reply in replies] == [0, 1]
    assert any(tool["name"] == "read" for tool in replies[1]["result"]["tools"])
