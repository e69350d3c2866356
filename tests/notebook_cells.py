"""Notebooks for tests: a code cell as Jupyter writes one, and the core's read and cell
edit as a request makes them (structured from the params' JSON)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from readkeeper.core import Readkeeper
from readkeeper.protocol import NotebookEditParams, ReadParams, structure, unstructure


def code_cell(source: str, cell_id: str | None = None) -> dict[str, Any]:
    """A code cell with no outputs; an `id` only when given."""
    made: dict[str, Any] = {
        "cell_type": "code",
        "execution_count": None,
        "metadata": {},
        "outputs": [],
        "source": [source],
    }
    if cell_id is not None:
        made["id"] = cell_id
    return made


def read(core: Readkeeper, path: Path, **params: Any) -> dict[str, Any]:
    """The core's read of `path`, as JSON."""
    result: dict[str, Any] = unstructure(core.read(ReadParams(file_path=str(path), **params)))
    return result


def edit(core: Readkeeper, path: Path, **params: Any) -> dict[str, Any]:
    """The core's cell edit of `path`, as JSON."""
    raw = {"file_path": str(path), **params}
    result: dict[str, Any] = unstructure(core.edit_cell(structure(raw, NotebookEditParams)))
    return result


def numbered_notebook(count: int, secret: bool = True) -> str:
    """A v4 notebook of `count` code cells (`x = N`, then `SECRETN` when `secret`), ids
    c0, c1, ..., as indented JSON text (no line break after it)."""
    cells = [
        {
            "cell_type": "code",
            "metadata": {},
            "source": [f"x = {i}\n", *([f"SECRET{i}\n"] if secret else [])],
            "outputs": [],
            "execution_count": None,
            "id": f"c{i}",
        }
        for i in range(count)
    ]
    book = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(book, indent=1)
