"""Fuzzed frames against the real server over stdio: after any bad frame, a well-formed
request is answered (or the server has exited non-zero with the reason on stderr).

One server serves all examples (it is restarted only if it exits), so the test stays
well under half a minute.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from raw_lsp import RawServer, ServerGone

PROBE_WAIT_S = 5.0


class Shared:
    """The server the examples share, and the next probe id (above any fuzzed id)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.next_id = 1_000_000
        self.restarts = 0
        self.server = self._start()

    def _start(self) -> RawServer:
        server = RawServer()
        server.initialize(self.root)
        return server

    def ensure_running(self) -> RawServer:
        if not self.server.alive:
            code = self.server.wait_exit()
            assert code != 0, "exited with 0 without shutdown and exit"
            assert "Closing the connection" in self.server.stderr, self.server.stderr
            self.server.close()
            self.server = self._start()
            self.restarts += 1
        return self.server

    def probe_id(self) -> int:
        self.next_id += 1
        return self.next_id


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shared]:
    root = tmp_path_factory.mktemp("fuzz").resolve()
    (root / "ok.txt").write_text("ok\n")
    holder = Shared(root)
    yield holder
    holder.server.close()


def request(id_: int, method: str, params: object) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}).encode()


def framed(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


bodies = st.one_of(
    st.builds(
        request,
        st.integers(min_value=0, max_value=999),
        st.sampled_from(["readkeeper/stats", "readkeeper/read", "textDocument/hover", "nope/x"]),
        st.one_of(
            st.none(), st.integers(), st.dictionaries(st.text(max_size=8), st.text(max_size=8))
        ),
    ),
    st.binary(max_size=120),
    st.sampled_from([1_000, 100_000]).map(lambda depth: b'{"id":1,"params":' + b"[" * depth),
)


@st.composite
def bad_frames(draw: st.DrawFn) -> bytes:
    body = draw(bodies)
    # Mutate: cut it, or flip a byte (a non-UTF-8 byte more often than not).
    mutation = draw(st.sampled_from(["none", "cut", "flip"]))
    if mutation == "cut" and body:
        body = body[: draw(st.integers(min_value=0, max_value=len(body) - 1))]
    elif mutation == "flip" and body:
        at = draw(st.integers(min_value=0, max_value=len(body) - 1))
        body = (
            body[:at]
            + bytes([draw(st.sampled_from([0xFF, 0x00, 0x0D, 0x0A, 0x7B]))])
            + body[at + 1 :]
        )
    length = len(body) + draw(st.sampled_from([0, 0, -1, 1, -20, 300]))
    header = draw(
        st.sampled_from(
            [
                b"Content-Length: %d\r\n\r\n" % length,
                b"Content-Length: %d\n\n" % length,
                b"Content-Length: -%d\r\n\r\n" % length,
                b"Content-Length: 1000000000000\r\n\r\n",
                b"Content-Length: %d\r\n\r\n" % 2**70,
                b"Content-Type: application/vscode-jsonrpc\r\n\r\n",
                b"Content-Length: %d\r\n" % length,
                b"",
            ]
        )
    )
    junk = draw(
        st.one_of(st.just(b""), st.binary(max_size=16), st.sampled_from([b"\r\n", b"Content-"]))
    )
    return junk + header + body


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(frames=st.lists(bad_frames(), min_size=1, max_size=3))
def test_a_good_request_after_bad_frames_is_answered(shared: Shared, frames: list[bytes]) -> None:
    server = shared.ensure_running()
    first, second = shared.probe_id(), shared.probe_id()
    # The first probe's header may be swallowed by what precedes it (a frame's
    # declared body), which no reader can undo; the second one's never is.
    data = b"".join(frames) + framed(request(first, "readkeeper/stats", {}))
    data += framed(request(second, "readkeeper/stats", {}))
    try:
        server.send_raw(data)
        reply = server.response(second, timeout=PROBE_WAIT_S)
    except (ServerGone, BrokenPipeError):
        shared.ensure_running()  # asserts it exited non-zero with the reason
        return
    assert "result" in reply, reply
    to_first = [r for r in server.seen_responses if r.get("id") == first]
    assert len(to_first) <= 1
    server.seen_responses.clear()
