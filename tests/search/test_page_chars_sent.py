"""A page of names keeps to its characters as JSON writes them as shown, not as the
names are (round 44: names of `"` are written `\\\\\\"` once quoted and sent, 399,199
characters as shown were 795,815 sent; names not UTF-8, each byte `\\\\udcff`, made grep
answers of 2.5 MB at a token cap of 1,000,000)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from readkeeper import calls, quoting
from readkeeper.core import Readkeeper
from readkeeper.read.room import LINES_MAX_CHARS
from readkeeper.search.priced import PAGE_MAX_CHARS


def _tree(root: Path, part: bytes) -> None:
    """1,100 files of long names made of `part` in folders of such names (each a line
    `x`): over 400,000 characters of names whichever way they are counted."""
    folder = os.fsencode(root)
    for _ in range(12):
        folder = os.path.join(folder, part * 250)
    os.makedirs(folder)
    for index in range(1_100):
        with open(os.path.join(folder, part * 240 + str(index).encode()), "w") as f:
            f.write("x\n")


def _sent(text: str) -> int:
    return quoting.sent_chars(quoting.name(text))


@pytest.mark.parametrize("part", [b'"', b"\\", b"\xff"], ids=["quote", "backslash", "not-utf8"])
def test_pages_of_names_keep_to_their_characters_as_sent(workspace: Path, part: bytes) -> None:
    _tree(workspace, part)
    core = Readkeeper(roots=[str(workspace)], client_settings={"max_tokens": 1_000_000})
    try:
        found = calls.call(core, "glob", {"pattern": "**"})
        assert found["paths"]
        assert found["partial"] is True
        assert sum(_sent(path) for path in found["paths"]) <= PAGE_MAX_CHARS
        matched = calls.call(core, "grep", {"pattern": "x"})
        shown = matched["matches"]
        assert shown
        assert matched["partial"] is True
        sent = sum(_sent(m["file_path"]) + quoting.sent_chars(m["text"]) for m in shown)
        assert sent <= LINES_MAX_CHARS
    finally:
        core.close()
