"""`didChange` applied within a budget of work (readkeeper/lsp/document_changes.py): the
same text pygls makes, change for change, and a notification of thousands of changes
to a long line no longer holds the server (outside round 41: 10,000 changes to a 1 MB
document kept every other call waiting 20-35 s; to 10 MB, minutes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace import PositionCodec, TextDocument
from raw_lsp import RawServer

from readkeeper.lsp.document_changes import WORK_BUDGET, applied, apply, follow

# Line ends of every kind splitlines knows, ASCII and not, and characters of two UTF-16
# units: where pygls' conversions and the line joins differ.
PIECES = ["a", "bc", " ", "\n", "\r", "\r\n", "é", "😋", "\x0b", "\u2028", "xyz"]
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


@settings(max_examples=600, deadline=None)
@given(source=text, changes=st.lists(change, max_size=6), encoding=st.sampled_from(ENCODINGS))
def test_the_text_is_what_pygls_makes_change_for_change(
    source: str, changes: list[Any], encoding: str
) -> None:
    theirs = document(source, encoding)
    for one in changes:
        # pygls may clamp a position in place: give it copies.
        theirs.apply_change(
            types.TextDocumentContentChangePartial(range=_copy(one.range), text=one.text)
            if isinstance(one, types.TextDocumentContentChangePartial)
            else one
        )
    assert applied(document(source, encoding), changes) == theirs.source


def _copy(where: types.Range) -> types.Range:
    return types.Range(
        types.Position(where.start.line, where.start.character),
        types.Position(where.end.line, where.end.character),
    )


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
