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

import pytest
import warm_server

from readkeeper.read.anchors import anchor

READKEEPER = [sys.executable, "-m", "readkeeper"]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        warm_server.command(*args), cwd=cwd, capture_output=True, text=True, timeout=60
    )


def test_read_prints_numbered_lines(workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\nbeta\ngamma\n")
    done = run("read", "a.txt", "--offset", "2", "--limit", "1", cwd=workspace)
    assert done.returncode == 0
    assert done.stdout == "     2\tbeta\n"


def test_read_prints_anchored_lines_when_asked(workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\nbeta\n")
    done = run("read", "a.txt", "--line-format", "anchors", cwd=workspace)
    assert done.returncode == 0
    assert done.stdout == f"{anchor(1, 'alpha')}\talpha\n{anchor(2, 'beta')}\tbeta\n"


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
    assert done.returncode == 2
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
    log = workspace.parent / "serve-tcp.log"
    server = subprocess.Popen(
        [*READKEEPER, "serve", "--tcp", f"127.0.0.1:{port}"], stderr=log.open("wb")
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
            # The client ends the session: the server exits cleanly, no traceback.
            stream.sendall(_frame({"id": 3, "method": "shutdown"}))
            stream.sendall(_frame({"method": "exit"}))
            assert server.wait(timeout=30) == 0
        assert "Traceback" not in log.read_text()
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
    assert "2 edits, 1 stale edit caught" in out  # counted, and in words


def test_read_of_an_image_summarises_the_payload_unless_json(workspace: Path) -> None:
    from PIL import Image

    Image.new("RGB", (120, 80), (10, 120, 200)).save(workspace / "swatch.png")
    shown = run("read", "swatch.png", cwd=workspace).stdout
    assert shown.startswith(f"{workspace / 'swatch.png'}: PNG image, 120x80 shown at 120x80")
    assert "iVBORw0KGgo" not in shown
    raw = json.loads(run("read", "swatch.png", "--json", cwd=workspace).stdout)
    assert raw["file"]["base64"].startswith("iVBORw0KGgo")  # the PNG itself


def test_output_cut_short_by_the_reader_is_not_a_traceback(workspace: Path) -> None:
    # `readkeeper read big.py | head -2`: the reader closes the pipe early.
    # ~240 KB: more than a pipe holds, so the writer is still writing when the pipe closes.
    (workspace / "many.txt").write_text("".join(f"line {i} {'x' * 110}\n" for i in range(1, 2001)))
    reader = subprocess.Popen(
        warm_server.command("read", "many.txt"),
        cwd=workspace,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert reader.stdout is not None
    assert reader.stderr is not None
    first = reader.stdout.readline()
    reader.stdout.close()  # as `head -1` does
    error = reader.stderr.read().decode()
    code = reader.wait(timeout=60)
    assert first == b"     1\tline 1 " + b"x" * 110 + b"\n"
    assert "Traceback" not in error
    assert error == ""
    assert code == 141  # what a shell reports for a pipeline member stopped by SIGPIPE


def test_a_bad_log_level_is_a_usage_error_not_a_traceback(workspace: Path) -> None:
    done = run("--log-level", "bogus", "settings", cwd=workspace)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "--log-level" in done.stderr
    assert "DEBUG" in done.stderr
    assert "WARNING" in done.stderr
    assert run("--log-level", "debug", "settings", cwd=workspace).returncode == 0


def test_version(workspace: Path) -> None:
    from readkeeper import __version__

    done = run("--version", cwd=workspace)
    assert done.returncode == 0
    assert done.stdout.strip() == f"readkeeper {__version__}"


def test_plain_readkeeper_on_a_terminal_prints_help(workspace: Path) -> None:
    # On a terminal nobody speaks LSP: print the help instead of waiting for input.
    import pty

    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            READKEEPER, cwd=workspace, stdin=follower, capture_output=True, text=True, timeout=60
        )
    finally:
        os.close(leader)
        os.close(follower)
    assert done.returncode == 0
    assert "usage: readkeeper" in done.stdout
    assert "serve" in done.stdout
    assert "read" in done.stdout


def test_plain_readkeeper_without_a_terminal_serves_lsp(workspace: Path) -> None:
    # What an editor starts: stdin is a pipe, and the end of input ends the server.
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
    ).encode()
    done = subprocess.run(
        READKEEPER,
        cwd=workspace,
        input=b"Content-Length: %d\r\n\r\n" % len(body) + body,
        capture_output=True,
        timeout=60,
    )
    assert b'"capabilities"' in done.stdout


def test_invalid_and_unknown_settings_are_reported_and_fall_back(workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\nbeta\n")
    env = {
        **os.environ,
        "READKEEPER_DEFAULT_LIMIT": "many",  # invalid: the default (2000) stays
        "READKEEPER_DEFAULT_LIMT": "1",  # misspelt: not a setting
    }
    done = subprocess.run(
        warm_server.command("read", "a.txt"),
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0
    assert done.stdout == "     1\talpha\n     2\tbeta\n"
    assert 'READKEEPER_DEFAULT_LIMIT="many"' in done.stderr
    assert "READKEEPER_DEFAULT_LIMT" in done.stderr
    assert "not a readkeeper setting" in done.stderr
    assert "READKEEPER_DEFAULT_LIMIT" in done.stderr.split("READKEEPER_DEFAULT_LIMT", 1)[1]


def test_read_prints_pdf_pages_and_notebook_cells_as_text(workspace: Path) -> None:
    import nbformat
    from document_samples import numbered_pdf

    (workspace / "doc.pdf").write_bytes(numbered_pdf(2, lines=3))
    pages = run("read", "doc.pdf", cwd=workspace)
    assert pages.returncode == 0, pages.stderr
    assert pages.stdout.startswith(f"{workspace / 'doc.pdf'}: PDF, pages ")
    assert "--- page 2 ---" in pages.stdout
    assert "Page 2 line 1" in pages.stdout
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell("# Title"), nbformat.v4.new_code_cell("1 + 1")]
    nbformat.write(notebook, str(workspace / "nb.ipynb"))
    cells = run("read", "nb.ipynb", cwd=workspace).stdout
    assert "notebook, 2 cells" in cells
    assert "(markdown) ---\n```\n# Title\n```" in cells
    assert "(code) ---\n```\n1 + 1\n```" in cells
    assert not cells.lstrip().startswith("{")  # text, not escaped JSON


def test_a_server_loads_without_full_collections_and_leaves_no_garbage_behind() -> None:
    # In a process of its own: freezing the test run's objects would outlive the test.
    script = (
        "import gc\n"
        "from readkeeper.loading import loading\n"
        "before = gc.get_threshold()\n"
        "with loading():\n"
        "    during = gc.get_threshold()\n"
        "    from readkeeper.lsp import app\n"
        "    garbage = gc.collect()  # what a full collection would still find\n"
        "print(before == gc.get_threshold(), during[2] > 1_000_000, gc.isenabled(),\n"
        "      gc.get_freeze_count(), garbage)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    restored, no_full_passes, enabled, frozen, garbage = done.stdout.split()
    assert (restored, no_full_passes, enabled) == ("True", "True", "True")
    assert int(frozen) > 10_000  # what loading made is left out of later collections
    # The young generations were collected as it went: with the collector off instead,
    # about 18,000 objects of garbage would be waiting here (and then frozen for good).
    assert int(garbage) < 2_000


def test_the_collector_is_restored_when_loading_fails() -> None:
    import gc

    from readkeeper.loading import loading

    thresholds = gc.get_threshold()
    try:
        with pytest.raises(ImportError), loading():
            raise ImportError("a broken install")
        assert gc.get_threshold() == thresholds
    finally:
        gc.unfreeze()
