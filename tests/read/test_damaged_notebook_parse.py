"""A damaged notebook is settled damaged without the parse a valid one gets.

orjson sets aside many times a file's size before it parses it, and Python's json
built the whole tree of a notebook with a merge marker after its end before it failed
("Extra data"): a 70 MB damaged notebook's read grew the server by about 1 GB, 300 MB
more than a valid one of that size (bench/bench_damaged_notebook.py). A line that starts
with a merge conflict's marker is in no JSON, so orjson is not asked; Python's json
finds where it breaks keeping no object. The refusal, and the text view it leads to,
are as they were."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import ReadParams, unstructure
from readkeeper.read.readers import notebook_parse

CELLS = [{"cell_type": "code", "metadata": {}, "source": [f"x = {i}\n"]} for i in range(50)]
GOOD = json.dumps({"cells": CELLS, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def _no_orjson(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []

    def loads(data: Any) -> Any:
        calls.append(len(data))
        raise AssertionError("orjson was asked")

    monkeypatch.setattr(notebook_parse.orjson, "loads", loads)
    return calls


@pytest.mark.parametrize(
    "damaged",
    [GOOD + "\n<<<<<<< HEAD\n", "<<<<<<< HEAD\n" + GOOD, GOOD.replace("\n", "\n=======\n", 1)],
)
def test_a_conflicted_notebook_is_refused_without_orjson(
    monkeypatch: pytest.MonkeyPatch, damaged: str
) -> None:
    calls = _no_orjson(monkeypatch)
    with pytest.raises(ReadkeeperError) as refused:
        notebook_parse.parse(damaged.encode(), "/w/nb.ipynb")
    assert calls == []
    assert refused.value.kind == "corrupt"
    assert "is not valid JSON" in refused.value.message
    assert refused.value.data["line"] >= 1


def test_the_refusal_names_the_line_python_names(monkeypatch: pytest.MonkeyPatch) -> None:
    damaged = GOOD + "\n<<<<<<< HEAD\n"
    try:
        json.loads(damaged)
    except json.JSONDecodeError as exc:
        expected = (exc.msg, exc.lineno, exc.colno)
    with pytest.raises(ReadkeeperError) as refused:
        notebook_parse.parse(damaged.encode(), "/w/nb.ipynb")
    data = refused.value.data
    assert (data["detail"], data["line"], data["column"]) == expected
    assert "<<<<<<< HEAD" in data["excerpt"]


def test_a_conflicted_notebook_is_read_as_its_text(
    monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    calls = _no_orjson(monkeypatch)
    path = workspace / "nb.ipynb"
    path.write_text(GOOD + "\n<<<<<<< HEAD\n")
    result = unstructure(Readkeeper(roots=[str(workspace)]).read(ReadParams(str(path), limit=5)))
    assert calls == []
    assert result["type"] == "text"
    assert "is not a valid notebook (Extra data at line" in result["file"]["note"]
