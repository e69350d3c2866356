"""An ignore file that is a symlink leading out of the root is never looked at by
readkeeper (files/reach.py): ripgrep, confined to the root (Landlock), cannot open it,
so whatever is there (a FIFO, nothing at all) the search answers alike and the folder
holding it is searched. Looking would tell the agent what lies outside: a FIFO there
left the folder out, with a note, and nothing there did not."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from glob_trees import make

from readkeeper import calls
from readkeeper.search import rg
from watch_core_helpers import watching_core

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify"),
    pytest.mark.skipif(rg.landlock_abi() < 1, reason="ripgrep is confined only under Landlock"),
]


def test_an_ignore_file_linking_out_is_never_looked_at(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.mkfifo(outside / "fifo")
    answers = []
    for target in ("fifo", "missing"):
        root = tmp_path / f"ws-{target}"
        make(root, ["a.py", "sub/d.py"])
        for name in (".ignore", ".gitignore"):
            (root / "sub" / name).symlink_to(outside / target)
        with watching_core(root) as core:
            for method, params in (
                ("grep", {"pattern": "x", "output": "files"}),
                ("glob", {"pattern": "**/*.py"}),
            ):
                found = calls.call(core, method, params)
                said = {os.path.relpath(p, root) for p in found.get("files", found.get("paths"))}
                answers.append((method, found["partial"], found.get("note"), sorted(said)))
    assert answers[:2] == answers[2:]  # the same whatever is outside
    assert answers[0] == ("grep", False, None, ["a.py", "sub/d.py"])
    assert answers[1] == ("glob", False, None, ["a.py", "sub/d.py"])
