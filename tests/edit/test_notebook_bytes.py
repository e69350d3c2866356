"""A cell edit keeps every byte of the notebook outside what it changes (edit/notebook_splice.py):
the BOM, line endings, indentation of any width or none, odd number spellings, escapes,
duplicated keys; what it writes new follows the layout around it."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import pytest
from document_samples import every_output_notebook

from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import NotebookEditParams, ReadParams, structure, unstructure

BOM = "\ufeff"
# Spellings json.dumps would change (1.10, 1e5, "\/", a long float, 1e400, a key twice).
ODD = '{"x": 1.10, "y": 1e5, "s": "x\\/", "pi": 3.14159265358979323846, "big": 1e400, ' + (
    '"d": 1, "d": 2}'
)


@dataclass(frozen=True)
class Layout:
    unit: str | None  # one indent step; None: compact, on one line
    newline: str = "\n"
    bom: bool = False
    ascii_only: bool = False

    def dump(self, value: Any, depth: int) -> str:
        if self.unit is None:
            return json.dumps(value, separators=(",", ":"), ensure_ascii=self.ascii_only)
        text = json.dumps(value, indent=self.unit, ensure_ascii=self.ascii_only, sort_keys=True)
        return text.replace("\n", self.newline + self.unit * depth)


LAYOUTS = {
    "jupyter": Layout(" "),
    "indent4": Layout("    "),
    "tabs": Layout("\t"),
    "compact": Layout(None),
    "crlf": Layout("  ", "\r\n"),
    "bom": Layout(" ", bom=True),
    "ascii": Layout(" ", ascii_only=True),
}


def sample_cell(number: int) -> dict[str, Any]:
    return {
        "cell_type": "code",
        "execution_count": number,
        "id": f"c{number}",
        "metadata": {"n": 0},
        "outputs": [{"output_type": "stream", "name": "stdout", "text": ["Café ☃\n"]}],
        "source": [f"cell_{number} = {number}\n", "print('é')"],
    }


class Notebook:
    """A notebook's text as head + cells joined by sep + tail, to say what an edit must
    leave exactly as it was."""

    def __init__(self, layout: Layout) -> None:
        unit, nl = layout.unit, layout.newline
        self.layout = layout
        # Odd spellings inside each cell too, where a whole-file rewrite would change them.
        odd = '"n": 1.10, "m": 1E2, "n": 3' if unit is not None else '"n":1.10,"m":1E2,"n":3'
        self.cells = [
            layout.dump(sample_cell(i), 2).replace('"n": 0' if unit is not None else '"n":0', odd)
            for i in (1, 2, 3)
        ]
        if unit is None:
            self.head, self.sep = '{"cells":[', ","
            self.tail = f'],"metadata":{ODD},"nbformat":4,"nbformat":4,"nbformat_minor":5}}'
        else:
            self.head = "{" + nl + unit + '"cells": [' + nl + unit * 2
            self.sep = "," + nl + unit * 2
            self.tail = (
                f"{nl}{unit}],{nl}{unit}"
                f'"metadata": {ODD},{nl}{unit}"nbformat": 4,{nl}{unit}"nbformat": 4,'
                f'{nl}{unit}"nbformat_minor": 5{nl}}}{nl}'
            )

    def text(self, cells: list[str]) -> str:
        return self.head + self.sep.join(cells) + self.tail

    def data(self, cells: list[str]) -> bytes:
        return ((BOM if self.layout.bom else "") + self.text(cells)).encode("utf-8")

    def prefix(self, cells: list[str]) -> bytes:
        """The file's bytes up to what an edit after `cells` writes."""
        kept = "".join(cell + self.sep for cell in cells)
        return ((BOM if self.layout.bom else "") + self.head + kept).encode("utf-8")

    def suffix(self, cells: list[str]) -> bytes:
        """The file's bytes after what an edit before `cells` writes."""
        return ("".join(self.sep + cell for cell in cells) + self.tail).encode("utf-8")


def read(core: Readkeeper, path: Path) -> None:
    core.read(ReadParams(file_path=str(path)))


def edit(core: Readkeeper, path: Path, **params: Any) -> dict[str, Any]:
    raw = {"file_path": str(path), **params}
    result: dict[str, Any] = unstructure(core.edit_cell(structure(raw, NotebookEditParams)))
    return result


def middle(after: bytes, prefix: bytes, suffix: bytes) -> str:
    """What the edit wrote between the bytes it had to keep."""
    assert after.startswith(prefix), difflib.ndiff([prefix.decode()], [after.decode()])
    assert after.endswith(suffix)
    assert len(after) >= len(prefix) + len(suffix)
    return after[len(prefix) : len(after) - len(suffix)].decode("utf-8")


def laid_out_like(written: str, layout: Layout) -> None:
    if layout.unit is None:
        assert "\n" not in written
        return
    lines = written.split(layout.newline)
    assert "\n" not in "".join(lines)  # no other line ending mixed in
    assert all(line.startswith(layout.unit * 2) for line in lines[1:])


@pytest.fixture(params=sorted(LAYOUTS))
def notebook(request: pytest.FixtureRequest, core: Readkeeper, workspace: Path) -> Notebook:
    made = Notebook(LAYOUTS[request.param])
    path = workspace / "nb.ipynb"
    path.write_bytes(made.data(made.cells))
    read(core, path)
    return made


