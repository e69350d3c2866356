"""The attach socket's defences, on a real socket served by a real core: a private
folder and a 0600 socket, refused when their permissions are wrong; a peer of another
uid refused even when it can reach the socket; bad frames answered, never wedging it.
"""

from __future__ import annotations

import json
import os
import socket
import struct
from pathlib import Path
from typing import Any

import pytest

from helpers import run_as_nobody, run_python
from mcp_helpers import call, mcp_env, stdio_client
from readkeeper.attach import discovery, framing
from readkeeper.attach.client import AttachClient
from readkeeper.attach.listener import Listener
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError

NOBODY = 65534


def test_the_socket_and_its_folder_are_private(listener: Listener, workspace: Path) -> None:
    assert os.stat(listener.socket_path).st_mode & 0o777 == 0o600
    assert os.stat(listener.folder).st_mode & 0o777 == 0o700
    entry = json.loads(Path(discovery.discovery_path(listener.folder, str(workspace))).read_text())
    assert entry == {"socket": listener.socket_path, "pid": os.getpid(), "root": str(workspace)}
    client = AttachClient.connect([str(workspace / "sub" / "folder")])  # found from below too
    assert client is not None
    assert client.pid == os.getpid()
    client.close()


def test_the_socket_is_private_from_the_moment_it_exists(
    runtime: Path, core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A user whose umask opens new files to everyone: a socket bound under it and
    # chmod'ed after is open to other users in between, long enough to connect. So
    # whatever later changes the socket's mode first sees the mode it was born with.
    born: list[int] = []
    real_chmod = os.chmod

    def chmod_seen(path: Any, mode: int, **kwargs: Any) -> None:
        if str(path).endswith(".sock") and not born:
            born.append(os.stat(path).st_mode & 0o777)
        real_chmod(path, mode, **kwargs)

    monkeypatch.setattr(os, "chmod", chmod_seen)
    old_mask = os.umask(0)
    try:
        served = Listener(core)
        assert served.start([str(workspace)])
    finally:
        os.umask(old_mask)
    try:
        assert os.stat(served.socket_path).st_mode & 0o777 == 0o600
        assert all(mode == 0o600 for mode in born), f"born {born[0]:o}, then chmod'ed"
    finally:
        served.close()


def test_a_folder_open_to_others_is_refused(runtime: Path, core: Readkeeper) -> None:
    (runtime / "readkeeper").mkdir(mode=0o755)
    os.chmod(runtime / "readkeeper", 0o755)
    with pytest.raises(ReadkeeperError, match="mode 755, open to other users"):
        discovery.runtime_dir()
    assert not Listener(core).start(["/nonexistent"])


def test_a_folder_that_is_a_symlink_is_refused(runtime: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (runtime / "readkeeper").symlink_to(elsewhere)
    with pytest.raises(ReadkeeperError, match="not a folder"):
        discovery.runtime_dir()


@pytest.mark.skipif(os.geteuid() != 0, reason="making a folder of another uid needs root")
def test_a_folder_of_another_uid_is_refused(runtime: Path) -> None:
    (runtime / "readkeeper").mkdir(mode=0o700)
    os.chown(runtime / "readkeeper", NOBODY, NOBODY)
    with pytest.raises(ReadkeeperError, match=f"belongs to uid {NOBODY}"):
        discovery.runtime_dir()


def test_a_socket_open_to_others_is_not_trusted(listener: Listener, workspace: Path) -> None:
    os.chmod(listener.socket_path, 0o666)
    with pytest.raises(ReadkeeperError, match="mode 666"):
        AttachClient.connect([str(workspace)])


async def test_mcp_runs_standalone_when_the_socket_is_open_to_others(
    listener: Listener, runtime: Path, workspace: Path
) -> None:
    os.chmod(listener.socket_path, 0o666)
    async with stdio_client(["--root", str(workspace)], mcp_env(runtime)) as client:
        stats = await call(client, "stats")
        assert stats["mode"] == "standalone"
        assert "mode 666" in stats["not_attached"]


def ask_as_nobody(socket_path: str) -> str:
    """Connect and ask for stats as uid nobody (helpers.run_as_nobody: only socket calls
    in the child); what it got, or "EACCES"."""

    def client() -> bytes:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(30)
        try:
            sock.connect(socket_path)
        except PermissionError:
            return b"EACCES"
        answer = framing.exchange(sock, {"id": 1, "method": "stats", "params": {}})
        return json.dumps(answer).encode()

    return run_as_nobody(client).decode()


@pytest.mark.skipif(os.geteuid() != 0, reason="running a client as another uid needs root")
def test_another_uid_cannot_open_the_socket(listener: Listener) -> None:
    assert ask_as_nobody(listener.socket_path) == "EACCES"


@pytest.mark.skipif(os.geteuid() != 0, reason="running a client as another uid needs root")
def test_another_uid_that_reaches_the_socket_is_refused_by_its_credentials(
    listener: Listener, runtime: Path
) -> None:
    # Open the way on purpose (as a careless chmod would): SO_PEERCRED still refuses.
    for folder in (runtime, Path(listener.folder)):
        os.chmod(folder, 0o711)
    os.chmod(listener.socket_path, 0o666)
    answer = json.loads(ask_as_nobody(listener.socket_path))
    assert answer["error"]["data"]["kind"] == "refused"
    assert f"not uid {NOBODY}" in answer["error"]["message"]


def test_a_refusal_sent_before_the_request_was_read_is_still_received() -> None:
    # A refusing listener answers at once and closes; the request written after that
    # fails with EPIPE, and the refusal waiting in the buffer must still be read.
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    refusal = {"id": None, "error": {"message": "no", "data": {"kind": "refused"}}}
    framing.send(theirs, refusal)
    theirs.close()
    with ours:
        assert framing.exchange(ours, {"id": 0, "method": "hello"}) == refusal


def raw_connection(listener: Listener, hello: bool = True) -> socket.socket:
    """A connection to the listener, past its hello (naming the editor's roots) unless
    `hello` is False."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(30)
    sock.connect(listener.socket_path)
    if hello:
        roots = list(listener.core.workspace.roots)
        answer = framing.exchange(sock, {"id": 0, "method": "hello", "params": {"roots": roots}})
        assert answer is not None
        assert answer["result"]["roots"] == roots
    return sock


def test_bad_frames_are_answered_and_the_connection_goes_on(listener: Listener) -> None:
    with raw_connection(listener) as sock:
        sock.sendall(struct.pack(">I", 9) + b"not json!")
        answer = framing.receive(sock)
        assert answer is not None
        assert answer["error"]["data"]["kind"] == "bad_params"
        assert "not JSON" in answer["error"]["message"]
        sock.sendall(struct.pack(">I", 2) + b"[]")
        answer = framing.receive(sock)
        assert answer is not None
        assert "not a JSON object" in answer["error"]["message"]
        framing.send(sock, {"id": 1, "method": "nonesuch", "params": {}})
        answer = framing.receive(sock)
        assert answer == {
            "id": 1,
            "error": {
                "message": answer["error"]["message"],
                "data": {"kind": "unsupported", "method": "nonesuch"},
            },
        }
        framing.send(sock, {"id": 2, "method": "read", "params": {"file_path": 42}})
        answer = framing.receive(sock)
        assert answer is not None
        assert answer["error"]["data"] == {"kind": "bad_params", "field": "file_path"}
        framing.send(sock, {"id": 3, "method": "stats", "params": {}})
        answer = framing.receive(sock)
        assert answer is not None
        assert answer["id"] == 3
        assert "total" in answer["result"]


def test_an_oversized_frame_ends_only_its_connection(listener: Listener) -> None:
    listener.max_frame = 1024
    with raw_connection(listener) as sock:
        sock.sendall(struct.pack(">I", 1 << 30))
        answer = framing.receive(sock)
        assert answer is not None
        assert "over the 1024-byte limit" in answer["error"]["message"]
        assert framing.receive(sock) is None  # closed: the stream is out of step
    with raw_connection(listener, hello=False) as sock:
        roots = list(listener.core.workspace.roots)
        framing.send(sock, {"id": 1, "method": "hello", "params": {"roots": roots}})
        answer = framing.receive(sock)
        assert answer is not None
        assert answer["result"]["pid"] == os.getpid()


def test_a_connection_is_its_own_session(listener: Listener, workspace: Path) -> None:
    (workspace / "f.txt").write_text("text\n")
    with raw_connection(listener) as first, raw_connection(listener, hello=False) as second:
        roots = list(listener.core.workspace.roots)
        framing.send(second, {"id": 2, "method": "hello", "params": {"roots": roots}})
        hello = framing.receive(second)
        assert hello is not None
        assert hello["result"]["session"].startswith(f"mcp-{os.getpid()}-")
        for sock in (first, second, first):
            framing.send(sock, {"id": 1, "method": "read", "params": {"file_path": "f.txt"}})
            answer = framing.receive(sock)
            assert answer is not None
            last = answer["result"]["type"]
        assert last == "file_unchanged"  # the first connection's second read


def test_frames_carry_any_text_a_result_can_hold() -> None:
    # A path named in bytes that are not UTF-8 (decoded with surrogateescape) and
    # text beyond the BMP both cross the socket unchanged.
    odd = os.fsdecode(b"/ws/caf\xe9.txt")
    message = {"id": 7, "result": {"file_path": odd, "content": "naïve 🎉 \x00 \u2028 end"}}
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with ours, theirs:
        framing.send(theirs, message)
        assert framing.receive(ours) == message
        framing.send(theirs, {"id": 8, "result": {"n": 2**40, "f": 0.5, "none": None}})
        assert framing.receive(ours) == {"id": 8, "result": {"n": 2**40, "f": 0.5, "none": None}}


def test_a_frame_nested_too_deeply_is_answered_and_the_connection_goes_on(
    listener: Listener,
) -> None:
    body = b"[" * 100_000 + b"]" * 100_000
    with raw_connection(listener) as sock:
        sock.sendall(struct.pack(">I", len(body)) + body)
        answer = framing.receive(sock)
        assert answer is not None
        assert "nested too deeply" in answer["error"]["message"]
        framing.send(sock, {"id": 1, "method": "stats", "params": {}})
        answer = framing.receive(sock)
        assert answer is not None
        assert answer["id"] == 1


def test_an_agent_past_the_connection_limit_is_told_so_and_the_others_go_on(
    listener: Listener, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("readkeeper.attach.listener.MAX_CONNECTIONS", 1)
    with raw_connection(listener) as first:  # past its hello: it holds the one place
        with raw_connection(listener, hello=False) as second:
            refusal = framing.receive(second)
            assert refusal is not None
            assert refusal["error"]["data"]["kind"] == "refused"
            assert refusal["error"]["message"] == "Too many attached agents (1); try later."
        answer = framing.exchange(first, {"id": 2, "method": "stats", "params": {}})
        assert answer is not None
        assert "result" in answer, answer


def test_a_discovery_file_that_is_a_fifo_or_a_link_is_no_server_not_a_hang(
    runtime: Path, workspace: Path, tmp_path: Path
) -> None:
    # An `readkeeper mcp` that looks for the editor's server must start whatever sits
    # in the runtime folder: a FIFO (whose open would wait for a writer) or a symlink
    # to a discovery file elsewhere is no server.
    folder = discovery.runtime_dir()
    sub = workspace / "sub"
    sub.mkdir()
    os.mkfifo(discovery.discovery_path(folder, str(sub)))
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"socket": "/x", "pid": os.getpid(), "root": "/"}))
    os.symlink(elsewhere, discovery.discovery_path(folder, str(workspace)))
    script = (
        "import sys; from readkeeper.attach import discovery; print(discovery.find(sys.argv[1]))"
    )
    done = run_python(script, str(sub))
    assert (done.returncode, done.stdout.strip()) == (0, "None"), done.stderr
