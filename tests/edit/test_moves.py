"""`readkeeper/move` and `readkeeper/mkdir` tried as an attacker would: a destination
outside the roots or through a symlink out, an existing destination (a file, a symlink,
a dangling symlink), a source that is a symlink, version-control metadata, unsaved
editor changes at the source; and the read-state following a moved file. The races
(a folder swapped for a symlink while moves and mkdirs run) are in
tests/files/test_move_races.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import Session
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.state.buffers import Buffer


def refused(core: Readkeeper, method: str, **params: object) -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as caught:
        calls.call(core, method, params)
    return caught.value


class Editor:
    """Open documents, some with unsaved changes."""

    def __init__(self, docs: dict[str, Buffer]) -> None:
        self.docs = docs

    def get(self, real_path: str) -> Buffer | None:
        return self.docs.get(real_path)

    def paths(self) -> list[str]:
        return list(self.docs)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("secret\n")
    return folder


def test_a_destination_outside_or_through_a_link_out_is_refused(
    core: Readkeeper, workspace: Path, outside: Path
) -> None:
    (workspace / "a.txt").write_text("a\n")
    (workspace / "out").symlink_to(outside, target_is_directory=True)
    for destination in (outside / "a.txt", workspace / "out" / "a.txt", "../outside/a.txt"):
        error = refused(core, "move", source="a.txt", destination=str(destination))
        assert error.kind == "outside_workspace"
    assert (workspace / "a.txt").read_text() == "a\n"
    assert sorted(os.listdir(outside)) == ["secret.txt"]
    # Nor can an outside file be pulled in through a link.
    error = refused(core, "move", source="out/secret.txt", destination="stolen.txt")
    assert error.kind == "outside_workspace"
    assert (outside / "secret.txt").exists()
    assert not (workspace / "stolen.txt").exists()


def test_an_existing_destination_is_never_replaced(
    core: Readkeeper, workspace: Path, outside: Path
) -> None:
    (workspace / "a.txt").write_text("a\n")
    (workspace / "b.txt").write_text("b\n")
    (workspace / "link").symlink_to(outside / "secret.txt")
    (workspace / "dangling").symlink_to(outside / "nothing.txt")
    (workspace / "folder").mkdir()
    for destination in ("b.txt", "link", "dangling", "folder"):
        error = refused(core, "move", source="a.txt", destination=destination)
        assert error.kind == "bad_params", destination
        assert error.data["exists"] is True
    assert (workspace / "a.txt").read_text() == "a\n"
    assert (workspace / "b.txt").read_text() == "b\n"
    assert os.readlink(workspace / "dangling") == str(outside / "nothing.txt")
    assert not (outside / "nothing.txt").exists()
    assert (outside / "secret.txt").read_text() == "secret\n"


def test_a_symlink_is_moved_as_itself_never_its_target(core: Readkeeper, workspace: Path) -> None:
    (workspace / "real.txt").write_text("r\n")
    (workspace / "alias").symlink_to("real.txt")
    done = calls.call(core, "move", {"source": "alias", "destination": "alias2"})
    assert done["kind"] == "symlink"
    assert os.readlink(workspace / "alias2") == "real.txt"
    assert (workspace / "real.txt").read_text() == "r\n"


def test_version_control_metadata_is_never_a_move_s_end_nor_made(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (workspace / "hook.sh").write_text("#!/bin/sh\nrm -rf ~\n")
    error = refused(core, "move", source="hook.sh", destination=".git/hooks/pre-commit")
    assert error.kind == "unsupported"
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
    error = refused(core, "move", source=".git", destination="git-old")
    assert error.kind == "unsupported"
    error = refused(core, "mkdir", path=".git/hooks/pre-commit.d")
    assert error.kind == "unsupported"
    assert not (workspace / ".git" / "hooks" / "pre-commit.d").exists()
    error = refused(core, "move", source=str(workspace), destination="elsewhere")
    assert error.kind == "bad_params"


def test_a_folder_is_never_moved_into_itself(core: Readkeeper, workspace: Path) -> None:
    (workspace / "d" / "e").mkdir(parents=True)
    error = refused(core, "move", source="d", destination="d/e/d")
    assert error.kind == "bad_params"
    assert "into itself" in error.message
    assert (workspace / "d" / "e").is_dir()


def test_unsaved_editor_changes_are_never_moved_from_under_the_editor(
    workspace: Path,
) -> None:
    (workspace / "pkg").mkdir()
    for name in ("open.py", "pkg/inner.py", "clean.py"):
        (workspace / name).write_text("disk\n")
    real = os.path.realpath(workspace)
    editor = Editor(
        {
            f"{real}/open.py": Buffer("typed\n", 3),
            f"{real}/pkg/inner.py": Buffer("typed\n", 4),
            f"{real}/clean.py": Buffer("disk\n", 1, edited=False),
            f"{real}/untitled.py": Buffer("typed in a new file\n", 1),
        }
    )
    core = Readkeeper(roots=[str(workspace)], buffers=editor)
    try:
        for source in ("open.py", "pkg"):
            error = refused(core, "move", source=source, destination=f"{source}-moved")
            assert error.kind == "dirty_buffer", source
        assert (workspace / "open.py").exists()
        assert (workspace / "pkg" / "inner.py").exists()
        # Nor onto a path the editor holds a never-saved document for.
        error = refused(core, "move", source="clean.py", destination="untitled.py")
        assert error.kind == "dirty_buffer"
        assert not (workspace / "untitled.py").exists()
        # A document open without unsaved changes may move (the editor follows or closes it).
        calls.call(core, "move", {"source": "clean.py", "destination": "clean2.py"})
        assert (workspace / "clean2.py").exists()
    finally:
        core.close()


def test_what_the_session_read_follows_a_moved_file_and_folder(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "d").mkdir()
    (workspace / "d" / "f.py").write_text("one\ntwo\n")
    (workspace / "g.py").write_text("x\ny\n")
    calls.call(core, "read", {"file_path": "d/f.py"})
    calls.call(core, "read", {"file_path": "g.py"})
    calls.call(core, "read", {"file_path": "g.py", "session": "other"})
    moved = calls.call(core, "move", {"source": "d", "destination": "e"})
    assert moved["read_state_followed"] == 1
    calls.call(core, "move", {"source": "g.py", "destination": "e/h.py"})
    # The mover edits at the new paths without reading again; a re-read is a stub.
    calls.call(core, "edit", {"file_path": "e/f.py", "old_string": "two", "new_string": "2"})
    assert (workspace / "e" / "f.py").read_text() == "one\n2\n"
    again = calls.call(core, "read", {"file_path": "e/h.py"})
    assert again["type"] == "file_unchanged"
    # Another session read it at the old path: told it is gone, not allowed to write it.
    error = refused(core, "edit", file_path="g.py", old_string="x", new_string="z", session="other")
    assert error.kind == "stale"
    assert error.data["deleted"] is True
    error = refused(
        core, "edit", file_path="e/h.py", old_string="x", new_string="z", session="other"
    )
    assert error.kind == "not_read"


def test_mkdir_makes_the_missing_folders_and_nothing_through_a_link_or_a_file(
    core: Readkeeper, workspace: Path, outside: Path
) -> None:
    made = calls.call(core, "mkdir", {"path": "a/b/c"})
    assert made == {"path": str(workspace / "a" / "b" / "c"), "created": True}
    assert calls.call(core, "mkdir", {"path": "a/b/c"})["created"] is False
    (workspace / "out").symlink_to(outside, target_is_directory=True)
    error = refused(core, "mkdir", path="out/planted")
    assert error.kind == "outside_workspace"
    assert sorted(os.listdir(outside)) == ["secret.txt"]
    (workspace / "file.txt").write_text("f\n")
    error = refused(core, "mkdir", path="file.txt/sub")
    assert error.kind == "bad_params"
    error = refused(core, "mkdir", path="file.txt")
    assert error.kind == "bad_params"
    assert (workspace / "file.txt").read_text() == "f\n"


def test_a_patch_dry_run_writes_and_records_nothing(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "p.py"
    path.write_text("a\nb\n")
    stat_before = path.stat()
    shown = calls.call(
        core,
        "patch",
        {"file_path": "p.py", "edits": [{"old_string": "a", "new_string": "A"}], "dry_run": True},
    )
    # Refused for want of a read: no diff over text the session has not seen, but why.
    assert shown["diff"] == ""
    assert "will be refused (not_read)" in shown["note"]
    assert path.read_bytes() == b"a\nb\n"
    assert path.stat().st_mtime_ns == stat_before.st_mtime_ns
    # Nothing recorded: the real patch still needs a read.
    error = refused(core, "patch", file_path="p.py", edits=[{"old_string": "a", "new_string": "A"}])
    assert error.kind == "not_read"


def patched(core: Readkeeper, workspace: Path, data: bytes, *edits: tuple[str, str]) -> bytes:
    """The bytes of a file holding `data` after a read and a patch of `edits`."""
    (workspace / "w.txt").write_bytes(data)
    calls.call(core, "read", {"file_path": "w.txt"})
    pairs = [{"old_string": old, "new_string": new} for old, new in edits]
    calls.call(core, "patch", {"file_path": "w.txt", "edits": pairs})
    return (workspace / "w.txt").read_bytes()


def test_a_patch_keeps_crlf_and_applies_replacements_in_order(
    core: Readkeeper, workspace: Path
) -> None:
    edits = [("one\ntwo", "1\n2"), ("1\n2\nthree", "1-3"), ("four", "4")]
    assert patched(core, workspace, b"one\r\ntwo\r\nthree\r\nfour\r\n", *edits) == b"1-3\r\n4\r\n"


def test_a_patch_sees_crlf_as_lf_in_the_file_and_in_its_strings(
    core: Readkeeper, workspace: Path
) -> None:
    # endings.lf, the edits' one rule: a CRLF in the file or in old_string matches an LF,
    # and what the patch puts in takes the file's dominant ending (here CRLF); a lone CR
    # is text.
    edits = [("a\r\nb", "A\r\nB"), ("c\nd", "C\nD")]
    after = patched(core, workspace, b"a\r\nb\r\nc\nd\r\nlone\rcr\n", *edits)
    assert after == b"A\r\nB\r\nC\r\nD\r\nlone\rcr\n"


async def test_over_lsp_patch_stat_move_and_mkdir_answer_and_refuse_with_kinds(
    lsp: Session, workspace: Path
) -> None:
    path = workspace / "l.py"
    path.write_text("a = 1\nb = 2\n")
    request = lsp.client.request
    error = await lsp.error(
        "readkeeper/patch",
        {"file_path": str(path), "edits": [{"old_string": "a = 1", "new_string": "a = 3"}]},
    )
    assert error.data["kind"] == "not_read"
    await lsp.read(path)
    done = await request(
        "readkeeper/patch",
        {
            "file_path": str(path),
            "edits": [
                {"old_string": "a = 1", "new_string": "a = 3"},
                {"old_string": "b = 2", "new_string": "b = 4"},
            ],
        },
    )
    assert "+a = 3" in done["diff"]
    assert path.read_text() == "a = 3\nb = 4\n"
    info = await request("readkeeper/stat", {"path": str(path)})
    assert info["kind"] == "file"
    assert info["read_by_session"] is True
    await request("readkeeper/mkdir", {"path": str(workspace / "pkg")})
    moved = await request(
        "readkeeper/move", {"source": str(path), "destination": str(workspace / "pkg" / "l.py")}
    )
    assert moved["destination"] == str(workspace / "pkg" / "l.py")
    error = await lsp.error(
        "readkeeper/move", {"source": str(workspace / "pkg"), "destination": str(workspace / "pkg")}
    )
    assert error.data["kind"] == "bad_params"


def test_a_moved_images_note_promises_no_edit(core: Readkeeper, workspace: Path) -> None:
    # Round 32: an image renamed i.txt (still read as an image: its bytes say so) was
    # told "you may edit there without reading again"; an edit is `binary`.
    from PIL import Image

    Image.new("RGB", (4, 4)).save(workspace / "i.png")
    calls.call(core, "read", {"file_path": "i.png"})
    moved = calls.call(core, "move", {"source": "i.png", "destination": "i.txt"})
    assert moved["read_state_followed"] == 1
    assert "edit" not in moved["note"], moved["note"]
    assert calls.call(core, "read", {"file_path": "i.txt"})["type"] == "file_unchanged"


def test_a_text_file_that_read_as_none_in_a_race_is_stale_not_unsupported(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 48: while a folder on its way was swapped for a link out, the drop-in's
    edit_file of a 7-byte text file said it "is not a text file readkeeper can edit
    exactly": its text could not be read in the swap, and was read back whole a moment
    later. A file that reads as text once looked at again changed as it was read."""
    (workspace / "w.txt").write_bytes(b"alpha\n")
    calls.call(core, "read", {"file_path": "w.txt"})
    monkeypatch.setattr(Readkeeper, "disk_text", lambda self, real_path: None)  # the swap
    edits = [{"old_string": "a", "new_string": "A"}]
    error = refused(core, "patch", file_path="w.txt", edits=edits)
    assert error.kind == "stale", error
    assert (workspace / "w.txt").read_bytes() == b"alpha\n"
