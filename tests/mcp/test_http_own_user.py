"""`readkeeper mcp --http` serves only the user who started it: a request from another
local uid gets 403 with a JSON-RPC error of kind `refused` (before the SDK sees it, so
it reads and writes nothing), and the same request from our own uid is served.
"""

from __future__ import annotations

import http.client
import json
import os
from pathlib import Path
from urllib.parse import urlsplit

from mcp import Client

from helpers import NOBODY, needs_root, run_as_nobody
from mcp_helpers import HttpServer, mcp_env, private_runtime_dir, text_of

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}


def post(url: str, message: dict[str, object]) -> tuple[int, bytes]:
    """POST one JSON-RPC message: the status and the body."""
    parts = urlsplit(url)
    assert parts.hostname is not None
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        connection.request("POST", parts.path, json.dumps(message), HEADERS)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


@needs_root
async def test_another_uid_gets_403_and_its_own_user_is_served(workspace: Path) -> None:
    (workspace / "s.txt").write_text("the user's secret\n")
    server = HttpServer(["--root", str(workspace), "--standalone"], mcp_env(private_runtime_dir()))
    write = {"name": "write", "arguments": {"file_path": "planted.txt", "content": "x\n"}}
    try:

        def as_nobody() -> bytes:
            answers = [
                post(server.url, INITIALIZE),
                post(
                    server.url, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": write}
                ),
            ]
            return json.dumps([[status, body.decode()] for status, body in answers]).encode()

        answers = json.loads(run_as_nobody(as_nobody))
        for status, body in answers:
            assert status == 403
            error = json.loads(body)["error"]
            assert error["data"]["kind"] == "refused"
            assert f"uid {NOBODY}" in error["message"]
            assert "readkeeper mcp --http" in error["message"]  # what to do instead
        assert not (workspace / "planted.txt").exists()
        status, _ = post(server.url, INITIALIZE)
        assert status == 200
        async with Client(server.url, read_timeout_seconds=60) as client:
            read = await client.call_tool("read", {"file_path": "s.txt"})
            assert "the user's secret" in text_of(read)
        server.process.terminate()
        _, log = server.process.communicate(timeout=30)
        refusals = [line for line in log.splitlines() if "Refused" in line]
        assert len(refusals) == 2  # one line per refused request, naming why
        assert f"not as uid {os.geteuid()}" in refusals[0]
    finally:
        server.stop()


def post_as_a_web_page(url: str, headers: dict[str, str]) -> int:
    """The status of an initialize POST sent with a web page's `headers`."""
    parts = urlsplit(url)
    assert parts.hostname is not None
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        connection.putrequest("POST", parts.path, skip_host="Host" in headers)
        body = json.dumps(INITIALIZE).encode()
        for name, value in {**HEADERS, **headers, "Content-Length": str(len(body))}.items():
            connection.putheader(name, value)
        connection.endheaders(body)
        return connection.getresponse().status
    finally:
        connection.close()


async def test_a_web_pages_request_is_refused_though_it_comes_from_our_user(
    workspace: Path,
) -> None:
    # Our own user's browser: the uid check passes, so Host and Origin must stop it.
    server = HttpServer(["--root", str(workspace), "--standalone"], mcp_env(private_runtime_dir()))
    try:
        port = urlsplit(server.url).port
        rebound = {"Host": f"attacker.example:{port}"}  # DNS rebinding: a name of theirs
        cross_site = {"Origin": "http://evil.example"}
        simple = {"Content-Type": "text/plain;charset=UTF-8", "Origin": "http://evil.example"}
        for headers in (rebound, cross_site, simple):
            assert post_as_a_web_page(server.url, headers) >= 400, headers
        assert post_as_a_web_page(server.url, {}) == 200
    finally:
        server.stop()
