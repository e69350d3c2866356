"""readkeeper/edit on notebook cells (`cell_id`, `new_source`, `edit_mode`): validated
with nbformat, written atomically, under the same read-state rules as text edits."""

from __future__ import annotations

import difflib
import json
import threading
from pathlib import Path
from typing import Any

import nbformat
import pytest
from document_samples import every_output_notebook
from notebook_cells import edit, read

from conftest import Session
from helpers import rewrite_before_every_swap
from readkeeper.core import Buffer, Readkeeper
from readkeeper.edit.commit import COMMIT_ATTEMPTS
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import (
    WriteParams,
)
from readkeeper.read.readers.notebook import SNAPSHOT_MAX_BYTES


def save(path: Path, notebook: dict[str, Any]) -> Path:
    """As Jupyter saves: nbformat.write (indent 1, sorted keys, sources as line lists)."""
    nbformat.write(nbformat.from_dict(notebook), str(path))
    return path


def refused(core: Readkeeper, path: Path, **params: Any) -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as caught:
        edit(core, path, **params)
    return caught.value


@pytest.fixture
def notebook(workspace: Path) -> Path:
    return save(workspace / "nb.ipynb", every_output_notebook())


def ids(core: Readkeeper, path: Path) -> list[str]:
    return [c["cell_id"] for c in read(core, path, force=True)["file"]["cells"]]


def test_replace_a_cell_source(core: Readkeeper, notebook: Path) -> None:
    before = notebook.read_text()
    cells = read(core, notebook)["file"]["cells"]
    target = cells[2]["cell_id"]
    result = edit(core, notebook, cell_id=target, new_source="40 + 2\n# the answer")
    assert result["edit_mode"] == "replace"
    assert result["cell_id"] == target
    assert result["index"] == 2
    assert result["total_cells"] == 9
    assert result["merged"] is False
    assert "outputs" in result["note"]
    after = notebook.read_text()
    nb = nbformat.reads(after, as_version=4)
    nbformat.validate(nb)
    assert nb.cells[2].source == "40 + 2\n# the answer"
    assert nb.cells[2].outputs[0]["data"]["text/plain"] == "42"  # kept
    # Written as Jupyter writes it: only the edited cell's lines differ.
    changed = [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="")
        if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))
    ]
    assert len(changed) == 3, changed
    # The agent's next read is a full one, not a stub, and shows the new source.
    assert result["read_state"]["next_read"] == "full"
    again = read(core, notebook)
    assert again["type"] == "notebook"
    assert again["file"]["cells"][2]["source"] == "40 + 2\n# the answer"


def test_insert_after_and_at_the_top(core: Readkeeper, notebook: Path) -> None:
    first_ids = ids(core, notebook)
    result = edit(
        core,
        notebook,
        cell_id=first_ids[1],
        edit_mode="insert",
        new_source="## Notes",
        cell_type="markdown",
    )
    assert result["index"] == 2
    assert result["cell_type"] == "markdown"
    assert result["total_cells"] == 10
    nb = nbformat.read(str(notebook), as_version=4)
    nbformat.validate(nb)
    assert nb.cells[2].cell_type == "markdown"
    assert nb.cells[2].source == "## Notes"
    assert nb.cells[2].id == result["cell_id"]
    read(core, notebook)
    top = edit(core, notebook, edit_mode="insert", new_source="import os")
    assert top["index"] == 0
    assert top["cell_type"] == "code"
    nb = nbformat.read(str(notebook), as_version=4)
    nbformat.validate(nb)
    assert nb.cells[0].source == "import os"
    assert nb.cells[0].outputs == []


def test_delete_a_cell(core: Readkeeper, notebook: Path) -> None:
    before = ids(core, notebook)
    result = edit(core, notebook, cell_id=before[6], edit_mode="delete")
    assert result["index"] == 6
    assert result["total_cells"] == 8
    assert ids(core, notebook) == before[:6] + before[7:]


def test_change_a_cell_type(core: Readkeeper, notebook: Path) -> None:
    target = ids(core, notebook)[2]
    edit(core, notebook, cell_id=target, new_source="*now prose*", cell_type="markdown")
    nb = nbformat.read(str(notebook), as_version=4)
    nbformat.validate(nb)
    assert nb.cells[2].cell_type == "markdown"
    assert "outputs" not in nb.cells[2]


def test_notebook_without_ids_uses_positions(core: Readkeeper, workspace: Path) -> None:
    raw = every_output_notebook()
    raw["nbformat_minor"] = 4
    for cell in raw["cells"]:
        del cell["id"]
    path = workspace / "old.ipynb"
    path.write_text(json.dumps(raw, indent=2) + "\n")
    assert ids(core, path)[:3] == ["cell-0", "cell-1", "cell-2"]
    result = edit(core, path, cell_id="cell-2", edit_mode="insert", new_source="x = 1")
    assert result["cell_id"] == "cell-3"
    written = json.loads(path.read_text())
    assert "id" not in written["cells"][3]
    assert written["cells"][3]["source"] == "x = 1"
    assert path.read_text().startswith('{\n  "')  # its own indent kept
    nbformat.validate(nbformat.from_dict(written))


