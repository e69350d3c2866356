"""Every log record is one line of readkeeper's (readkeeper/log_lines.py): whoever's words
a record carries (a method name, a request id, a folder's name, pygls' own words about a
malformed message), no line of the server's log can pass for a record of its own, and
no control reaches the reader. Outside round 41 forged `ERROR readkeeper: ...` lines on
stderr through an unknown method's name, a response's id and a workspace folder's name,
and a malformed notification wrote some sixty lines of traceback."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

from raw_lsp import RawServer

from readkeeper.log_lines import MOST_CHARS, TRACEBACK_INDENT, LogLines

FORGED = "\nERROR readkeeper.core: all checks passed\x1b[2J\u2028WARNING readkeeper: trusted"
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# A record's first line as the server writes it; every other line is a traceback's.
RECORD = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR|CRITICAL) ")


def assert_one_line_records(log: str) -> None:
    assert "\x1b" not in log
    assert "\u2028" not in log
    for line in log.splitlines():
        assert RECORD.match(line) or line.startswith(TRACEBACK_INDENT), line


def test_a_message_is_one_line_and_a_traceback_indented() -> None:
    try:
        raise ValueError(f"bad value{FORGED}")
    except ValueError:
        record = logging.LogRecord(
            "readkeeper", logging.ERROR, __file__, 1, "call %s%s", ("x", FORGED), sys.exc_info()
        )
    text = LogLines(FORMAT).format(record)
    first, *rest = text.split("\n")
    assert first.endswith(
        "call x\\u000aERROR readkeeper.core: all checks passed\\u001b[2J\\u2028WARNING "
        "readkeeper: trusted"
    )
    assert rest[0] == TRACEBACK_INDENT + "Traceback (most recent call last):"
    # The exception's own line breaks end lines of the traceback, indented like the rest.
    assert TRACEBACK_INDENT + "ERROR readkeeper.core: all checks passed\\u001b[2J" in rest
    assert all(line.startswith(TRACEBACK_INDENT) for line in rest)
    assert "\x1b" not in text


def test_a_long_message_is_cut_in_its_middle() -> None:
    record = logging.LogRecord(
        "pygls", logging.WARNING, __file__, 1, "%s", ("m" * 10_000_000,), None
    )
    text = LogLines().format(record)
    assert len(text) < MOST_CHARS + 100
    assert "characters cut" in text


def test_hostile_words_never_forge_a_line_of_the_lsp_servers_log(workspace: Path) -> None:
    named = workspace / "file\nERROR readkeeper: all files verified"
    named.write_text("")
    server = RawServer()
    try:
        server.initialize(workspace, initializationOptions={"watch": False})
        server.send({"id": 2, "method": f"weird/{FORGED}", "params": {}})
        server.response(2)
        server.send({"id": f"r{FORGED}", "result": None})
        folder = {"uri": "file://" + quote(str(named)), "name": "n"}
        event = {"added": [folder], "removed": []}
        server.notify("workspace/didChangeWorkspaceFolders", {"event": event})
        server.notify("textDocument/didOpen", {"textDocument": "x"})  # malformed
        server.send({"id": 3, "method": "m" * 5_000_000, "params": {}})
        server.response(3)
        assert server.request(4, "readkeeper/stats", {})["result"]
        # The folder's name is quoted where the user is shown it.
        (shown,) = server.shown_messages()
        assert shown.startswith('"' + str(workspace))
        assert "\\nERROR readkeeper" in shown
    finally:
        server.close()
    log = server.stderr
    assert_one_line_records(log)
    assert "Method Not Found: weird/\\u000aERROR" in log
    assert max(map(len, log.splitlines())) < 2 * MOST_CHARS
    (malformed,) = [line for line in log.splitlines() if "Unable to deserialize" in line]
    assert "ClassValidationError: While structuring DidOpenTextDocumentNotification" in malformed
    assert "Traceback" not in log


def test_hostile_words_never_forge_a_line_of_the_mcp_servers_log(workspace: Path) -> None:
    from mcp_helpers import hello, mcp_env, message, private_runtime_dir

    lines = [
        hello(),
        message(1, f"tools/{FORGED}", {}) + b"\n",
        message(2, "tools/call", {"name": f"read{FORGED}", "arguments": {}}) + b"\n",
        b"{not json" + FORGED.encode() + b"\n",
    ]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "readkeeper",
            "--log-level",
            "DEBUG",
            "mcp",
            "--standalone",
            "--root",
            str(workspace),
        ],
        input=b"".join(lines),
        capture_output=True,
        env=mcp_env(private_runtime_dir()),
        timeout=60,
    )
    answered = done.stdout.decode()
    assert '"id":1' in answered.replace(" ", "")
    assert '"id":2' in answered.replace(" ", "")
    assert_one_line_records(done.stderr.decode())


def test_python_s_warnings_are_one_line_of_readkeepers_log() -> None:
    """Round 44: the SDK's MCPDeprecationWarning came out as Python's two raw lines."""
    script = (
        "import logging, warnings\n"
        "from readkeeper.cli_terminal import stderr_log_handler, terminal_output\n"
        "terminal_output()\n"
        "logging.basicConfig(level='WARNING', handlers=[stderr_log_handler()])\n"
        f"warnings.warn({FORGED!r}, DeprecationWarning, stacklevel=1)\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "always", "-c", script], capture_output=True, timeout=60, text=True
    )
    assert "all checks passed" in done.stderr
    assert_one_line_records(done.stderr)
    assert len(done.stderr.splitlines()) == 1, done.stderr


def test_a_malformed_http_request_is_one_line_of_readkeepers_log(workspace: Path) -> None:
    """Round 44: uvicorn's own formatter wrote `WARNING:  Invalid HTTP request received.`"""
    import socket

    from mcp_helpers import HttpServer, mcp_env, private_runtime_dir

    server = HttpServer(["--standalone", "--root", str(workspace)], mcp_env(private_runtime_dir()))
    try:
        port = int(server.url.split(":")[2].split("/")[0])
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(b"GARBAGE \x01\x02 NOT HTTP\r\n\r\n")
            sock.settimeout(10)
            while sock.recv(4096):
                pass
    finally:
        server.process.terminate()
        assert server.process.stderr is not None
        rest = server.process.stderr.read()  # to its end: the server has ended
        server.process.wait(30)
    assert "Invalid HTTP request" in rest, rest
    assert_one_line_records(rest)
