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
from readkeeper.errors import ReadkeeperError
from readkeeper.search import blocks, rg
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
    {"pattern": "bar = 2\\nbaz", "multiline": True},  # --json alone, as ever
    {"pattern": "= 2\\n"},  # a line break without multiline: refused alike
]


TREES = ["plain names", "a name with a newline", "binary files", "a binary file's words"]


@pytest.mark.parametrize("tree", TREES)
def test_plain_output_answers_as_json_does(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, tree: str
) -> None:
    """In the first tree every search is read plain; in the others the search of the
    whole tree falls back to `--json`."""
    _tree(workspace)
    cases = list(CASES)
    runs: list[list[str]] = []  # each search's ripgrep runs, by their first flag

    def run(cwd: str, flags: list[str], **kwargs: Any) -> rg.Run:
        runs[-1].append(flags[0])
        return real_run(cwd, flags, **kwargs)

    real_run = rg.run
    monkeypatch.setattr(rg, "run", run)
    if tree == "a name with a newline":
        (workspace / "sub" / "we\nird.txt").write_text("foo beside a newline\n")
    if tree == "binary files":  # a NUL at once (skipped), and one after 180 kB of lines
        (workspace / "small.bin").write_bytes(b"foo\nbar\x00baz foo\n")
        (workspace / "late.bin").write_bytes(b"foo line\n" * 20_000 + b"x\x00y foo\nfoo\n")
        cases += [{"pattern": "foo", "path": "small.bin"}, {"pattern": "foo", "path": "late.bin"}]
        # ripgrep's word on it begins "1-2/late.bin: ", as a context line of line 1 would
        (workspace / "1-2").mkdir()
        (workspace / "1-2" / "late.bin").write_bytes(b"foo\n" + b"bar\n" * 50_000 + b"\x00foo\n")
        cases += [{"pattern": "foo", "path": "1-2"}]
    if tree == "a binary file's words":  # the last line of a file, as ripgrep's word is
        (workspace / "words.txt").write_text('foo\nfoo (found "\\0" byte around offset 12)\n')
    answers: dict[bool, list[dict[str, Any]]] = {}
    for plain in (True, False):
        monkeypatch.setattr(grep_module, "PLAIN_OUTPUT", plain)
        core = Readkeeper(roots=[str(workspace)])
        core.tokens.warm_up()
        try:
            answers[plain] = []
            for case in cases:
                runs.append([])
                path = str(workspace / case.get("path", ""))
                try:
                    answers[plain].append(calls.call(core, "grep", {**case, "path": path}))
                except ReadkeeperError as error:
                    answers[plain].append({"error": (error.kind, str(error))})
        finally:
            core.close()
    for case, by_plain, by_json in zip(cases, answers[True], answers[False], strict=True):
        assert by_plain == by_json, case
    plain_runs = runs[: len(cases)]
    if tree == "plain names":
        first = ["--json" if case.get("multiline") else blocks.PLAIN_FLAGS[0] for case in cases]
        assert plain_runs == [[flag] for flag in first], plain_runs
    else:
        assert plain_runs[0] == [blocks.PLAIN_FLAGS[0], "--json"], plain_runs
    first = answers[True][0]
    assert {m["line"] for m in first["matches"] if m["file_path"].endswith("a.py")} == {1, 4, 5, 6}
    assert any("\ufffd" in m["text"] for m in first["matches"])  # the Latin-1 line, replaced


def test_plain_output_is_refused_where_it_is_not_exact(workspace: Path) -> None:
    """A file's first line without the NUL after its path (a path holding a newline,
    ripgrep's word on a binary file that showed no line) or a last line that is that
    word makes the plain reading give up; a whole one is read, file by file."""
    ws = str(workspace)
    assert blocks.plain_blocks(ws, ws, [b"./we", b"ird\x001:foo"], None) is None
    alone = [
        b"./a\x001:foo",
        b"",
        b'./s.bin: binary file matches (found "\\0" byte around offset 7)',
    ]
    assert blocks.plain_blocks(ws, ws, alone, None) is None
    # After a file's lines, also beneath a folder whose name reads as a line's number.
    warned = [
        b"1-2/a\x001:foo",
        b"2:foo",
        b'1-2/a: WARNING: stopped searching binary file after match (found "\\0" byte around '
        b"offset 180001)",
    ]
    assert blocks.plain_blocks(ws, ws, warned, None) is None
    whole = blocks.plain_blocks(
        ws,
        ws,
        [b"./a\x001:foo", b"2-ctx", b"3:foo", b"", b"./a.b\x007:foo", b"", b"./b\x005-x", b"6:foo"],
        None,
    )
    assert whole is not None
    assert [(b.path, b.matches) for b in whole] == [
        (str(workspace / "a"), 2),
        (str(workspace / "a.b"), 1),
        (str(workspace / "b"), 1),
    ]
    lines = list(blocks.lines(whole, 0))
    assert [(line.path[len(ws) + 1 :], line.number, line.text, line.match) for line in lines] == [
        ("a", 1, "foo", True),
        ("a", 2, "ctx", False),
        ("a", 3, "foo", True),
        ("a.b", 7, "foo", True),
        ("b", 5, "x", False),
        ("b", 6, "foo", True),
    ]
