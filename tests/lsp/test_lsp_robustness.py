"""The server survives what a buggy client or a bug of its own throws at it: every bad
frame is answered (when it has an id) or logged, and the next good request is served."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from lsprotocol import types
from raw_lsp import RawServer

from conftest import Session
from readkeeper.client import JsonRpcException
from readkeeper.errors import ReadkeeperError
from readkeeper.lsp.framing import MAX_BODY
from readkeeper.lsp.transport import STALL_TIMEOUT_S


@pytest.fixture
def raw(workspace: Path) -> Iterator[RawServer]:
    server = RawServer()
    server.initialize(workspace)
    (workspace / "ok.txt").write_text("still serving\n")
    yield server
    server.close()


def assert_still_serving(raw: RawServer, id_: int) -> None:
    reply = raw.request(id_, "readkeeper/read", {"file_path": "ok.txt", "force": True})
    assert reply["result"]["file"]["content"] == "     1\tstill serving", reply


def framed(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_malformed_json_is_answered_with_a_parse_error(raw: RawServer) -> None:
    raw.send_bytes(b'{"jsonrpc": "2.0", "id": 7, "method": "readkeeper/read", "params": {')
    reply = raw.response()
    assert reply["id"] == 7  # recovered: the request gets its one reply
    assert reply["error"]["code"] == -32700
    assert reply["error"]["data"]["kind"] == "bad_params"
    assert_still_serving(raw, 8)


def test_json_that_is_not_a_message_is_an_invalid_request(raw: RawServer) -> None:
    raw.send_bytes(b"[1, 2, 3]")
    reply = raw.response()
    assert reply["id"] is None
    assert reply["error"]["code"] == -32600
    assert_still_serving(raw, 9)


def test_unknown_method(raw: RawServer) -> None:
    reply = raw.request(3, "readkeeper/teleport", {})
    assert reply["id"] == 3
    assert reply["error"]["code"] == -32601
    assert reply["error"]["data"]["kind"] == "unsupported"
    assert_still_serving(raw, 4)


@pytest.mark.parametrize("method", ["$/nope", "nonexistent/method", "readkeeper/teleport"])
def test_unknown_method_without_params(raw: RawServer, method: str) -> None:
    # JSON-RPC lets a request leave `params` out: an unknown method is then still a
    # method not found, not the server's fault.
    raw.send({"jsonrpc": "2.0", "id": 3, "method": method})
    reply = raw.response()
    assert reply["id"] == 3
    assert reply["error"]["code"] == -32601, reply
    assert reply["error"]["data"]["kind"] == "unsupported"
    assert_still_serving(raw, 4)


@pytest.mark.parametrize("method", ["textDocument/hover", "readkeeper/read"])
def test_method_without_the_params_it_needs(raw: RawServer, method: str) -> None:
    raw.send({"jsonrpc": "2.0", "id": 5, "method": method})
    reply = raw.response()
    assert reply["id"] == 5
    assert reply["error"]["data"]["kind"] == "bad_params", reply
    assert_still_serving(raw, 6)


def test_lsp_request_with_params_of_the_wrong_shape(raw: RawServer) -> None:
    reply = raw.request(5, "textDocument/hover", {"textDocument": 12})
    assert reply["id"] == 5
    assert reply["error"]["data"]["kind"] == "bad_params"
    assert_still_serving(raw, 6)


# --- bad frames, as measured on issue 10 -------------------------------------------------

REQUEST = b'{"jsonrpc":"2.0","id":7,"method":"readkeeper/stats","params":{}}'
DEEP = b"[" * 100_000 + b"]" * 100_000

# Each bad frame carries request 7; the reply it gets (an error code, "result", or None
# for no reply under id 7: an id that is not one is answered under JSON-RPC's null id).
BAD_FRAMES: dict[str, tuple[bytes, int | str | None]] = {
    "content_length_too_short": (b"Content-Length: 50\r\n\r\n" + REQUEST, -32700),
    "content_length_too_long": (b"Content-Length: 900\r\n\r\n" + REQUEST, -32700),
    "content_length_1e12": (b"Content-Length: 1000000000000\r\n\r\n" + REQUEST, -32600),
    "content_length_2e70": (b"Content-Length: %d\r\n\r\n" % 2**70 + REQUEST, -32600),
    "content_length_negative": (b"Content-Length: -5\r\n\r\n" + REQUEST, -32700),
    "content_length_not_a_number": (b"Content-Length: 5x\r\n\r\n" + REQUEST, -32700),
    "content_length_missing": (
        b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + REQUEST,
        -32700,
    ),
    "lf_only_headers": (b"Content-Length: %d\n\n" % len(REQUEST) + REQUEST, -32700),
    "content_length_with_a_nul": (b"Content-Length: 4\x00\r\n\r\n" + REQUEST, -32700),
    "junk_before_header": (b"hello there\r\n" + framed(REQUEST), "result"),
    "junk_glued_to_header": (b"\x00\xffjunk" + framed(REQUEST), "result"),
    "not_utf8": (framed(REQUEST[:-2] + b'"file_path":"\xff\xfe"}}'), -32700),
    "params_nested_100k_deep": (framed(REQUEST[:-3] + DEEP + b"}"), -32700),
    # Python's parser reads 900 levels; the walks of the params after it did not
    # (`internal`: RecursionError).
    "a_field_nested_900_deep": (
        framed(REQUEST[:-3] + b'{"session":' + b"[" * 900 + b"]" * 900 + b"}}"),
        -32700,
    ),
    "a_field_nested_past_the_bound": (
        framed(REQUEST[:-3] + b'{"x":' + b"[" * 63 + b"]" * 63 + b"}}"),
        -32700,
    ),
    "no_method": (framed(b'{"jsonrpc":"2.0","id":7,"params":{}}'), -32600),
    "jsonrpc_1_0": (framed(REQUEST.replace(b'"2.0"', b'"1.0"')), -32600),
    "jsonrpc_missing": (framed(REQUEST.replace(b'"jsonrpc":"2.0",', b"")), -32600),
    "id_is_an_object": (framed(REQUEST.replace(b'"id":7', b'"id":{"a":7}')), None),
}


@pytest.fixture(scope="module")
def shared_raw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawServer]:
    """One server for every bad frame (a frame that wedged it fails the ones after)."""
    root = tmp_path_factory.mktemp("bad-frames").resolve()
    (root / "ok.txt").write_text("still serving\n")
    server = RawServer()
    server.initialize(root)
    yield server
    server.close()


@pytest.mark.parametrize("name", BAD_FRAMES)
def test_a_bad_frame_is_answered_and_the_next_request_served(
    shared_raw: RawServer, name: str
) -> None:
    raw = shared_raw
    raw.seen_responses.clear()
    frame, expected = BAD_FRAMES[name]
    raw.send_raw(frame)
    assert_still_serving(raw, 8)
    raw.request(9, "readkeeper/stats", {})  # a reply still due to request 7 is in by now
    answered = [r for r in raw.seen_responses if r.get("id") == 7]
    if expected is None:
        assert answered == []
    else:
        assert len(answered) == 1, answered
        (reply,) = answered
        if expected == "result":
            assert "result" in reply, reply
        else:
            assert reply["error"]["code"] == expected, reply
            assert reply["error"]["data"]["kind"] in ("bad_params", "too_large"), reply
            assert reply["error"]["message"]


def test_too_long_content_length_on_the_last_message_is_answered_after_a_stall(
    raw: RawServer,
) -> None:
    """Nothing comes after it, so no next header shows where it ended: after a while
    without bytes, the server gives up on it and answers its id."""
    raw.send_raw(b"Content-Length: 900\r\n\r\n" + REQUEST)
    reply = raw.response(7, timeout=STALL_TIMEOUT_S + 5)
    assert reply["error"]["code"] == -32700
    assert "900" in reply["error"]["message"]
    assert_still_serving(raw, 8)


def test_a_message_over_the_size_limit_is_skipped_and_answered(raw: RawServer) -> None:
    body = b'{"jsonrpc":"2.0","id":7,"method":"readkeeper/write","params":{"content":"'
    body += b"x" * (MAX_BODY + 10) + b'","file_path":"big.txt"}}'
    raw.send_bytes(body)
    reply = raw.response(7, timeout=30)
    assert reply["error"]["code"] == -32600
    assert reply["error"]["data"]["kind"] == "too_large"
    assert_still_serving(raw, 8)


def test_end_of_input_in_the_middle_of_a_message_exits_non_zero_with_the_reason(
    raw: RawServer,
) -> None:
    raw.send_raw(b'Content-Length: 500\r\n\r\n{"jsonrpc":')
    assert raw.process.stdin is not None
    raw.process.stdin.close()
    assert raw.wait_exit() != 0
    assert "in the middle of a message" in raw.stderr


def test_a_stream_of_junk_exits_non_zero_with_the_reason(raw: RawServer) -> None:
    with contextlib.suppress(BrokenPipeError):  # it gave up before the end: as it should
        raw.send_raw(b"not lsp at all " * (MAX_BODY // 15 + 100_000))
    assert raw.wait_exit(30) != 0
    assert "without a Content-Length header" in raw.stderr


# --- faults of our own --------------------------------------------------------------------


def test_an_exception_inside_a_handler_is_an_internal_error(workspace: Path) -> None:
    # The real server, with one fault injected into the core: a bug of our own.
    inject = (
        "import readkeeper.core as core\n"
        "def broken(self, params): raise RuntimeError('injected fault')\n"
        "core.Readkeeper.stats_for = broken\n"
        "from readkeeper.cli import main\n"
        "raise SystemExit(main(['serve']))\n"
    )
    server = RawServer(sys.executable, "-c", inject)
    try:
        server.initialize(workspace)
        (workspace / "ok.txt").write_text("still serving\n")
        error = server.request(2, "readkeeper/stats", {})["error"]
        assert error["code"] == -32603
        assert error["data"]["kind"] == "internal"
        assert 'RuntimeError: "injected fault"' in error["data"]["reason"]
        assert "Traceback" not in json.dumps(error)  # the log has it, not the reply
        assert_still_serving(server, 3)
    finally:
        server.close()
    assert "Traceback" in server.stderr
    assert "injected fault" in server.stderr


def test_a_fault_s_words_are_one_line_of_its_reason(workspace: Path) -> None:
    # A fault's message may hold anyone's text (a file's, the client's): one line.
    inject = (
        "import readkeeper.core as core\n"
        "def broken(self, params): raise RuntimeError('boom\\nkind: not_read\\u202e')\n"
        "core.Readkeeper.stats_for = broken\n"
        "from readkeeper.cli import main\n"
        "raise SystemExit(main(['serve']))\n"
    )
    server = RawServer(sys.executable, "-c", inject)
    try:
        server.initialize(workspace)
        error = server.request(2, "readkeeper/stats", {})["error"]
        # One quoted string (errors.library_words): the fault's words never pass for ours.
        assert error["data"]["reason"] == 'RuntimeError: "boom\\nkind: not_read\\u202e"'
        assert "\n" not in error["message"]
        assert "\u202e" not in error["message"]
    finally:
        server.close()


# --- URIs as editors send them ------------------------------------------------------------

AWKWARD_NAMES = [
    "my file.txt",
    "café.txt",
    "a#b.txt",
    "c+d.txt",
    "100%.txt",
    "me@host.txt",
    "[x].txt",
]


def did_change(lsp: Session, uri: str, text: str, version: int) -> None:
    lsp.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


@pytest.mark.parametrize("name", AWKWARD_NAMES)
async def test_unsaved_buffer_of_a_percent_encoded_uri(
    lsp: Session, workspace: Path, name: str
) -> None:
    path = workspace / name
    path.write_text("saved\n")
    uri = lsp.open_document(path, "saved\n")  # pathlib percent-encodes: my%20file.txt
    assert "%" in uri
    await lsp.read(path)
    did_change(lsp, uri, "saved\ntyped, not saved\n", 2)

    file = (await lsp.read(path))["file"]
    assert file["unsaved"] is True
    assert file["content"].endswith("typed, not saved")
    error = await lsp.error(
        "readkeeper/edit", {"file_path": str(path), "old_string": "saved", "new_string": "x"}
    )
    assert error.data["kind"] == "dirty_buffer"
    assert path.read_text() == "saved\n"


async def test_unsaved_buffer_of_a_localhost_uri(lsp: Session, workspace: Path) -> None:
    path = workspace / "my file.txt"
    path.write_text("saved\n")
    uri = "file://localhost" + path.as_uri()[len("file://") :]
    lsp.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="plaintext", version=1, text="saved\n"
            )
        )
    )
    did_change(lsp, uri, "saved\nunsaved\n", 2)
    file = (await lsp.read(path))["file"]
    assert file["unsaved"] is True
    error = await lsp.error(
        "readkeeper/edit", {"file_path": str(path), "old_string": "saved\n", "new_string": "x\n"}
    )
    assert error.data["kind"] == "dirty_buffer"
    assert path.read_text() == "saved\n"


# --- the handler wrapper and the URI key, in-process ---------------------------------------


def test_the_request_wrapper_maps_every_exception() -> None:
    from readkeeper.lsp.app import server
    from readkeeper.lsp.methods import answering
    from readkeeper.lsp.server import ReadkeeperServer

    faults: dict[str, Exception] = {
        "test/os-error": OSError(22, "Invalid argument"),
        "test/refusal": ReadkeeperError("stale", "changed since read", file_path="/x"),
    }
    for method, fault in faults.items():

        def broken(
            ls: ReadkeeperServer, method: str, raw: object, fault: Exception = fault
        ) -> None:
            raise fault

        async def broken_async(
            ls: ReadkeeperServer, method: str, raw: object, fault: Exception = fault
        ) -> None:
            raise fault

        server.feature(method)(answering(method, broken))
        server.feature(method + "/async")(answering(method + "/async", broken_async))

    for suffix in ("", "/async"):
        features = server.protocol.fm.features

        with pytest.raises(JsonRpcException) as caught:
            asyncio.run(call(features["test/os-error" + suffix]))
        assert caught.value.code == -32603
        assert caught.value.data == {
            "kind": "internal",
            # A fault's words, as a library's are shown: one quoted string.
            "reason": 'OSError: "[Errno 22] Invalid argument"',
        }
        assert "Traceback" not in caught.value.message

        with pytest.raises(JsonRpcException) as caught:
            asyncio.run(call(features["test/refusal" + suffix]))
        assert caught.value.code == -32803
        assert caught.value.data == {"kind": "stale", "file_path": "/x"}


def test_every_method_of_calls_is_served_over_lsp() -> None:
    from readkeeper import calls
    from readkeeper.lsp.methods import REQUESTS

    assert set(REQUESTS) == {f"readkeeper/{name}" for name in calls.METHODS}


async def call(handler: Any) -> Any:
    result = handler({})
    return await result if inspect.isawaitable(result) else result


def test_errors_pygls_makes_get_a_kind_and_no_traceback() -> None:
    from readkeeper.lsp.rpc_errors import with_kind

    internal = with_kind(types.ResponseError(-32603, "KeyError: 'x'", {"traceback": ["..."]}))
    assert internal.data == {"kind": "internal", "reason": "KeyError: 'x'"}
    assert with_kind(types.ResponseError(-32601, "Method Not Found: x")).data == {
        "kind": "unsupported"
    }
    ours = types.ResponseError(-32803, "stale", {"kind": "stale"})
    assert with_kind(ours) is ours


def test_uri_path(tmp_path: Path) -> None:
    from readkeeper.files.paths import uri_path

    real = tmp_path.resolve()
    (real / "my file#1.txt").write_text("")
    (real / "link").symlink_to(real / "my file#1.txt")
    assert uri_path((real / "my file#1.txt").as_uri()) == str(real / "my file#1.txt")
    assert uri_path("file://localhost" + quote(str(real / "link"))) == str(real / "my file#1.txt")
    assert uri_path("FILE://LOCALHOST/tmp/caf%C3%A9") == os.path.realpath("/tmp/café")
    assert uri_path("file:///tmp/%FF") == os.path.realpath(os.fsdecode(b"/tmp/\xff"))
    assert uri_path("file:///tmp/a;b") == os.path.realpath("/tmp/a;b")
    for other in ("untitled:Untitled-1", "file://server/share/x", "file:///a%00b", "file:relative"):
        assert uri_path(other) is None, other


async def test_a_server_that_logs_a_lot_keeps_answering_the_client(lsp: Session) -> None:
    # Each invalid diagnostics notification logs a warning on the server's stderr; far
    # more than a pipe holds (64 KiB) must not block the server on its own log.
    for _ in range(2_000):
        lsp.client.protocol.notify(
            "readkeeper/didChangeDiagnostics", {"items": [{"nope": "x" * 200}]}
        )
    stats = await asyncio.wait_for(lsp.client.request("readkeeper/stats", {}), 30)
    assert "files_in_read_state" in stats
    assert len(lsp.client.server_stderr) > 1 << 16


@pytest.mark.parametrize("name", ["x" * 600_000, "\x01" * 200_000, "$/" + "y" * 600_000])
def test_an_unknown_method_is_not_echoed_whole(raw: RawServer, name: str) -> None:
    # pygls' "Method Not Found" named the method whole: 600,000 characters came back as
    # 600,109 bytes, 5,000,000 controls as 30 MB (round 39).
    reply = raw.request(6, name, {})
    assert reply["error"]["code"] == -32601, str(reply)[:300]
    assert len(json.dumps(reply)) < 8_000, len(json.dumps(reply))
    assert " characters cut] " in reply["error"]["message"]
    assert_still_serving(raw, 7)


def test_an_unknown_command_is_not_echoed_whole_to_the_editor_s_log(raw: RawServer) -> None:
    # The reply was cut, but pygls' log of the unknown command, mirrored to the editor
    # (window/logMessage), carried the 2,000,000-character name whole (round 40).
    raw.request(8, "workspace/executeCommand", {"command": "Q" * 600_000, "arguments": []})
    assert_still_serving(raw, 9)  # every notification before its answer is kept
    logged = [n for n in raw.notifications if n.get("method") == "window/logMessage"]
    assert all(len(json.dumps(n)) < 10_000 for n in logged), [len(json.dumps(n)) for n in logged]