# --- refusals -----------------------------------------------------------------------------


def test_edit_needs_a_read_first(core: Readkeeper, notebook: Path) -> None:
    error = refused(core, notebook, cell_id="x", new_source="y")
    assert error.kind == "not_read"


def test_unknown_cell_id(core: Readkeeper, notebook: Path) -> None:
    known = ids(core, notebook)
    error = refused(core, notebook, cell_id="nope", new_source="y")
    assert error.kind == "no_match"
    assert error.data["cell_ids"] == known
    assert known[0] in error.message


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"cell_id": "a"}, "new_source"),
        ({"new_source": "a"}, "cell_id"),
        ({"edit_mode": "delete"}, "cell_id"),
        ({"cell_id": "a", "new_source": "b", "edit_mode": "move"}, "edit_mode"),
        ({"cell_id": "a", "new_source": "b", "cell_type": "sql"}, "cell_type"),
    ],
)
def test_bad_params(core: Readkeeper, notebook: Path, params: dict[str, Any], field: str) -> None:
    read(core, notebook)
    error = refused(core, notebook, **params)
    assert error.kind == "bad_params"
    assert error.data["field"] == field


def test_changed_cell_is_stale_with_a_diff(core: Readkeeper, notebook: Path) -> None:
    target = read(core, notebook)["file"]["cells"][2]["cell_id"]
    changed = nbformat.read(str(notebook), as_version=4)
    changed.cells[2].source = "41 + 1  # someone else"
    nbformat.write(changed, str(notebook))
    error = refused(core, notebook, cell_id=target, new_source="40 + 2")
    assert error.kind == "stale"
    assert "someone else" in error.data["diff"]
    assert "41 + 1  # someone else" in notebook.read_text()


def test_change_elsewhere_is_merged(core: Readkeeper, notebook: Path) -> None:
    cells = read(core, notebook)["file"]["cells"]
    changed = nbformat.read(str(notebook), as_version=4)
    changed.cells[7].source = "run_later()  # someone else"
    nbformat.write(changed, str(notebook))
    theirs = notebook.read_text().split("\n")
    line = next(n for n, text in enumerate(theirs, 1) if "someone else" in text)
    result = edit(core, notebook, cell_id=cells[2]["cell_id"], new_source="40 + 2")
    assert result["merged"] is True
    assert "someone else" in result["external_change"]["diff"]
    assert result["external_change"]["lines"] == [line, line]  # in the file they left
    nb = nbformat.read(str(notebook), as_version=4)
    assert nb.cells[2].source == "40 + 2"
    assert nb.cells[7].source == "run_later()  # someone else"


class Editor:
    """The documents the editor has open, as the LSP front end lends them to the core."""

    def __init__(self) -> None:
        self.docs: dict[str, Buffer] = {}

    def get(self, real_path: str) -> Buffer | None:
        return self.docs.get(real_path)


def test_a_cell_edit_never_writes_under_unsaved_typing_in_the_editor(
    workspace: Path, notebook: Path
) -> None:
    editor = Editor()
    core = Readkeeper(roots=[str(workspace)], buffers=editor)
    target = read(core, notebook)["file"]["cells"][2]["cell_id"]
    on_disk = notebook.read_bytes()
    # The person opens the notebook and types in it, unsaved.
    typed = on_disk.decode().replace('"plot()"', '"plot()  # typed, unsaved"')
    assert typed != on_disk.decode()
    editor.docs[str(notebook)] = Buffer(typed, 5)
    error = refused(core, notebook, cell_id=target, new_source="6 * 7")
    assert error.kind == "dirty_buffer"
    assert error.data["buffer_version"] == 5
    assert notebook.read_bytes() == on_disk
    # Saved (the buffer now says what the disk says): the edit goes through.
    notebook.write_text(typed)
    editor.docs[str(notebook)] = Buffer(typed, 6, edited=False)
    read(core, notebook)
    assert edit(core, notebook, cell_id=target, new_source="6 * 7")["merged"] is False
    assert nbformat.read(str(notebook), as_version=4).cells[2].source == "6 * 7"


def test_a_notebook_of_exactly_the_snapshot_size_still_merges(
    core: Readkeeper, workspace: Path
) -> None:
    # Notebooks up to SNAPSHOT_MAX_BYTES keep what the agent read, for disjoint merges.
    notebook = every_output_notebook()
    notebook["cells"].append(nbformat.v4.new_markdown_cell("x"))
    path = save(workspace / "big.ipynb", notebook)
    notebook["cells"][-1]["source"] = "x" * (1 + SNAPSHOT_MAX_BYTES - path.stat().st_size)
    save(path, notebook)
    assert path.stat().st_size == SNAPSHOT_MAX_BYTES
    cells = read(core, path)["file"]["cells"]
    changed = nbformat.read(str(path), as_version=4)
    changed.cells[7].source = "run_later()  # someone else"
    nbformat.write(changed, str(path))
    result = edit(core, path, cell_id=cells[2]["cell_id"], new_source="40 + 2")
    assert result["merged"] is True


