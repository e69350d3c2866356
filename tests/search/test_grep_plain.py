"""grep reads ripgrep's plain output (`path NUL number:text`) where it is exact, and its
`--json` where it is not: either way the answer is the same, byte for byte, for paths
holding newlines, colons, digits or bytes that are not UTF-8, lines that are not UTF-8
or end in CRLF or in nothing, context, offsets, cut lines and binary files (whose
lines only `--json` shows when the file is named)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.search import blocks
from readkeeper.search import grep as grep_module


def _tree(root: Path) -> None:
    (root / "a.py").write_bytes(
        b"foo = 1\r\nbar = 2\nbaz\n\xff\xfe foo latin\nx = 'foo' + 'foo'\nlast foo"
    )
    (root / "sub").mkdir()
    (root / "sub" / "c.txt").write_text(
        "".join(f"line {n}{' foo' * (n % 4 == 0)}\n" for n in range(40))
    )
    (root / "sub" / "long.txt").write_text("foo " + "x" * 900 + "\n")
    (root / "x:1:y.txt").write_text("foo in a name with colons\n")
    (root / "2-3.txt").write_text("ok\nfoo after a dash name\n")
    os.mkdir(os.path.join(os.fsencode(root), b"d\xe9j\xe0"))
    with open(os.path.join(os.fsencode(root), b"d\xe9j\xe0", b"caf\xe9.txt"), "wb") as file:
        file.write(b"foo in a folder named in Latin-1\n")


CASES: list[dict[str, Any]] = [
    {"pattern": "foo"},
    {"pattern": "foo", "context": 2},
    {"pattern": "foo", "context": 1, "offset": 3, "max_matches": 4},
    {"pattern": "FOO", "case_sensitive": False, "glob": "*.txt"},
    {"pattern": "foo", "path": "a.py", "context": 3},
    {"pattern": "foo", "path": "sub"},
    {"pattern": "nothing here"},
    {"pattern": "x{600}"},
    {"pattern": "^\\w+ = \\d$"},
]


@pytest.mark.parametrize("tree", ["plain names", "a name with a newline", "binary files"])
def test_plain_output_answers_as_json_does(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, tree: str
) -> None:
    """In the first tree every search is read plain; in the others the search of the
    whole tree falls back to `--json`."""
    _tree(workspace)
    cases = list(CASES)
    if tree == "a name with a newline":
        (workspace / "sub" / "we\nird.txt").write_text("foo beside a newline\n")
    if tree == "binary files":  # a NUL at once (skipped), and one after 180 kB of lines
        (workspace / "small.bin").write_bytes(b"foo\nbar\x00baz foo\n")
        (workspace / "late.bin").write_bytes(b"foo line\n" * 20_000 + b"x\x00y foo\nfoo\n")
        cases += [{"pattern": "foo", "path": "small.bin"}, {"pattern": "foo", "path": "late.bin"}]
    answers: dict[bool, list[dict[str, Any]]] = {}
    for plain in (True, False):
        monkeypatch.setattr(grep_module, "PLAIN_OUTPUT", plain)
        core = Readkeeper(roots=[str(workspace)])
        core.tokens.warm_up()
        try:
            answers[plain] = [
                calls.call(core, "grep", {**case, "path": str(workspace / case.get("path", ""))})
                for case in cases
            ]
        finally:
            core.close()
    for case, by_plain, by_json in zip(cases, answers[True], answers[False], strict=True):
        assert by_plain == by_json, case
    first = answers[True][0]
    assert {m["line"] for m in first["matches"] if m["file_path"].endswith("a.py")} == {1, 4, 5, 6}
    assert any("\ufffd" in m["text"] for m in first["matches"])  # the Latin-1 line, replaced


def test_plain_output_is_refused_where_it_is_not_exact(workspace: Path) -> None:
    """A line without the NUL after its path (a path holding a newline, ripgrep's word
    on a binary file) makes the plain reading give up; a whole one is read."""
    cut = blocks.plain_blocks(str(workspace), str(workspace), [b"./we", b"ird\x001:foo"], None)
    assert cut is None
    warned = [b"./a\x001:foo", b"./late.bin: WARNING: stopped searching binary file"]
    assert blocks.plain_blocks(str(workspace), str(workspace), warned, None) is None
    whole = blocks.plain_blocks(
        str(workspace), str(workspace), [b"./a\x001:foo", b"./a\x002-ctx", b"./a\x003:foo"], None
    )
    assert whole is not None
    assert [(b.path, b.matches) for b in whole] == [(str(workspace / "a"), 2)]
    lines = list(blocks.lines(whole, 0))
    assert [(line.number, line.text, line.match) for line in lines] == [
        (1, "foo", True),
        (2, "ctx", False),
        (3, "foo", True),
    ]
