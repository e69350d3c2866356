"""A `forget` covers every call of its session sent before it, over LSP: a grep's lines
count as seen once proved, after the grep's answer (state/later.py), and the grep runs
on the thread pool while a forget is served on the event loop as it comes. A forget
pipelined right behind a grep was answered `forgotten: 0` before the grep's proof was
even queued, and the lines it showed were recorded as seen after the forget: an edit
of them then went through where the agent, holding nothing, should have been told to
read first. The forget now waits for the calls of its session received before it, and
the session's calls received after it wait for it.

The moment is made, not timed: the grep and the forget go in one write, so the server
reads them together.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from raw_lsp import RawServer


def framed(message: dict[str, Any]) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_a_forget_right_behind_a_grep_forgets_what_the_grep_showed(workspace: Path) -> None:
    for n in range(30):
        (workspace / f"f{n}.txt").write_text(f"alpha {n}\nbeta {n}\n")
    server = RawServer()
    try:
        server.initialize(workspace)
        grep = {"pattern": "alpha", "session": "s"}
        edit = {
            "file_path": "f0.txt",
            "old_string": "alpha 0",
            "new_string": "ALPHA 0",
            "session": "s",
        }
        server.send_raw(
            framed({"id": "g", "method": "readkeeper/grep", "params": grep})
            + framed({"id": "f", "method": "readkeeper/forget", "params": {"session": "s"}})
            + framed({"id": "e", "method": "readkeeper/edit", "params": edit})
        )
        got = {}
        while len(got) < 3:
            answer = server.response()
            got[answer["id"]] = answer
        found, forgot, edited = got["g"], got["f"], got["e"]
        assert len(found["result"]["matches"]) == 30, found
        assert forgot["result"]["forgotten"] == 30, forgot
        assert edited.get("error", {}).get("data", {}).get("kind") == "not_read", edited
        assert (workspace / "f0.txt").read_text() == "alpha 0\nbeta 0\n"
        # Another session is not held behind s's forget, and s goes on after it.
        other = server.request("o", "readkeeper/grep", {"pattern": "beta", "session": "t"})
        assert len(other["result"]["matches"]) == 30, other
        again = server.request("a", "readkeeper/grep", {"pattern": "beta", "session": "s"})
        assert len(again["result"]["matches"]) == 30, again
    finally:
        server.close()
