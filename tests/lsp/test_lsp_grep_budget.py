"""readkeeper/grep's answer as the LSP sends it (its JSON, each name a JSON string with
its controls and bytes not UTF-8 escaped) keeps to `max_tokens` in every output mode,
and a page the budget cut says so and names the offset of the rest. Before, 120 files
of 255-byte hostile names sent several times the cap (attack round 20, finding 1)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from raw_lsp import RawServer

from helpers import tiktoken_count

CAP = 4000
ALLOWANCE = 300  # the note and the next call: a fixed size, whatever the names
FILES = 120
KINDS = {
    "controls": lambda i: b"%04d" % i + b'\x01\x1b "\\' * 40 + b".txt",
    "not_utf8": lambda i: b"%04d" % i + b"\xff\xfe" * 120 + b".txt",
}


@pytest.fixture(params=sorted(KINDS))
def raw(workspace: Path, request: pytest.FixtureRequest) -> Iterator[RawServer]:
    root = os.fsencode(workspace)
    for index in range(FILES):
        with open(os.path.join(root, KINDS[request.param](index)), "wb") as file:
            file.write(b"needle one\nhay\nneedle two\n")
    server = RawServer(env={"READKEEPER_MAX_TOKENS": str(CAP)})
    server.initialize(workspace)
    yield server
    server.close()


@pytest.mark.parametrize("output", ["matches", "files", "counts"])
def test_lsp_grep_as_sent_keeps_to_max_tokens(raw: RawServer, output: str) -> None:
    params = {"pattern": "needle", "output": output, "max_matches": 2000}
    raw.request(2, "readkeeper/grep", params)
    body = raw.frame_of(2).partition(b"\r\n\r\n")[2]
    assert tiktoken_count(body.decode()) <= CAP + ALLOWANCE
    result = orjson.loads(body)["result"]
    assert "cut by the token cap (max_tokens)" in result["note"]
    assert result["next"]["offset"] > 0