def test_a_replaced_source_changes_only_its_value(
    core: Readkeeper, workspace: Path, notebook: Notebook
) -> None:
    path, (one, two, three) = workspace / "nb.ipynb", notebook.cells
    edit(core, path, cell_id="c2", new_source="x = 1\nprint('bye ☃')")
    written = middle(path.read_bytes(), notebook.prefix([one]), notebook.suffix([three]))
    assert written.startswith(two[: two.index('"source"')])  # its own bytes up to the source
    assert json.loads(written)["source"] == ["x = 1\n", "print('bye ☃')"]
    laid_out_like(written, notebook.layout)


def test_a_deleted_cell_takes_only_its_bytes_and_one_comma(
    core: Readkeeper, workspace: Path, notebook: Notebook
) -> None:
    path, (one, _, three) = workspace / "nb.ipynb", notebook.cells
    edit(core, path, cell_id="c2", edit_mode="delete")
    assert path.read_bytes() == notebook.data([one, three])
    edit(core, path, cell_id="c1", edit_mode="delete")
    assert path.read_bytes() == notebook.data([three])
    edit(core, path, cell_id="c3", edit_mode="delete")
    empty = notebook.head.rstrip(" \t\r\n") + notebook.tail.lstrip(" \t\r\n")
    assert path.read_bytes() == ((BOM if notebook.layout.bom else "") + empty).encode()


def test_an_inserted_cell_is_laid_out_like_its_neighbours(
    core: Readkeeper, workspace: Path, notebook: Notebook
) -> None:
    path, (one, two, three) = workspace / "nb.ipynb", notebook.cells
    edit(core, path, cell_id="c2", edit_mode="insert", new_source="new = 1", cell_type="markdown")
    written = middle(path.read_bytes(), notebook.prefix([one, two]), notebook.suffix([three]))
    assert json.loads(written)["source"] in ("new = 1", ["new = 1"])
    laid_out_like(written, notebook.layout)
    edit(core, path, edit_mode="insert", new_source="top = 0")
    after = path.read_bytes()
    rest = after[len(notebook.prefix([])) :].decode()
    assert after.startswith(notebook.prefix([]))
    top, kept = rest.split(notebook.sep + one, 1)
    assert json.loads(top)["source"] in ("top = 0", ["top = 0"])
    assert kept.startswith(notebook.sep + two + notebook.sep + written + notebook.sep + three)
    laid_out_like(top, notebook.layout)


def test_a_retyped_cell_keeps_its_other_members(
    core: Readkeeper, workspace: Path, notebook: Notebook
) -> None:
    path, (one, _, three) = workspace / "nb.ipynb", notebook.cells
    edit(core, path, cell_id="c2", new_source="# prose", cell_type="markdown")
    written = middle(path.read_bytes(), notebook.prefix([one]), notebook.suffix([three]))
    assert "1.10" in written  # its metadata's own spelling
    assert "1E2" in written
    cell = json.loads(written)
    assert cell["cell_type"] == "markdown"
    assert not {"outputs", "execution_count"} & set(cell)
    nbformat.validate(nbformat.reads(path.read_bytes().decode("utf-8-sig"), as_version=4))


def test_a_jupyter_notebook_changes_by_the_cells_lines_only(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "real.ipynb"
    nbformat.write(nbformat.from_dict(every_output_notebook()), str(path))
    cells = unstructure(core.read(ReadParams(file_path=str(path))))["file"]["cells"]
    edit(core, path, cell_id=cells[2]["cell_id"], new_source="a = 1\nb = 2\n")
    edit(core, path, cell_id=cells[4]["cell_id"], edit_mode="delete")
    edit(core, path, cell_id=cells[0]["cell_id"], edit_mode="insert", new_source="c = 3")
    after = path.read_text()
    assert "\n\n" not in after
    # What nbformat itself writes of the result is what the edit wrote.
    assert nbformat.writes(nbformat.reads(after, as_version=4)) + "\n" == after


def test_a_key_the_edit_must_change_twice_over_is_refused_not_reformatted(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "twice.ipynb"
    text = (
        '{"cells": [{"cell_type": "code", "execution_count": null, "id": "a", "metadata": {}, '
        '"outputs": [], "source": "old", "source": "older"}], "metadata": {}, '
        '"nbformat": 4, "nbformat_minor": 5}'
    )
    path.write_text(text)
    read(core, path)
    with pytest.raises(ReadkeeperError) as caught:
        edit(core, path, cell_id="a", new_source="new")
    assert caught.value.kind == "unsupported"
    assert "old_string" in caught.value.message
    assert path.read_text() == text
    edit(core, path, cell_id="a", edit_mode="insert", new_source="after = 1")
    assert path.read_text().startswith(text[: text.index("]")])


def test_a_lone_surrogate_in_new_source_is_refused_not_written_as_bad_utf8(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "nb.ipynb"
    nbformat.write(nbformat.from_dict(every_output_notebook()), str(path))
    before = path.read_bytes()
    target = unstructure(core.read(ReadParams(file_path=str(path))))["file"]["cells"][0]
    with pytest.raises(ReadkeeperError) as caught:
        edit(core, path, cell_id=target["cell_id"], new_source="bad \ud800")
    assert caught.value.kind == "unsupported"
    assert "U+D800" in caught.value.message
    assert path.read_bytes() == before
