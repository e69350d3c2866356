"""`didChange` applied within a budget of work (readkeeper/lsp/document_changes.py): the
text an editor holds, change for change, by LSP's rules (lines end at LF, CRLF and CR
only; a position past a line's end is that end; round 44 found pygls' split at a form
feed shifting every later change), and a notification of thousands of changes to a
long line no longer holds the server (outside round 41: 10,000 changes to a 1 MB
document kept every other call waiting 20-35 s; to 10 MB, minutes)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace import PositionCodec, TextDocument
from raw_lsp import RawServer

from readkeeper.lsp.document_changes import WORK_BUDGET, applied, apply, follow

# Line ends of every kind splitlines knows (LSP's three only end a line), ASCII and not,
# and characters of two UTF-16 units: where conversions and the line joins can go wrong.
PIECES = ["a", "bc", " ", "\n", "\r", "\r\n", "é", "😋", "\x0b", "\x0c", "\x85", "\u2028", "xyz"]
BREAK = re.compile(r"\r\n|\r|\n")
text = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)
position = st.builds(types.Position, line=st.integers(0, 6), character=st.integers(0, 8))
ranged = st.builds(
    types.TextDocumentContentChangePartial,
    range=st.builds(types.Range, start=position, end=position),
    text=text,
)
change = st.one_of(
    ranged, ranged, ranged, st.builds(types.TextDocumentContentChangeWholeDocument, text=text)
)
ENCODINGS = [
    types.PositionEncodingKind.Utf16,
    types.PositionEncodingKind.Utf8,
    types.PositionEncodingKind.Utf32,
]


def document_of(source: str) -> TextDocument:
    return TextDocument("file:///x.txt", source, version=1)


def document(source: str, encoding: str) -> TextDocument:
    codec = PositionCodec(encoding)
    return TextDocument("file:///x.txt", source, version=1, position_codec=codec)


def editor_offset(text: str, where: types.Position, encoding: str) -> int:
    """Where an editor puts `where` in `text`, as offsets in the whole text (not lines
    kept apart): lines end at LF, CRLF and CR; a character past its line's content is
    its end; a line past the last is the end of the text."""
    starts = [0, *(found.end() for found in BREAK.finditer(text))]
    if where.line >= len(starts):
        return len(text)
    start = starts[where.line]
    stop = starts[where.line + 1] if where.line + 1 < len(starts) else len(text)
    content = BREAK.sub("", text[start:stop])
    units = 0
    for index, char in enumerate(content):
        if units >= where.character:
            return start + index
        units += {"utf-8": len(char.encode()), "utf-32": 1}.get(encoding, 1 + (ord(char) > 0xFFFF))
    return start + len(content)


def as_an_editor_applies(text: str, one: Any, encoding: str) -> str:
    if not isinstance(one, types.TextDocumentContentChangePartial):
        return str(one.text)
    ends = sorted(editor_offset(text, at, encoding) for at in (one.range.start, one.range.end))
    return text[: ends[0]] + one.text + text[ends[1] :]


@settings(max_examples=600, deadline=None)
@given(source=text, changes=st.lists(change, max_size=6), encoding=st.sampled_from(ENCODINGS))
def test_the_text_is_what_an_editor_makes_change_for_change(
    source: str, changes: list[Any], encoding: str
) -> None:
    theirs = source
    for one in changes:
        theirs = as_an_editor_applies(theirs, one, encoding)
    assert applied(document(source, encoding), changes) == theirs
    held = follow(document(source, encoding))
    for one in changes:  # one notification each, the lines kept between them
        assert apply(held, [one])
    assert held.source == theirs


@pytest.mark.parametrize(
    ("source", "where", "typed", "held"),
    [
        # round 44: a form feed ended no line for the editor, but one for pygls' split
        ("a\x0cb\nkeep1\nTARGET\n", (2, 0), ">", "a\x0cb\nkeep1\n>TARGET\n"),
        ("a\u2028b\x85c\nkeep\n", (1, 0), ">", "a\u2028b\x85c\n>keep\n"),
        # past a CRLF line's end: its end, never between the CR and the LF
        ("ab\r\ncd\r\n", (0, 3), "X", "abX\r\ncd\r\n"),
        # past the last line's end (no line break): its end, not one before it
        ("ab\ncd", (1, 9), "X", "ab\ncdX"),
        ("ab\n", (7, 2), "X", "ab\nX"),  # a line past the last: the end of the text
    ],
)
def test_a_position_lands_where_the_editor_put_it(
    source: str, where: tuple[int, int], typed: str, held: str
) -> None:
    at = types.Position(*where)
    one = types.TextDocumentContentChangePartial(range=types.Range(at, at), text=typed)
    assert applied(document_of(source), [one]) == held


def test_many_changes_to_short_lines_are_applied_within_the_budget() -> None:
    lines = [f"line {i}\n" for i in range(20_000)]
    changes = [
        types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(i * 2, 0), types.Position(i * 2, 4)), text="LINE"
        )
        for i in range(10_000)
    ]
    text = applied(document("".join(lines), types.PositionEncodingKind.Utf16), changes)
    assert text is not None
    assert text.splitlines()[:3] == ["LINE 0", "line 1", "LINE 2"]


def test_many_changes_to_one_long_line_are_past_the_budget() -> None:
    line = "x" * 1_000_000
    at = types.Range(types.Position(0, 500_000), types.Position(0, 500_001))
    changes = [types.TextDocumentContentChangePartial(range=at, text="y")] * 10_000
    assert 10_000 * len(line) > WORK_BUDGET
    assert applied(document(line, types.PositionEncodingKind.Utf16), changes) is None


# --- over LSP -------------------------------------------------------------------------------


def _opened(workspace: Path, text: str) -> tuple[RawServer, Path]:
    server = RawServer()
    server.initialize(workspace, initializationOptions={"watch": False})
    path = workspace / "long.txt"
    path.write_text("on disk\n")
    item = {"uri": path.as_uri(), "languageId": "plaintext", "version": 1, "text": text}
    server.notify("textDocument/didOpen", {"textDocument": item})
    return server, path


def _change(server: RawServer, path: Path, changes: list[dict[str, Any]]) -> None:
    document = {"uri": path.as_uri(), "version": 2}
    server.notify("textDocument/didChange", {"textDocument": document, "contentChanges": changes})


def test_thousands_of_changes_to_a_long_line_leave_the_document_lost_until_saved(
    workspace: Path,
) -> None:
    # 10 MB on one line, 10,000 changes in its middle: pygls' own loop took minutes.
    server, path = _opened(workspace, "x" * 10_000_000)
    try:
        assert "result" in server.request(9, "readkeeper/read", {"file_path": str(path)})
        at = {
            "start": {"line": 0, "character": 5_000_000},
            "end": {"line": 0, "character": 5_000_001},
        }
        _change(server, path, [{"range": at, "text": "é"}] * 10_000)
        reply = server.request(10, "readkeeper/stats", {})
        assert reply["result"]["total"]["client_state_dropped"] == {"documents": 1}
        assert "past the work one notification may cost" in server.stderr
        # Its text is unknown: neither read nor written beneath the unsaved work (round
        # 42: the edit went to the disk).
        for i, (method, params) in enumerate(
            [
                ("readkeeper/read", {"file_path": str(path)}),
                (
                    "readkeeper/edit",
                    {"file_path": str(path), "old_string": "on", "new_string": "X"},
                ),
                ("readkeeper/write", {"file_path": str(path), "content": "X\n"}),
            ]
        ):
            refused = server.request(11 + i, method, params)
            assert refused["error"]["data"]["kind"] == "dirty_buffer", refused
            assert "could not follow" in refused["error"]["message"]
        assert path.read_text() == "on disk\n"
        # Saved, the disk holds the editor's text: read from there.
        path.write_text("saved by the editor\n")
        server.notify("textDocument/didSave", {"textDocument": {"uri": path.as_uri()}})
        read = server.request(20, "readkeeper/read", {"file_path": str(path)})
        assert "saved by the editor" in str(read["result"])
    finally:
        server.close()


def test_typing_keeps_the_lines_between_notifications() -> None:
    document = follow(document_of("".join(f"row {i}\n" for i in range(1_000))))
    for n in range(50):
        at = types.Range(types.Position(n, 0), types.Position(n, 0))
        assert apply(document, [types.TextDocumentContentChangePartial(range=at, text="> ")])
        assert document.held_lines is not None  # not joined again: nobody read it
    assert document.chars == len("".join(document.held_lines))
    assert document.source.splitlines()[:2] == ["> row 0", "> row 1"]
    assert document.source.splitlines()[50] == "row 50"


def test_a_thousand_cursors_typing_are_applied(workspace: Path) -> None:
    server, path = _opened(workspace, "".join(f"row {i}\n" for i in range(2_000)))
    try:
        changes = [
            {
                "range": {"start": {"line": i, "character": 0}, "end": {"line": i, "character": 0}},
                "text": "> ",
            }
            for i in range(0, 2_000, 2)
        ]
        _change(server, path, changes)
        read = server.request(10, "readkeeper/read", {"file_path": str(path), "limit": 3})
        file = read["result"]["file"]
        assert file["unsaved"] is True
        assert "> row 0" in file["content"]
        assert "\trow 1" in file["content"]
    finally:
        server.close()


def test_an_edit_after_a_form_feed_is_read_where_the_editor_holds_it(workspace: Path) -> None:
    """Round 44: the server's copy split at the form feed, so the `>` typed before
    TARGET landed on the line above, and the agent read what the editor did not hold."""
    server, path = _opened(workspace, "a\x0cb\nkeep1\nTARGET\n")
    try:
        at = {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 0}}
        _change(server, path, [{"range": at, "text": ">"}])
        reply = server.request(3, "readkeeper/read", {"file_path": str(path), "force": True})
        assert reply["result"]["file"]["content"].split("\n")[1:] == [
            "     2\tkeep1",
            "     3\t>TARGET",
        ]
    finally:
        server.close()


def test_a_ranged_read_of_a_big_file_with_unsaved_changes_is_refused(workspace: Path) -> None:
    """Round 44: a file over max_size_bytes is read from the disk in ranges; with the
    editor's unsaved changes (or a lost document) a ranged read showed the disk's old
    lines as the file's."""
    server = RawServer()
    server.initialize(workspace, initializationOptions={"watch": False, "max_size_bytes": 1000})
    try:
        path = workspace / "big.txt"
        text = "OLD\n" + "x" * 5000 + "\n"
        path.write_text(text)
        ranged = {"file_path": str(path), "offset": 1, "limit": 1, "force": True}
        item = {"uri": path.as_uri(), "languageId": "plaintext", "version": 1, "text": text}
        server.notify("textDocument/didOpen", {"textDocument": item})
        first = server.request(2, "readkeeper/read", ranged)  # open, unchanged: the disk's
        assert first["result"]["file"]["content"].endswith("OLD"), first
        at = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 3}}
        _change(server, path, [{"range": at, "text": "NEW"}])
        refused = server.request(3, "readkeeper/read", ranged)
        assert refused["error"]["data"]["kind"] == "dirty_buffer", refused
        assert "save it" in refused["error"]["message"]
        # Round 45: a whole read or an estimate said `too_large`, naming the ranged read
        # refused above; a mention was dropped for the same.
        for index, params in enumerate([{}, {"estimate": True}], start=10):
            whole = server.request(index, "readkeeper/read", {"file_path": str(path), **params})
            assert whole["error"]["data"]["kind"] == "dirty_buffer", whole
        mentioned = server.request(
            12, "readkeeper/attachments", {"mentions": [str(path)], "types": ["file"]}
        )
        assert "dirty_buffer" in str(mentioned["result"]["dropped"]), mentioned
        server.notify("textDocument/didSave", {"textDocument": {"uri": path.as_uri()}})
        path.write_text("NEW\n" + "x" * 5000 + "\n")  # what the save wrote
        saved = server.request(4, "readkeeper/read", ranged)
        assert saved["result"]["file"]["content"].endswith("NEW"), saved
    finally:
        server.close()
