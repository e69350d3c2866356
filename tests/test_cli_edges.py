"""The edges of the `readkeeper` command: every bad address, port, input or signal ends
the process with a one-line message and an exit status, never a traceback or a hang."""

from __future__ import annotations

import os
import pty
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import warm_server

from mcp_helpers import mcp_env, private_runtime_dir

READKEEPER = [sys.executable, "-m", "readkeeper"]


def run(*args: str, cwd: Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        warm_server.command(*args), cwd=cwd, capture_output=True, text=True, timeout=60, **kwargs
    )


def one_line(text: str) -> str:
    """`text` when it is one line (the way a usage error or a refusal is said)."""
    assert "Traceback" not in text, text
    lines = [line for line in text.splitlines() if not line.startswith("usage:")]
    lines = [line for line in lines if line.startswith("readkeeper")]
    assert len(lines) == 1, text
    return lines[0]


@pytest.fixture
def held_port() -> Iterator[int]:
    """A loopback port another socket listens on."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


@pytest.mark.parametrize(
    "args",
    [
        ("serve", "--tcp", "127.0.0.1:99999"),
        ("mcp", "--http", "--port", "99999"),
        ("mcp", "--http", "--port", "-1"),
    ],
)
def test_a_port_out_of_range_is_a_usage_error(workspace: Path, args: tuple[str, ...]) -> None:
    done = run(*args, cwd=workspace, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert "0 to 65535" in one_line(done.stderr)


@pytest.mark.parametrize("front", ["serve", "mcp"])
def test_a_port_in_use_is_said_in_one_line(workspace: Path, held_port: int, front: str) -> None:
    args = (
        ("serve", "--tcp", f"127.0.0.1:{held_port}")
        if front == "serve"
        else ("mcp", "--http", "--port", str(held_port))
    )
    done = run(*args, cwd=workspace, stdin=subprocess.DEVNULL, env=mcp_env(private_runtime_dir()))
    assert done.returncode == 2
    said = one_line(done.stderr)
    assert f"127.0.0.1:{held_port}" in said
    assert "in use" in said


def test_an_unknown_host_is_a_usage_error(workspace: Path) -> None:
    done = run("serve", "--tcp", "no-such-host.invalid:4000", cwd=workspace)
    assert done.returncode == 2
    assert "no-such-host.invalid" in one_line(done.stderr)


@pytest.mark.parametrize("stdin", ["devnull", "closed"])
def test_serve_without_input_ends_at_once(workspace: Path, stdin: str) -> None:
    # /dev/null cannot be watched by the event loop (epoll refuses it); a closed stdin is
    # no stream at all. Both are an end of input: the server exits, no traceback.
    if stdin == "devnull":
        done = run("serve", cwd=workspace, stdin=subprocess.DEVNULL)
    else:
        done = run("serve", cwd=workspace, stdin=subprocess.DEVNULL, preexec_fn=_close_stdin)
    assert "Traceback" not in done.stderr
    assert done.returncode in (0, 1, 2), done.stderr
    if stdin == "closed":
        assert done.returncode == 2
        assert "stdin" in one_line(done.stderr)


def _close_stdin() -> None:
    os.close(0)


@pytest.mark.parametrize("attach", [True, False])
def test_mcp_on_a_terminal_stops_on_ctrl_c(workspace: Path, attach: bool) -> None:
    # Ctrl-C at a terminal: the terminal sends SIGINT to the foreground process group.
    leader, follower = pty.openpty()
    args = ["mcp"] if attach else ["mcp", "--standalone"]
    try:
        with subprocess.Popen(
            warm_server.command(*args),
            cwd=workspace,
            stdin=follower,
            stdout=follower,
            stderr=subprocess.PIPE,
            env=mcp_env(private_runtime_dir()),
            start_new_session=True,
        ) as server:
            # It serves: an initialize typed at the terminal is answered.
            os.write(
                leader,
                b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
                b'"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n',
            )
            seen = b""
            while b'"serverInfo"' not in seen:
                chunk = os.read(leader, 65536)
                assert chunk, "the terminal closed before an answer"
                seen += chunk
            os.killpg(server.pid, signal.SIGINT)
            status = server.wait(timeout=30)
            assert server.stderr is not None
            error = server.stderr.read().decode()
    finally:
        os.close(leader)
        os.close(follower)
    assert "Traceback" not in error
    assert status in (0, 130)


ROOTED = [("read", "f.txt"), ("grep", "x"), ("glob", "*"), ("ls", "."), ("stats",), ("mcp",)]


@pytest.mark.parametrize("command", ROOTED)
@pytest.mark.parametrize(
    ("root", "why"), [("missing", "does not exist"), ("f.txt", "is not a folder")]
)
def test_a_root_that_is_no_folder_is_named_as_the_root(
    workspace: Path, command: tuple[str, ...], root: str, why: str
) -> None:
    # A --root the user typed that is not there is most likely a typo: refused, saying
    # it does not exist (it said "is not a folder", as of a file), at every command.
    (workspace / "f.txt").write_text("x\n")
    env = mcp_env(private_runtime_dir())
    done = run(*command, "--root", str(workspace / root), cwd=workspace, env=env)
    assert done.returncode == 2
    said = one_line(done.stderr)
    assert said == f"readkeeper: --root {workspace / root} {why}; pass the project's folder."


def test_an_empty_file_is_not_an_error(workspace: Path) -> None:
    (workspace / "empty.txt").write_bytes(b"")
    done = run("read", "empty.txt", cwd=workspace)
    assert done.returncode == 0
    assert done.stdout == ""
    assert one_line(done.stderr).startswith("readkeeper: note: ")
    assert "empty" in done.stderr


def test_offset_zero_is_refused_as_the_other_front_ends_refuse_it(workspace: Path) -> None:
    (workspace / "f.txt").write_text("a\nb\n")
    done = run("read", "f.txt", "--offset", "0", cwd=workspace)
    assert done.returncode == 2
    said = one_line(done.stderr)
    assert said.startswith("readkeeper: bad_params: ")
    assert "--offset 1" in said  # the CLI's own words for the call that works
    assert done.stdout == ""


def test_every_read_parameter_an_error_can_ask_for_is_a_read_flag(workspace: Path) -> None:
    # A scanned PDF's error asks for pages="1", render=true: the CLI must have both.
    import attrs

    from readkeeper.protocol import ReadParams

    usage = run("read", "--help", cwd=workspace).stdout
    wanted = {f.name for f in attrs.fields(ReadParams)} - {"file_path", "session"}
    missing = [name for name in sorted(wanted) if f"--{name.replace('_', '-')}" not in usage]
    assert missing == []


def test_read_estimate_says_the_cost_and_nothing_else(workspace: Path) -> None:
    (workspace / "f.txt").write_text("a\nb\n")
    done = run("read", "f.txt", "--estimate", cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"estimate: {workspace / 'f.txt'}, ")
    assert "\ta" not in done.stdout


def _close_stdout() -> None:
    os.close(1)


@pytest.mark.parametrize("command", [("read", "f.txt"), ("read", "f.txt", "--json"), ("settings",)])
def test_a_closed_stdout_is_said_not_a_traceback_nor_a_silent_success(
    workspace: Path, command: tuple[str, ...]
) -> None:
    (workspace / "f.txt").write_text("a\n")
    done = run(*command, cwd=workspace, preexec_fn=_close_stdout)
    assert done.returncode == 2
    assert "stdout is closed" in one_line(done.stderr)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("command", [("read", "f.txt"), ("settings",)])
def test_output_that_cannot_be_written_is_said_in_one_line(
    workspace: Path, command: tuple[str, ...]
) -> None:
    (workspace / "f.txt").write_text("a\n")
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            warm_server.command(*command),
            cwd=workspace,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    assert done.returncode == 2
    assert "No space left on device" in one_line(done.stderr)


def test_serve_on_port_zero_says_which_port_it_took(workspace: Path) -> None:
    with subprocess.Popen(
        [*READKEEPER, "serve", "--tcp", "127.0.0.1:0"],
        cwd=workspace,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    ) as server:
        try:
            assert server.stderr is not None
            said = server.stderr.readline()
            port = int(said.rsplit(":", 1)[1])
            assert said.startswith("readkeeper: listening on 127.0.0.1:")
            with socket.create_connection(("127.0.0.1", port), timeout=30):
                pass
        finally:
            server.terminate()
            server.wait(timeout=30)


def test_a_project_entered_through_a_link_is_searched_by_that_name(tmp_path: Path) -> None:
    # No --root: the root is the working folder as the shell names it ($PWD), so a path
    # given by the link's spelling is inside (paths are judged by their text first).
    real = (tmp_path / "real-project").resolve()
    real.mkdir()
    (real / "a.txt").write_text("alpha\n")
    spelled = tmp_path / "project"
    spelled.symlink_to(real)
    env = {**mcp_env(private_runtime_dir()), "PWD": str(spelled)}
    done = run("grep", "alpha", str(spelled / "a.txt"), cwd=spelled, env=env)
    assert done.returncode == 0, done.stderr
    assert "alpha" in done.stdout
