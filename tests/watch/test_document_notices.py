"""A change notice of an image, PDF or notebook the session read says what changed in
the terms the agent read it in: the pages or cells it holds, never "not text now" (a PDF
never was) nor a JSON diff passed off as the notebook the agent read as cells."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from document_samples import encode, numbered_pdf, screenshot

from readkeeper.protocol import ReadParams
from watch_core_helpers import Watching


@pytest.fixture
def watching(workspace: Path) -> Iterator[Watching]:
    w = Watching(workspace)
    yield w.start()
    w.close()


def notebook(sources: list[str]) -> str:
    cells = [
        {"cell_type": "code", "id": f"c{i}", "metadata": {}, "source": source, "outputs": []}
        | {"execution_count": None}
        for i, source in enumerate(sources)
    ]
    return json.dumps(
        {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1
    )


def test_a_changed_pdf_or_image_names_what_the_agent_read_of_it(
    watching: Watching, workspace: Path
) -> None:
    (workspace / "book.pdf").write_bytes(numbered_pdf(40, lines=3))
    (workspace / "shot.png").write_bytes(encode(screenshot(640, 400), "PNG"))
    watching.core.read(ReadParams(file_path="book.pdf", pages="2-3"))
    watching.read("shot.png")
    (workspace / "book.pdf").write_bytes(numbered_pdf(40, lines=4))
    (workspace / "shot.png").write_bytes(encode(screenshot(641, 400), "PNG"))
    [pdf] = watching.wait_notice("book.pdf")
    [image] = watching.wait_notice("shot.png")
    assert pdf.note is not None
    assert image.note is not None
    assert "not text" not in pdf.note
    assert "not text" not in image.note
    assert "since you read pages 2-3 of 40 as text" in pdf.note
    assert "since you read the image as sent to you (640x400" in image.note


def test_a_changed_notebook_says_its_diff_is_of_the_json(
    watching: Watching, workspace: Path
) -> None:
    path = workspace / "nb.ipynb"
    path.write_text(notebook(["x = 1", "y = 2", "z = 3"]))
    watching.read("nb.ipynb")
    path.write_text(notebook(["x = 1", "y = 42", "z = 3"]))
    [change] = watching.wait_notice("nb.ipynb")
    assert '+   "source": "y = 42"' in change.diff
    assert change.note is not None
    assert "notebook's JSON" in change.note
    assert "you read all 3 cells" in change.note
