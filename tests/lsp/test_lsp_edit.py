"""readkeeper/edit and readkeeper/write through the real server, as an editor calls them."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from conftest import Session, start_session
from readkeeper.client import ReadkeeperClient


async def edit(lsp: Session, path: Path | str, old: str, new: str, **params: Any) -> Any:
    return await lsp.client.request(
        "readkeeper/edit",
        {"file_path": str(path), "old_string": old, "new_string": new, **params},
    )


async def write(lsp: Session, path: Path | str, content: str, **params: Any) -> Any:
    return await lsp.client.request(
        "readkeeper/write", {"file_path": str(path), "content": content, **params}
    )


def later(path: Path, data: bytes) -> None:
    """Write `data` as another program would, with an mtime that surely differs."""
    path.write_bytes(data)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


async def test_write_read_edit_round_trip(lsp: Session, workspace: Path) -> None:
    created = await write(lsp, "pkg/mod.py", "def f():\n    return 1\n")
    path = workspace / "pkg" / "mod.py"
    assert created["file_path"] == str(path)
    assert (created["created"], created["changed"], created["applied_to"]) == (True, True, "disk")
    assert created["read_state"]["next_read"] == "stub"  # it wrote all of it
    result = await edit(lsp, "pkg/mod.py", "return 1", "return 2")
    assert path.read_text() == "def f():\n    return 2\n"
    assert result["replacements"] == 1
    assert result["snippet"] == "     1\tdef f():\n     2\t    return 2"
    assert result["lines"] == [2]
    assert "external_change" not in result  # absent fields are left out
    # It wrote the file and made the edit itself: it holds all of it, a re-read stubs.
    assert result["read_state"]["next_read"] == "stub"
    assert (await lsp.read(path))["type"] == "file_unchanged"
    stats = await lsp.client.request("readkeeper/stats", {"session": ""})
    assert (stats["session"]["edits"], stats["session"]["writes"]) == (1, 1)


async def test_every_error_kind(lsp: Session, workspace: Path, tmp_path: Path) -> None:
    async def kind(method: str, params: dict[str, Any]) -> tuple[str, str]:
        error = await lsp.error(method, params)
        return error.data["kind"], error.message

    def edit_params(path: Path | str, old: str = "a", new: str = "b", **extra: Any) -> Any:
        return {"file_path": str(path), "old_string": old, "new_string": new, **extra}

    ed, wr = "readkeeper/edit", "readkeeper/write"
    text = workspace / "a.txt"
    text.write_text("alpha\nbeta\nbeta\n")

    assert (await kind(ed, edit_params(workspace / "nope.txt")))[0] == "not_found"
    assert (await kind(ed, edit_params(tmp_path / "out.txt")))[0] == "outside_workspace"
    assert (await kind(wr, {"file_path": str(tmp_path / "o.txt"), "content": ""}))[
        0
    ] == "outside_workspace"
    (workspace / "dir").mkdir()
    assert (await kind(wr, {"file_path": str(workspace / "dir"), "content": ""}))[
        0
    ] == "is_directory"
    assert (await kind(ed, edit_params(text, "alpha", "x")))[0] == "not_read"
    assert (await kind(wr, {"file_path": str(text), "content": "x"}))[0] == "not_read"

    await lsp.read(text)
    assert (await kind(ed, edit_params(text, "gamma", "x")))[0] == "no_match"
    found, message = await kind(ed, edit_params(text, "beta", "x"))
    assert found == "ambiguous_match"
    assert "lines 2, 3" in message
    assert (await kind(ed, edit_params(text, "alpha", "alpha")))[0] == "no_change"
    error = await lsp.error(ed, {"file_path": str(text), "old_string": "alpha"})
    assert (error.data["kind"], error.data["field"], error.code) == (
        "bad_params",
        "new_string",
        -32602,
    )
    assert (await kind(ed, edit_params(text, "alpha", "x", replace_all="maybe")))[0] == "bad_params"

    later(text, b"alpha\nBETA\nbeta\n")
    assert (await kind(ed, edit_params(text, "beta\nbeta", "x")))[0] == "stale"

    blob = workspace / "blob.txt"
    blob.write_text("text\n")
    await lsp.read(blob)
    later(blob, b"\x00\x01binary now")
    assert (await kind(ed, edit_params(blob, "text", "x")))[0] == "binary"

    big = workspace / "big.log"
    big.write_text("log line\n" * 40_000)  # over the 256 KB whole-read limit
    await lsp.read(big, offset=1, limit=10)
    assert (await kind(ed, edit_params(big, "log line", "x")))[0] == "too_large"

    jp = workspace / "jp.txt"
    jp.write_bytes("日本語のテキストです。注意してください。\n".encode("cp932") * 5 + b"\x87\x90\n")
    await lsp.read(jp)
    assert (await kind(ed, edit_params(jp, "注意", "x", replace_all=True)))[0] == "unsupported"

    open_doc = workspace / "open.txt"
    open_doc.write_text("saved\n")
    lsp.open_document(open_doc, "saved\nunsaved\n", version=3)
    await lsp.read(open_doc)
    found, message = await kind(ed, edit_params(open_doc, "saved\n", "x\n"))
    assert found == "dirty_buffer"
    assert "unsaved changes" in message
    assert open_doc.read_text() == "saved\n"

    stats = await lsp.client.request("readkeeper/stats", {"session": ""})
    assert stats["session"]["stale_edits_caught"] == 1
    assert stats["session"]["errors"]["not_read"] == 2


async def test_touch_and_identical_rewrite_do_not_stale(lsp: Session, workspace: Path) -> None:
    path = workspace / "a.txt"
    path.write_text("one\ntwo\n")
    await lsp.read(path)
    later(path, b"one\ntwo\n")
    os.utime(path, ns=(0, 0))
    result = await edit(lsp, path, "two", "2")
    assert result["merged"] is False
    assert path.read_text() == "one\n2\n"


async def test_formatter_rewrite_is_caught_with_a_diff(lsp: Session, workspace: Path) -> None:
    path = workspace / "a.py"
    path.write_text("def f(a,b):\n  return a+b\n")
    await lsp.read(path)
    later(path, b"def f(a, b):\n    return a + b\n")
    error = await lsp.error(
        "readkeeper/edit",
        {"file_path": str(path), "old_string": "return a+b", "new_string": "return a-b"},
    )
    assert error.data["kind"] == "stale"
    assert "+    return a + b" in error.data["diff"]
    assert "What changed:" in error.message
    assert path.read_text() == "def f(a, b):\n    return a + b\n"


async def test_disjoint_change_merges_and_overlap_refuses(lsp: Session, workspace: Path) -> None:
    path = workspace / "a.txt"
    lines = [f"line {i}\n" for i in range(1, 31)]
    path.write_text("".join(lines))
    await lsp.read(path)
    lines[0] = "line 1, edited by the person\n"
    later(path, "".join(lines).encode())
    merged = await edit(lsp, path, "line 20\n", "line twenty\n")
    assert merged["merged"] is True
    assert "+line 1, edited by the person" in merged["external_change"]["diff"]
    assert "had changed since you read it" in merged["note"]
    lines[19] = "line twenty\n"
    assert path.read_text() == "".join(lines)

    lines[24] = "line 25 // formatted\n"
    later(path, "".join(lines).encode())
    error = await lsp.error(
        "readkeeper/edit",
        {"file_path": str(path), "old_string": "line 25", "new_string": "line 25!"},
    )
    assert error.data["kind"] == "stale"
    assert path.read_text() == "".join(lines)
    stats = await lsp.client.request("readkeeper/stats", {"session": ""})
    assert stats["session"]["disjoint_merges"] == 1


@pytest.mark.skipif(sys.platform != "linux", reason="read leases are Linux's")
async def test_a_file_open_for_writing_elsewhere_is_not_changed(
    lsp: Session, workspace: Path
) -> None:
    # This test process is the other program: it holds the file open for writing (as a
    # logger or a slow save does), so the server cannot take its read lease.
    path = workspace / "app.log"
    path.write_text("started\n")
    await lsp.read(path)
    with open(path, "ab") as writer:
        error = await lsp.error(
            "readkeeper/edit",
            {"file_path": str(path), "old_string": "started", "new_string": "begun"},
        )
        assert (error.data["kind"], error.data["busy"]) == ("stale", True)
        assert "open for writing in another program" in error.message
        refused = await lsp.error(
            "readkeeper/write", {"file_path": str(path), "content": "replaced\n"}
        )
        assert (refused.data["kind"], refused.data["busy"]) == ("stale", True)
        writer.write(b"still writing\n")
    assert path.read_text() == "started\nstill writing\n"
    # Once it is closed, the same edit goes through (on what the file says now).
    await lsp.read(path, force=True)
    await edit(lsp, path, "started", "begun")
    assert path.read_text() == "begun\nstill writing\n"


async def test_encodings_and_line_endings_round_trip(lsp: Session, workspace: Path) -> None:
    # Each file gets the same edit; new lines take the file's dominant ending (mixed.txt
    # ties, so LF), and every other byte stays.
    utf16 = "one\r\ntwo\r\nthree\r\n", "one\r\n2\r\nand a half\r\nthree\r\n"
    cases = {
        "crlf.txt": (b"one\r\ntwo\r\nthree\r\n", b"one\r\n2\r\nand a half\r\nthree\r\n"),
        "mixed.txt": (
            b"one\r\ntwo\nthree\r\n\tfour  \n",
            b"one\r\n2\nand a half\nthree\r\n\tfour  \n",
        ),
        "bom.txt": (b"\xef\xbb\xbfone\ntwo\nthree\n", b"\xef\xbb\xbfone\n2\nand a half\nthree\n"),
        "utf16.txt": tuple(b"\xff\xfe" + t.encode("utf-16-le") for t in utf16),
        "latin1.txt": (
            "Grüße\ntwo\nschön\n".encode("latin-1"),
            "Grüße\n2\nand a half\nschön\n".encode("latin-1"),
        ),
    }
    for name, (before, after) in cases.items():
        path = workspace / name
        path.write_bytes(before)
        await lsp.read(path)
        await edit(lsp, path, "two\n", "2\nand a half\n")
        assert path.read_bytes() == after, name


async def test_mode_bits_and_symlink_target(lsp: Session, workspace: Path) -> None:
    target = workspace / "tool.sh"
    target.write_text("#!/bin/sh\necho old\n")
    target.chmod(0o750)
    link = workspace / "tool-link.sh"
    link.symlink_to(target)
    await lsp.read(link)
    result = await edit(lsp, link, "old", "new")
    assert result["file_path"] == str(target)
    assert link.is_symlink()
    assert target.read_text() == "#!/bin/sh\necho new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o750


async def test_dirty_buffer_edit_goes_through_apply_edit(workspace: Path) -> None:
    client = ReadkeeperClient()
    documents: dict[str, tuple[str, int]] = {}

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(
        ls: ReadkeeperClient, params: types.ApplyWorkspaceEditParams
    ) -> types.ApplyWorkspaceEditResult:
        # An editor: apply the versioned text edits, tell the server, answer.
        for change in params.edit.document_changes or []:
            assert isinstance(change, types.TextDocumentEdit)
            uri = change.text_document.uri
            text, version = documents[uri]
            if change.text_document.version != version:
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="version")
            lines = text.split("\n")
            starts = [0]
            for line in lines:
                starts.append(starts[-1] + len(line) + 1)
            for text_edit in sorted(change.edits, key=lambda e: e.range.start, reverse=True):
                start = starts[text_edit.range.start.line] + text_edit.range.start.character
                end = starts[text_edit.range.end.line] + text_edit.range.end.character
                text = text[:start] + text_edit.new_text + text[end:]
            documents[uri] = (text, version + 1)
            ls.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(
                        uri=uri, version=version + 1
                    ),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
                )
            )
        return types.ApplyWorkspaceEditResult(applied=True)

    lsp = await start_session(workspace, settings={"edit_open_buffers": "apply"}, client=client)
    try:
        path = workspace / "open.py"
        path.write_text("x = 1\n")
        uri = lsp.open_document(path, "x = 1\ny = 2  # unsaved\n", version=5)
        documents[uri] = ("x = 1\ny = 2  # unsaved\n", 5)
        seen = await lsp.read(path)
        assert seen["file"]["unsaved"] is True
        result = await edit(lsp, path, "y = 2", "y = 3")
        assert result["applied_to"] == "buffer"
        assert "editor's buffer" in result["note"]
        assert documents[uri] == ("x = 1\ny = 3  # unsaved\n", 6)
        assert path.read_text() == "x = 1\n"  # the disk is the user's to save
        # The server saw the change: the next edit needs no read.
        await edit(lsp, path, "x = 1", "x = 0")
        assert documents[uri][0] == "x = 0\ny = 3  # unsaved\n"
    finally:
        await lsp.client.close()


async def test_a_problem_the_editor_reports_while_the_edit_lands_is_new(workspace: Path) -> None:
    # The editor applies the edit to its buffer and its language server reports the
    # problem the edit made before the editor answers applyEdit: that report belongs
    # to the edit, so it is listed as new, not as one the agent had already seen.
    client = ReadkeeperClient()
    path = workspace / "typed.py"
    path.write_text("x: int = 1\n")
    uri = path.as_uri()

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(
        ls: ReadkeeperClient, params: types.ApplyWorkspaceEditParams
    ) -> types.ApplyWorkspaceEditResult:
        text = "x: int = 'a'  # unsaved\n"
        ls.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        problem = {
            "range": {"start": {"line": 0, "character": 9}, "end": {"line": 0, "character": 12}},
            "severity": 1,
            "message": 'Incompatible types in assignment (expression has type "str")',
            "source": "mypy",
        }
        item = {"uri": uri, "version": 2, "diagnostics": [problem]}
        ls.protocol.notify("readkeeper/didChangeDiagnostics", {"items": [item]})
        return types.ApplyWorkspaceEditResult(applied=True)

    lsp = await start_session(workspace, settings={"edit_open_buffers": "apply"}, client=client)
    try:
        lsp.open_document(path, "x: int = 1  # unsaved\n", version=1)
        await lsp.read(path)
        result = await edit(lsp, path, "1", "'a'")
        assert result["applied_to"] == "buffer"
        diagnostics = result["diagnostics"]
        assert [line for line in diagnostics["new"] if "Incompatible types" in line], diagnostics
        assert diagnostics["existing"] == []
    finally:
        await lsp.client.close()


async def test_dirty_buffer_says_whether_the_editor_has_unsaved_changes_or_a_stale_copy(
    lsp: Session, workspace: Path
) -> None:
    path = workspace / "open.py"
    path.write_text("x = 1\n")
    uri = lsp.open_document(path, "x = 1\n", version=1)  # opened as the disk has it
    await lsp.read(path)
    later(path, b"x = 2\n")  # another program changes the disk; the editor has not reloaded
    stale = await lsp.error(
        "readkeeper/edit", {"file_path": str(path), "old_string": "x", "new_string": "y"}
    )
    assert stale.data["kind"] == "dirty_buffer"
    assert stale.data["unsaved"] is False
    assert "has not been reloaded" in stale.message
    assert "unsaved changes" not in stale.message.replace("no unsaved changes", "")
    # The person types in the editor: now they are unsaved changes.
    lsp.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="x = 3\n")],
        )
    )
    typed = await lsp.error(
        "readkeeper/edit", {"file_path": str(path), "old_string": "x", "new_string": "y"}
    )
    assert typed.data["kind"] == "dirty_buffer"
    assert "with unsaved changes" in typed.message
    # Saved: the editor's copy is the disk's again, and a later outside change is a
    # stale copy once more, not unsaved work.
    path.write_text("x = 3\n")
    lsp.client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    await lsp.read(path, force=True)
    later(path, b"x = 4\n")
    again = await lsp.error(
        "readkeeper/edit", {"file_path": str(path), "old_string": "x", "new_string": "y"}
    )
    assert "has not been reloaded" in again.message
