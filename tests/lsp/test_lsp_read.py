"""readkeeper/read through the real server, as an editor would call it."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from conftest import Session
from helpers import eventually, names_a_shell_command
from readkeeper.read.tokens import TokenCounter
from readkeeper.state.sessions import MAX_NAME_CHARS, MAX_PER_PRINCIPAL


async def test_read_numbers_lines_like_cat_n(lsp: Session, workspace: Path) -> None:
    (workspace / "a.py").write_text("import os\n\nprint(os.getcwd())\n")
    result = await lsp.read("a.py")
    assert result["type"] == "text"
    file = result["file"]
    assert file["file_path"] == str(workspace / "a.py")
    assert file["content"] == "     1\timport os\n     2\t\n     3\tprint(os.getcwd())"
    assert (file["start_line"], file["num_lines"], file["total_lines"]) == (1, 3, 3)
    assert file["tokens"] > 0
    assert file["partial"] is False


async def test_a_fresh_servers_first_read_is_counted_exactly(lsp: Session, workspace: Path) -> None:
    # The server loads its token table with the first read, in the background: that
    # read is counted by the table's index meanwhile, or waits for the table when there
    # is no index yet; either way its count is exact, never a bound (issue 34).
    (workspace / "a.py").write_text("".join(f"value_{i} = {i}  # ligne {i}\n" for i in range(10)))
    first = (await lsp.read("a.py"))["file"]
    content = first["content"]
    assert "tokens_upper_bound" not in first
    assert first["tokens"] == TokenCounter().count(content) < len(content.encode())

    async def table() -> bool:
        stats = await lsp.client.request("readkeeper/stats", {})
        return bool(stats["token_table"] == "loaded")

    await eventually(table, "the token table to load")
    again = (await lsp.read("a.py", force=True))["file"]
    assert "tokens_upper_bound" not in again
    assert again["tokens"] == first["tokens"]


async def test_reread_of_unchanged_file_is_a_small_stub(lsp: Session, workspace: Path) -> None:
    (workspace / "a.txt").write_text("hello\n" * 50)
    first = await lsp.read("a.txt")
    assert first["type"] == "text"
    again = await lsp.read("a.txt")
    assert again["type"] == "file_unchanged"
    held = again["file"]
    assert held["file_path"] == str(workspace / "a.txt")
    assert (held["start_line"], held["num_lines"], held["total_lines"]) == (1, 50, 50)
    assert held["obtained_by"] == "read"
    assert "All 50 lines" in held["note"]
    forced = await lsp.read("a.txt", force=True)
    assert forced["type"] == "text"
    stats = await lsp.client.request("readkeeper/stats", {"session": ""})
    assert stats["session"]["dedup_hits"] == 1
    assert stats["session"]["reads"] == 3
    assert stats["session"]["tokens_saved_by_stubs"] > 0


async def test_numbers_sent_as_strings_are_coerced(lsp: Session, workspace: Path) -> None:
    (workspace / "n.txt").write_text("a\nb\nc\nd\n")
    file = (await lsp.read("n.txt", offset="2", limit="2"))["file"]
    assert file["content"] == "     2\tb\n     3\tc"


async def test_malformed_params_name_the_field(lsp: Session, workspace: Path) -> None:
    (workspace / "n.txt").write_text("a\n")
    error = await lsp.read_error("n.txt", offset="two")
    assert error.data["kind"] == "bad_params"
    assert error.data["field"] == "offset"
    assert "offset" in error.message
    missing = await lsp.error("readkeeper/read", {"offset": 1})
    assert missing.data == {"kind": "bad_params", "field": "file_path"}
    not_object = await lsp.error("readkeeper/read", ["a.txt"])  # type: ignore[arg-type]
    assert not_object.data["kind"] == "bad_params"


async def test_every_error_carries_its_kind(lsp: Session, workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"  # next to the workspace, not in it
    outside.write_text("not the agent's to read\n")
    (workspace / "dir").mkdir()
    (workspace / "bin").write_bytes(b"\x00\x01\x02" * 100)
    with open(workspace / "huge", "wb") as f:
        f.truncate(10 << 20)
    cases = {
        "missing.txt": "not_found",
        "dir": "is_directory",
        "bin": "binary",
        "huge": "too_large",
        str(outside): "outside_workspace",
    }
    for path, kind in cases.items():
        error = await lsp.read_error(path)
        assert error.data["kind"] == kind, (path, error.data)
        assert error.message
        assert not names_a_shell_command(error.message), error.message


async def test_unsaved_editor_buffer_is_what_the_agent_reads(lsp: Session, workspace: Path) -> None:
    path = workspace / "doc.md"
    path.write_text("on disk\n")
    uri = lsp.open_document(path, "on disk\n", version=1)
    file = (await lsp.read("doc.md"))["file"]
    assert file["content"] == "     1\ton disk"
    assert "unsaved" not in file  # open but clean: nothing to flag

    lsp.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=0, character=0),
                        end=types.Position(line=0, character=2),
                    ),
                    text="typed in the editor,",
                )
            ],
        )
    )
    file = (await lsp.read("doc.md"))["file"]
    assert file["content"] == "     1\ttyped in the editor, disk"
    assert file["unsaved"] is True
    assert file["buffer_version"] == 2

    lsp.client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    file = (await lsp.read("doc.md"))["file"]
    assert file["content"] == "     1\ton disk"
    assert "unsaved" not in file


async def test_forget_then_read_is_full_again(lsp: Session, workspace: Path) -> None:
    (workspace / "a.txt").write_text("a\n")
    await lsp.read("a.txt")
    assert (await lsp.read("a.txt"))["type"] == "file_unchanged"
    forgotten = await lsp.client.request("readkeeper/forget", {"paths": ["a.txt"]})
    assert forgotten == {"session": "", "forgotten": 1}
    assert (await lsp.read("a.txt"))["type"] == "text"


async def test_sessions_are_separate(lsp: Session, workspace: Path) -> None:
    (workspace / "a.txt").write_text("a\n")
    await lsp.read("a.txt", session="chat-1")
    assert (await lsp.read("a.txt", session="chat-2"))["type"] == "text"
    assert (await lsp.read("a.txt", session="chat-1"))["type"] == "file_unchanged"
    stats = await lsp.client.request("readkeeper/stats", {"session": "chat-1"})
    assert stats["session"]["dedup_hits"] == 1
    assert stats["total"]["reads"] == 3
    assert stats["files_in_read_state"] == 1


async def test_a_new_session_at_every_call_does_not_grow_the_server(
    lsp: Session, workspace: Path
) -> None:
    # The server keeps each connection's most recently used sessions (state/sessions.py):
    # past them, the least recent is forgotten whole, and a read of it is a first read
    # again.
    (workspace / "a.txt").write_text("a\n")
    for n in range(MAX_PER_PRINCIPAL + 1):
        assert (await lsp.read("a.txt", session=f"s{n}"))["type"] == "text"
    assert (await lsp.read("a.txt", session="s1"))["type"] == "file_unchanged"
    stats = await lsp.client.request("readkeeper/stats", {"session": "s0"})
    assert stats["files_in_read_state"] == 0
    assert stats["session"]["reads"] == 0
    assert stats["total"]["reads"] == MAX_PER_PRINCIPAL + 2
    assert (await lsp.read("a.txt", session="s0"))["type"] == "text"
    error = await lsp.read_error("a.txt", session="s" * (MAX_NAME_CHARS + 1))
    assert error.data["kind"] == "bad_params"
    assert error.data["field"] == "session"


async def test_a_workspace_folder_opened_through_a_link_is_read_by_that_name(
    tmp_path: Path,
) -> None:
    # Paths are judged by their text before anything is looked up: the editor's own
    # name for its folder (a symlink) still names the root, and results carry the
    # real path.
    from conftest import start_session

    real = tmp_path / "real-project"
    real.mkdir()
    (real / "a.py").write_text("x = 1\n")
    spelled = tmp_path / "project"
    spelled.symlink_to(real)
    session = await start_session(spelled)
    try:
        for given in (spelled / "a.py", real / "a.py", "a.py"):
            result = await session.client.request(
                "readkeeper/read", {"file_path": str(given), "force": True}
            )
            assert result["file"]["file_path"] == str(real.resolve() / "a.py")
        error = await session.read_error(str(tmp_path / "real-projectx" / "a.py"))
        assert error.data["kind"] == "outside_workspace"
    finally:
        await session.client.close()
