"""A path readkeeper creates is never where the editor holds a never-saved document
(refusals.refuse_unsaved_where_created), over LSP with a real server: mkdir, a move's
destination and a write's new folders are refused `dirty_buffer` as a write onto the
document itself is, and nothing is made."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from conftest import Session


def open_unsaved(lsp: Session, path: Path, text: str) -> None:
    """The editor opens a document at `path` that was never saved (nothing on disk)."""
    lsp.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=path.as_uri(), language_id="plaintext", version=1, text=text
            )
        )
    )


async def test_mkdir_where_the_editor_holds_a_never_saved_document(
    lsp: Session, workspace: Path
) -> None:
    draft = workspace / "newdir"
    open_unsaved(lsp, draft, "the user's draft\n")
    error = await lsp.error("readkeeper/mkdir", {"path": str(draft)})
    assert error.data["kind"] == "dirty_buffer"
    assert "never saved" in error.message
    assert not draft.exists()
    # At it or beneath it: a folder above a never-saved document, made on the way.
    nested = workspace / "a" / "b"
    open_unsaved(lsp, nested, "draft at a/b\n")
    error = await lsp.error("readkeeper/mkdir", {"path": str(nested / "c")})
    assert error.data["kind"] == "dirty_buffer"
    assert not (workspace / "a").exists()
    # Elsewhere, mkdir works.
    await lsp.client.request("readkeeper/mkdir", {"path": str(workspace / "free")})
    assert (workspace / "free").is_dir()


async def test_a_write_or_move_never_makes_a_folder_over_a_never_saved_document(
    lsp: Session, workspace: Path
) -> None:
    draft = workspace / "notes"
    open_unsaved(lsp, draft, "draft\n")
    error = await lsp.error(
        "readkeeper/write", {"file_path": str(draft / "x.txt"), "content": "agent\n"}
    )
    assert error.data["kind"] == "dirty_buffer"
    assert not draft.exists()
    folder = workspace / "src"
    folder.mkdir()
    (folder / "a.txt").write_text("a\n")
    moved_to = workspace / "dest"
    open_unsaved(lsp, moved_to / "a.txt", "user's own a.txt, never saved\n")
    error = await lsp.error(
        "readkeeper/move", {"source": str(folder), "destination": str(moved_to)}
    )
    assert error.data["kind"] == "dirty_buffer"
    assert not moved_to.exists()
    assert (folder / "a.txt").read_text() == "a\n"
