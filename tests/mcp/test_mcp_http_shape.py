"""The HTTP door of `readkeeper mcp --http` holds a body to the message bounds stdio holds
a line to (message_cap.MAX_NESTING and MAX_VALUES, tests/mcp/test_mcp_nesting.py and
test_mcp_flat_values.py): one past either is a parse error under its id, kind
`bad_params`, before the SDK parses it; one at the bound is served, and so is the next."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from mcp_raw_http import exchange, open_session, post
from test_mcp_flat_values import empties
from test_mcp_nesting import nested

from mcp_helpers import HttpServer, mcp_env, private_runtime_dir
from readkeeper.message_cap import MAX_NESTING, MAX_VALUES


def raw_post(head: list[bytes], body: bytes) -> bytes:
    return b"\r\n".join([*head, b"Content-Length: %d" % len(body)]) + b"\r\n\r\n" + body


def call(msg_id: int, extra: bytes) -> bytes:
    arguments = b'{"file_path":"a.txt","force":true,"x":' + extra + b"}"
    params = b'{"name":"read","arguments":' + arguments + b"}"
    return b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}' % (msg_id, params)


# The tools/call envelope nests 4 levels (message, params, arguments, then x's own).
CASES: list[tuple[str, bytes, str | None]] = [
    ("nested_past_the_bound", nested(MAX_NESTING - 2), "nested too deeply"),
    ("nested_at_the_bound", nested(MAX_NESTING - 3), None),
    # Each empty object counts with the comma after it: two values.
    ("values_past_the_bound", empties(MAX_VALUES // 2 + 10), "too many values"),
    ("values_at_the_bound", empties(MAX_VALUES // 2 - 20), None),
]


@contextlib.contextmanager
def http_session(workspace: Path) -> Iterator[tuple[tuple[str, int], list[bytes]]]:
    """`readkeeper mcp --http` on `workspace` with a session open: its address, and the
    head of a POST in that session without its length (`raw_post` adds it)."""
    server = HttpServer(["--standalone", "--root", str(workspace)], mcp_env(private_runtime_dir()))
    try:
        split = urlsplit(server.url)
        address = (split.hostname or "127.0.0.1", split.port or 80)
        session = open_session(address)
        head = post(*address, {}, session).split(b"\r\n\r\n")[0].split(b"\r\n")
        yield address, [row for row in head if not row.lower().startswith(b"content-length")]
    finally:
        server.stop()


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory) -> Any:
    workspace = tmp_path_factory.mktemp("ws")
    (workspace / "a.txt").write_text("hi\n")
    with http_session(workspace) as served:
        yield served


@pytest.mark.parametrize(("name", "extra", "refused"), CASES, ids=[c[0] for c in CASES])
def test_an_http_body_is_held_to_the_message_bounds(
    http: Any, name: str, extra: bytes, refused: str | None
) -> None:
    address, head = http
    status, _, body = exchange(address, raw_post(head, call(7, extra)))
    if refused is not None:
        assert status == 400, body[:300]
        error = json.loads(body)
        assert error["id"] == 7
        assert error["error"]["code"] == -32700
        assert error["error"]["data"]["kind"] == "bad_params"
        assert refused in error["error"]["message"]
    else:  # served: the unknown argument is refused by name, as a tool's error
        assert status == 200, body[:300]
        assert b"no parameter x" in body, body[:300]
    status, _, body = exchange(address, raw_post(head, call(8, b"1")))
    assert status == 200
    assert b"no parameter x" in body
