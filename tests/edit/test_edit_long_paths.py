"""A change of a file whose path is too long for any read to show (read/room.py: over an
eighth of max_tokens as shown) is refused as that read is, `token_limit`, never
`not_read`: the read a `not_read` names would be refused too (round 37, A6: an edit
through a short link named the read of the real path, itself refused)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError


def _deep(workspace: Path, name: str, text: str) -> Path:
    """`name` under 14 folders of 250 control characters (about 10,500 tokens shown),
    with a short link to it at the workspace's top."""
    folder = workspace.joinpath(*["\x01" * 250] * 14)
    folder.mkdir(parents=True)
    (folder / name).write_text(text)
    link = workspace / f"link-{name}"
    link.symlink_to(folder / name)
    return link


def _text_notebook() -> str:
    cell = {"cell_type": "code", "id": "c1", "metadata": {}, "outputs": [], "source": ["x = 1\n"]}
    cell["execution_count"] = None
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("edit", {"old_string": "hello", "new_string": "bye"}),
        ("write", {"content": "bye\n"}),
        ("patch", {"edits": [{"old_string": "hello", "new_string": "bye"}]}),
        ("edit", {"edits": [{"old_string": "hello", "new_string": "bye"}]}),
    ],
)
def test_a_change_of_a_file_no_read_shows_is_refused_as_its_read(
    core: Readkeeper, workspace: Path, method: str, params: dict[str, Any]
) -> None:
    link = _deep(workspace, "f.txt", "hello\n")
    with pytest.raises(ReadkeeperError) as read:
        calls.call(core, "read", {"file_path": str(link)})
    with pytest.raises(ReadkeeperError) as changed:
        calls.call(core, method, {"file_path": str(link), **params})
    assert read.value.kind == "token_limit", read.value.message
    assert changed.value.kind == "token_limit", changed.value.message
    assert "Ask the user to move the file to a shorter path" in changed.value.message
    assert link.read_text() == "hello\n"


def test_a_cell_edit_of_a_notebook_no_read_shows_is_refused_as_its_read(
    core: Readkeeper, workspace: Path
) -> None:
    link = _deep(workspace, "n.ipynb", _text_notebook())
    before = link.read_text()
    with pytest.raises(ReadkeeperError) as changed:
        calls.call(core, "edit", {"file_path": str(link), "cell_id": "c1", "new_source": "y"})
    assert changed.value.kind == "token_limit", changed.value.message
    assert link.read_text() == before


def test_a_missing_cell_id_and_the_cells_named_are_cut_as_names_are(
    core: Readkeeper, workspace: Path
) -> None:
    # The id asked for and the 20 ids named were each shown whole: 14,500 characters of
    # one refusal for ids of 3,000 (round 39).
    cells = [
        {"cell_type": "code", "id": f"{n}" + "i" * 3000, "metadata": {}, "outputs": []}
        | {"execution_count": None, "source": ["x = 1\n"]}
        for n in range(60)
    ]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (workspace / "n.ipynb").write_text(json.dumps(notebook))
    calls.call(core, "read", {"file_path": "n.ipynb"})
    with pytest.raises(ReadkeeperError) as refused:
        calls.call(
            core, "edit", {"file_path": "n.ipynb", "cell_id": "z" * 300_000, "new_source": "y"}
        )
    assert refused.value.kind == "no_match", refused.value.message[:300]
    assert len(refused.value.message) < 7_000, len(refused.value.message)
