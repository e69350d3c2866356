"""The real server on raw stdio, for tests that send bytes no client library would.

Its output is read on a thread into a queue, and every wait has a deadline: a server
that wedges fails the test instead of hanging it.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any

import warm_server

# A deadline, not a wait: a server that answers at all answers in milliseconds, but on a
# loaded machine (CI, parallel workers) its start-up alone can take seconds.
WAIT_S = 30.0


class ServerGone(AssertionError):
    """The server closed its output (it exited)."""


class RawServer:
    def __init__(
        self,
        *command: str,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        real: bool = False,
    ) -> None:
        """`command`: `readkeeper serve` unless given, started warm (warm_server.py)
        unless `real` (a test that reads the server's own pid)."""
        serve = warm_server.real_command("serve") if real else warm_server.command("serve")
        self.process = subprocess.Popen(
            command or serve,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
            cwd=cwd,
        )
        assert self.process.stdin
        assert self.process.stdout
        assert self.process.stderr
        self._stdin = self.process.stdin
        self._messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._stderr = bytearray()
        self._threads = [
            threading.Thread(target=self._read_messages, args=(self.process.stdout,), daemon=True),
            threading.Thread(target=self._read_stderr, args=(self.process.stderr,), daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        self.notifications: list[dict[str, Any]] = []
        self.seen_responses: list[dict[str, Any]] = []
        self.frames: list[bytes] = []  # every message as it came, headers and all

    # --- the reader threads ---

    def _read_messages(self, stdout: IO[bytes]) -> None:
        try:
            while True:
                length = None
                head = b""
                while (line := stdout.readline()) not in (b"\r\n", b""):
                    head += line
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                if not line or length is None:
                    return
                body = stdout.read(length)
                self.frames.append(head + line + body)
                self._messages.put(json.loads(body))
        finally:
            self._messages.put(None)  # end of output

    def _read_stderr(self, stderr: IO[bytes]) -> None:
        while chunk := stderr.read1(65536):
            self._stderr += chunk

    @property
    def stderr(self) -> str:
        return self._stderr.decode("utf-8", "replace")

    # --- sending ---

    def send_raw(self, data: bytes) -> None:
        self._stdin.write(data)
        self._stdin.flush()

    def send_bytes(self, body: bytes) -> None:
        self.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(json.dumps({"jsonrpc": "2.0", **message}).encode())

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"method": method, "params": params})

    # --- receiving ---

    def receive(self, timeout: float = WAIT_S) -> dict[str, Any]:
        """The next message from the server, answering its requests on the way."""
        try:
            message = self._messages.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(
                f"the server sent nothing for {timeout} s (alive: {self.alive})\n{self.stderr}"
            ) from None
        if message is None:
            self._messages.put(None)  # stays at the end for later calls
            raise ServerGone(f"the server exited ({self.process.poll()})\n{self.stderr}")
        return message

    def response(self, id_: Any = ..., timeout: float = WAIT_S) -> dict[str, Any]:
        """The next response (to `id_` if given): server notifications are kept in
        `notifications`, server requests answered with null."""
        deadline = time.monotonic() + timeout
        while True:
            message = self.receive(max(0.0, deadline - time.monotonic()))
            if "method" in message:
                if "id" in message:
                    self.send({"id": message["id"], "result": None})
                else:
                    self.notifications.append(message)
            else:
                self.seen_responses.append(message)
                if id_ is ... or message.get("id") == id_:
                    return message

    def frame_of(self, id_: Any) -> bytes:
        """The bytes of the latest response to `id_` (received already)."""
        for frame in reversed(self.frames):
            message = json.loads(frame.partition(b"\r\n\r\n")[2])
            if "method" not in message and message.get("id") == id_:
                return frame
        raise AssertionError(f"no response to {id_!r} was received")

    def request(self, id_: Any, method: str, params: Any, timeout: float = WAIT_S) -> Any:
        self.send({"id": id_, "method": method, "params": params})
        return self.response(id_, timeout)

    def initialize(self, root: Path | None, **params: Any) -> dict[str, Any]:
        params.setdefault("processId", os.getpid())
        params.setdefault("capabilities", {"window": {"showMessage": {}}})
        if root is not None:
            params.setdefault("rootUri", root.as_uri())
        reply: dict[str, Any] = self.request(1, "initialize", params)
        assert "result" in reply, reply
        self.notify("initialized", {})
        return reply

    def shown_messages(self) -> list[str]:
        return [
            n["params"]["message"]
            for n in self.notifications
            if n["method"] == "window/showMessage"
        ]

    # --- the process ---

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def wait_exit(self, timeout: float = WAIT_S) -> int:
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the server is still running after {timeout} s") from None

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
        for thread in self._threads:  # they end at the end of the output
            thread.join(WAIT_S)
        for pipe in (self._stdin, self.process.stdout, self.process.stderr):
            if pipe is not None:
                with contextlib.suppress(BrokenPipeError):  # bytes it never read
                    pipe.close()