def test_v3_notebook_is_not_edited(core: Readkeeper, workspace: Path) -> None:
    from nbformat import v3

    nb = v3.new_notebook(worksheets=[v3.new_worksheet(cells=[v3.new_code_cell(input="1")])])
    path = workspace / "old.ipynb"
    path.write_text(v3.writes_json(nb))
    read(core, path)
    error = refused(core, path, cell_id="cell-0", new_source="2")
    assert error.kind == "unsupported"


# --- through the server -------------------------------------------------------------------


async def test_cell_edit_through_the_server(lsp: Session, workspace: Path) -> None:
    path = save(workspace / "nb.ipynb", every_output_notebook())
    cells = (await lsp.read("nb.ipynb"))["file"]["cells"]
    result = await lsp.client.request(
        "readkeeper/edit",
        {"file_path": "nb.ipynb", "cell_id": cells[1]["cell_id"], "new_source": "print('bye')"},
    )
    assert result["cell_id"] == cells[1]["cell_id"]
    assert nbformat.read(str(path), as_version=4).cells[1].source == "print('bye')"
    error = await lsp.error(
        "readkeeper/edit", {"file_path": "nb.ipynb", "cell_id": "missing", "new_source": "x"}
    )
    assert error.data["kind"] == "no_match"
    # Text edits still take old_string/new_string.
    (workspace / "a.txt").write_text("one\n")
    await lsp.read("a.txt")
    text = await lsp.client.request(
        "readkeeper/edit", {"file_path": "a.txt", "old_string": "one", "new_string": "two"}
    )
    assert text["replacements"] == 1


def test_a_notebook_rewritten_on_every_attempt_is_refused_not_clobbered(
    core: Readkeeper, notebook: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cells = read(core, notebook)["file"]["cells"]

    def change_another_cell(text: str, n: int) -> str:
        changed = nbformat.reads(text, as_version=4)
        changed.cells[7].source = f"run_later()  # change {n} by another program"
        return str(nbformat.writes(changed))

    writes = rewrite_before_every_swap(monkeypatch, notebook, change_another_cell)
    error = refused(core, notebook, cell_id=cells[2]["cell_id"], new_source="40 + 2")
    assert error.kind == "stale"
    assert "kept changing" in error.message
    assert len(writes) == COMMIT_ATTEMPTS
    assert notebook.read_text() == writes[-1]  # the other program's last write stands


def test_a_cell_edit_and_a_text_write_of_one_notebook_take_turns_under_its_lock(
    core: Readkeeper, notebook: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cell edit holds the file's lock (files/locks.py) from its first look to its
    record, as text edits do: a write of the same file from another thread waits for it,
    then finds the notebook changed since its read and is refused, so neither change is
    made on top of the other unseen. Without the lock the write would land in the middle
    of the cell edit, which would then find its file changed under it."""
    from readkeeper.edit import commit
    from readkeeper.edit import notebook as notebook_edits
    from readkeeper.files.locks import lock_for

    target = read(core, notebook)["file"]["cells"][2]["cell_id"]
    read(core, notebook, session="other")
    real = str(notebook)
    lock = lock_for(real)
    waited = threading.Event()  # the write found the file's lock taken
    progressed = threading.Event()  # the write waits for the lock, or is done
    refusals: list[ReadkeeperError] = []

    class Watched:
        """The file's lock, noting when the write has to wait for it."""

        def __enter__(self) -> None:
            if not lock.acquire(blocking=False):
                waited.set()
                progressed.set()
                lock.acquire()

        def __exit__(self, *exc: object) -> None:
            lock.release()

    def write_whole() -> None:
        try:
            core.write(WriteParams(file_path=real, content="{}\n", session="other"))
        except ReadkeeperError as exc:
            refusals.append(exc)
        finally:
            progressed.set()

    writer = threading.Thread(target=write_whole)
    validate = notebook_edits._validate

    def validate_while_the_write_runs(*args: Any) -> None:
        # The cell edit has decided, and commits next: now the write starts.
        if not writer.is_alive() and not progressed.is_set():
            writer.start()
            assert progressed.wait(30)
        validate(*args)

    monkeypatch.setattr(
        commit, "lock_for", lambda path: Watched() if path == real else lock_for(path)
    )
    monkeypatch.setattr(notebook_edits, "_validate", validate_while_the_write_runs)
    result = edit(core, notebook, cell_id=target, new_source="40 + 2")
    writer.join(30)
    assert waited.is_set(), "the write did not wait for the cell edit's lock"
    assert result["merged"] is False
    assert nbformat.reads(notebook.read_text(), as_version=4).cells[2].source == "40 + 2"
    [refusal] = refusals
    assert refusal.kind == "stale"
    assert "busy" not in refusal.data
