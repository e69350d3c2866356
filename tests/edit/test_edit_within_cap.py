"""An edit never grows a file past the cap its edits are held to (max_size_bytes for a
text file, max_document_bytes for a notebook, as read or as its text): made, it would
leave a file readkeeper no longer reads or edits whole, the agent locked out (round 29:
a damaged notebook's edit took it past max_document_bytes; every read, edit and write
after was refused). Refused `too_large`, the file as it was; a smaller change goes on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import EditParams, ReadParams, WriteParams

CONFLICT = '<<<<<<< HEAD\n "nbformat": 4,\n=======\n "nbformat": 5,\n>>>>>>> b'


def _edit(core: Readkeeper, path: Path, old: str, new: str) -> None:
    core.edit(EditParams(file_path=str(path), old_string=old, new_string=new))


@pytest.mark.parametrize("kind", ["text", "damaged notebook"])
def test_an_edit_past_the_cap_is_refused_and_a_smaller_one_made(workspace: Path, kind: str) -> None:
    if kind == "text":
        path, setting = workspace / "a.txt", "max_size_bytes"
        path.write_text("x = 1\n" + "# pad\n" * 150)  # 906 bytes
    else:
        path, setting = workspace / "d.ipynb", "max_document_bytes"
        cell = {"cell_type": "code", "id": "c1", "metadata": {}, "execution_count": None}
        book = {"cells": [{**cell, "outputs": [], "source": "x = 1"}], "metadata": {}}
        text = json.dumps({**book, "nbformat": 4, "nbformat_minor": 5}, indent=1)
        path.write_text(text.replace(' "nbformat": 4,', CONFLICT) + " " * 600)
    core = Readkeeper(roots=[str(workspace)], client_settings={setting: 1_000})
    try:
        core.read(ReadParams(file_path=str(path)))
        before = path.read_bytes()
        with pytest.raises(ReadkeeperError) as refused:
            _edit(core, path, "x = 1", "x = 1" + "2" * 200)
        assert refused.value.kind == "too_large"
        assert "The change was not made" in refused.value.message, refused.value.message
        assert setting in refused.value.message
        assert path.read_bytes() == before
        _edit(core, path, "x = 1", "x = 2")  # within the cap: made
        assert b"x = 2" in path.read_bytes()
    finally:
        core.close()


@pytest.mark.parametrize(
    ("name", "setting"), [("new.txt", "max_size_bytes"), ("new.ipynb", "max_document_bytes")]
)
def test_a_write_never_makes_a_file_past_the_cap(workspace: Path, name: str, setting: str) -> None:
    # Round 30: a write made a new file past the cap ("you hold all of it now"), after
    # which every read, edit and write of it was refused `too_large`.
    core = Readkeeper(roots=[str(workspace)], client_settings={setting: 1_000})
    path = workspace / name
    big = json.dumps(
        {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5, "pad": "x" * 2_000}
    )
    small = big.replace("x" * 2_000, "x")
    try:
        with pytest.raises(ReadkeeperError) as refused:
            core.write(WriteParams(file_path=str(path), content=big))
        assert refused.value.kind == "too_large"
        assert setting in refused.value.message
        assert not path.exists()
        core.write(WriteParams(file_path=str(path), content=small))  # within it: made
        assert path.read_text() == small
        core.read(ReadParams(file_path=str(path), force=True))
    finally:
        core.close()
