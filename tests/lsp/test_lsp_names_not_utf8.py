"""A file whose name is not UTF-8 is named in every LSP message as readkeeper names it
elsewhere (the escape `\\udcff`), in valid Unicode: a lone surrogate written as JSON's
`\\udcff` escape (what the standard library writes) is refused by strict decoders,
Neovim's `vim.json.decode` among them, which drops the message."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from raw_lsp import RawServer

SHOWN = "\\udcff\\udcfe.txt"


@pytest.fixture
def raw(workspace: Path) -> Iterator[RawServer]:
    (workspace / "ok.txt").write_text("hello\n")
    with open(os.path.join(os.fsencode(workspace), b"\xff\xfe.txt"), "wb") as file:
        file.write(b"needle\n")
    server = RawServer()
    server.initialize(workspace)
    server.notify("initialized", {})
    yield server
    server.close()


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("readkeeper/glob", {"pattern": "*"}),
        ("readkeeper/list", {"path": "."}),
        ("readkeeper/grep", {"pattern": "needle", "output": "files"}),
        ("readkeeper/grep", {"pattern": "needle"}),
        ("readkeeper/read", {"file_path": "\xfe.txt"}),
    ],
)
def test_every_message_naming_a_file_not_utf8_is_valid_unicode(
    raw: RawServer, method: str, params: dict[str, Any]
) -> None:
    raw.request(2, method, params)
    body = raw.frame_of(2).partition(b"\r\n\r\n")[2]
    orjson.loads(body)  # refuses a lone surrogate, as Neovim's decoder does
    assert json.dumps(SHOWN)[1:-1].encode() in body, body  # the name's escape, as text


def test_names_alike_as_escape_text_are_named_apart_and_each_read_back(workspace: Path) -> None:
    """A name holding the byte ff then the text "\\udcfe" and one holding the bytes ff fe
    are listed apart (a backslash of a name holding such a byte is doubled), and each
    listed name, sent back, reads its own file."""
    names = {b"\xff\xfe.txt": "ff fe bytes", b"\xff\\udcfe.txt": "ff byte, then text"}
    for name, content in names.items():
        with open(os.path.join(os.fsencode(workspace), name), "w") as file:
            file.write(content + "\n")
    server = RawServer()
    try:
        server.initialize(workspace)
        server.notify("initialized", {})
        server.request(2, "readkeeper/glob", {"pattern": "*.txt"})
        paths = orjson.loads(server.frame_of(2).partition(b"\r\n\r\n")[2])["result"]["paths"]
        assert len(set(paths)) == 2, paths
        read = {}
        for id_, path in enumerate(paths, 3):
            reply = server.request(id_, "readkeeper/read", {"file_path": path, "force": True})
            read[path] = reply["result"]["file"]["content"].split("\t", 1)[1]
        assert sorted(read.values()) == sorted(names.values())
    finally:
        server.close()
