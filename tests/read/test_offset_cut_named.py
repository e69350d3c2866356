"""A read from an offset gets the default count of lines (or cells) from there; when the
file goes on past them, its note names the lines shown and the way on, as a whole read's
does. Round 30: the way on of a cut read, followed, showed the next 2,000 lines and said
nothing of the rest, so an agent following it believed it had reached the end."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat

from readkeeper.core import Readkeeper
from readkeeper.protocol import ReadParams, unstructure


def _read(core: Readkeeper, path: Path, **params: object) -> dict[str, object]:
    result = unstructure(core.read(ReadParams(file_path=str(path), **params)))  # type: ignore[arg-type]
    file = result["file"]
    assert isinstance(file, dict)
    return file


def test_a_text_read_from_an_offset_names_the_lines_after_it(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)])
    path = workspace / "big.txt"
    path.write_text("".join(f"line {n}\n" for n in range(5000)))
    file = _read(core, path, offset=10)
    assert file["next_offset"] == 2010
    assert "Showing lines 10-2009 of 5000" in str(file["note"])
    assert "offset=2010" in str(file["note"])
    # The caller's own count: it chose where the read ends, and is told nothing more.
    assert _read(core, path, offset=10, limit=5).get("note") is None
    # The last part: nothing after it to name.
    assert _read(core, path, offset=4001).get("note") is None


def test_a_huge_files_read_from_an_offset_names_the_lines_after_it(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"max_size_bytes": 100_000})
    path = workspace / "huge.txt"
    path.write_text("".join(f"l{n}\n" for n in range(100_000)))  # read as a stream
    file = _read(core, path, offset=2001)
    assert file["next_offset"] == 4001
    assert "Showing lines 2001-4000 (" in str(file["note"])
    assert "offset=4001" in str(file["note"])


def test_a_notebook_read_from_an_offset_names_the_cells_after_it(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"max_tokens": 200_000})
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell("") for _ in range(2100)]
    path = workspace / "n.ipynb"
    path.write_text(json.dumps(notebook))
    file = _read(core, path, offset=3)
    assert "Showing cells 3-2002 of 2100" in str(file["note"])
    assert "offset=2003" in str(file["note"])
