"""What the editor gives as a workspace folder, at `initialize` or added later: a root
that is not a folder when it is given (a file, a link to one) is not taken, the user is
told once (window/showMessage, as for `/` or home), and no refusal lists it; a folder
given through a symlink is reached by either name and answered by its real path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from raw_lsp import RawServer
from test_lsp_lifecycle import kind, read, wait_for_shown_message

NOT_A_FOLDER = "is not a workspace root for readkeeper: it is not a folder"


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    """A file in a folder of its own, outside the workspace."""
    folder = tmp_path / "proj"
    folder.mkdir()
    file = folder / "notes.txt"
    file.write_text("a file, not a folder\n")
    return file.resolve()


def roots_named(reply: dict[str, Any]) -> list[str]:
    """The roots an `outside_workspace` refusal lists."""
    assert kind(reply) == "outside_workspace", reply
    roots: list[str] = reply["error"]["data"]["roots"]
    return roots


@pytest.mark.parametrize("given", ["rootUri", "rootPath", "workspaceFolders"])
def test_a_file_given_at_initialize_is_no_root(given: str, notes: Path, workspace: Path) -> None:
    (workspace / "ok.txt").write_text("inside\n")
    params: dict[str, Any] = {
        "rootUri": {"rootUri": notes.as_uri()},
        "rootPath": {"rootPath": str(notes)},
        "workspaceFolders": {
            "workspaceFolders": [
                {"uri": notes.as_uri(), "name": "notes"},
                {"uri": workspace.as_uri(), "name": "ws"},
            ]
        },
    }[given]
    taken = [str(workspace)] if given == "workspaceFolders" else []
    server = RawServer()
    try:
        server.initialize(None, **params)
        wait_for_shown_message(server, f"{notes} {NOT_A_FOLDER}")
        refused = read(server, 2, notes)
        assert roots_named(refused) == taken
        assert "no longer" not in refused["error"]["message"]
        assert roots_named(read(server, 3, notes.parent / "other.txt")) == taken
        if taken:
            assert read(server, 4, "ok.txt")["result"]["file"]["content"] == "     1\tinside"
    finally:
        server.close()
    assert f"{notes} {NOT_A_FOLDER}" in server.stderr  # in the log too


def test_a_file_added_as_a_workspace_folder_is_no_root(
    tmp_path: Path, notes: Path, workspace: Path
) -> None:
    (workspace / "inside.txt").write_text("inside\n")
    link = tmp_path / "notes-link"
    link.symlink_to(notes)
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "more.txt").write_text("added folder\n")
    server = RawServer()
    try:
        server.initialize(workspace)
        added = [
            {"uri": (workspace / "inside.txt").as_uri(), "name": "a file inside"},
            {"uri": link.as_uri(), "name": "a link to a file"},
            {"uri": extra.as_uri(), "name": "extra"},
        ]
        server.notify(
            "workspace/didChangeWorkspaceFolders", {"event": {"added": added, "removed": []}}
        )
        wait_for_shown_message(server, f"{workspace / 'inside.txt'} {NOT_A_FOLDER}")
        wait_for_shown_message(server, f"{link} {NOT_A_FOLDER}")
        assert read(server, 2, extra / "more.txt")["result"]["file"]["content"].endswith(
            "added folder"
        )
        assert roots_named(read(server, 3, notes)) == [str(workspace), str(extra.resolve())]
        # The file inside is still read as part of its folder.
        inside = read(server, 4, workspace / "inside.txt")
        assert inside["result"]["file"]["content"] == "     1\tinside"
    finally:
        server.close()


def test_a_folder_added_through_a_link_is_reached_by_either_name_and_answered_by_its_real_path(
    tmp_path: Path, workspace: Path
) -> None:
    real = tmp_path / "real-extra"
    real.mkdir()
    (real / "a.txt").write_text("alpha\n")
    link = tmp_path / "extra-link"
    link.symlink_to(real)
    server = RawServer()
    try:
        server.initialize(workspace)
        added = [{"uri": link.as_uri(), "name": "extra"}]
        server.notify(
            "workspace/didChangeWorkspaceFolders", {"event": {"added": added, "removed": []}}
        )
        for id_, given in enumerate((link / "a.txt", real / "a.txt"), start=2):
            file = read(server, id_, given)["result"]["file"]
            assert file["file_path"] == str(real.resolve() / "a.txt")
        outside = tmp_path / "outside.txt"
        assert roots_named(read(server, 5, outside)) == [str(workspace), str(real.resolve())]
    finally:
        server.close()


def test_a_folder_not_made_yet_is_taken_and_served_once_made(tmp_path: Path) -> None:
    # A clone in progress: the editor names the folder before git makes it. Until then a
    # read says the folder is not there yet (it said "no longer exists ... deleted").
    later = tmp_path / "later"
    server = RawServer()
    try:
        server.initialize(None, rootUri=later.as_uri())
        refused = read(server, 2, later / "a.txt")
        assert kind(refused) == "not_found", refused
        assert "has not been made yet" in refused["error"]["message"]
        assert refused["error"]["data"]["root_missing"] is True
        later.mkdir()
        (later / "a.txt").write_text("made\n")
        assert read(server, 3, later / "a.txt")["result"]["file"]["content"] == "     1\tmade"
    finally:
        server.close()
