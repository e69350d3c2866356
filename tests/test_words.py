"""One way to count in words: no message says "1 lines", "1 cells" or "(s)"."""

from __future__ import annotations

import re
from pathlib import Path

from readkeeper import render
from readkeeper.words import count

SOURCES = Path(__file__).resolve().parent.parent


def test_a_count_of_one_is_singular_and_any_other_plural() -> None:
    assert count(1, "line") == "1 line"
    assert count(0, "line") == "0 lines"
    assert count(2, "match") == "2 matches"
    assert count(1, "entry") == "1 entry"
    assert count(3, "entry") == "3 entries"
    assert count(12345, "token", grouped=True) == "12,345 tokens"
    assert count(None, "line") == "None lines"


def test_one_replacement_one_line_one_cell_one_page_in_words() -> None:
    edited = render.change(
        "edit",
        {"file_path": "/w/a.py", "replacements": 1, "lines": [3, 3], "applied_to": "disk"},
    )
    assert "1 replacement at" in edited
    assert "(s)" not in edited
    written = render.change(
        "write", {"file_path": "/w/a.py", "created": True, "total_lines": 1, "applied_to": "disk"}
    )
    assert "(1 line)" in written
    cells = render.notebook({"file_path": "/w/n.ipynb", "total_cells": 1, "cells": []})
    assert "notebook, 1 cell" in cells
    assert "1 cells" not in cells
    outline = render.read(
        {
            "type": "outline",
            "file": {
                "file_path": "/w/a.py",
                "total_lines": 1,
                "symbols": 1,
                "shown_symbols": 1,
                "tokens": 1,
                "language": "python",
            },
        }
    )
    assert "outline of 1 line (python), 1 of 1 symbol, 1 token" in outline


def test_no_message_counts_with_a_parenthesised_plural() -> None:
    # "{n} line(s)": the words helper says it right for every n.
    pattern = re.compile(r"\}[^\"'{}]{0,40}\w\(s\)")
    found = [
        f"{path.relative_to(SOURCES)}:{number}: {line.strip()}"
        for folder in ("server", "attachments")
        for path in sorted((SOURCES / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == []
