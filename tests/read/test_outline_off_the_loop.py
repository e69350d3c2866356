"""An outline's parse never runs on a front end's event loop (loop_guard.py, issue 34):
a whole read of a big source file on the loop leaves it (`OffTheLoop`) before the
parse, both when its size alone says it is over `outline_over_tokens` (before the file
is even loaded) and when the count decides it; the read made off the loop is the
outline a new core gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import read
from readkeeper.core import Readkeeper
from readkeeper.files.fileio import digest
from readkeeper.read.loop_guard import OffTheLoop, on_the_loop
from readkeeper.read.readers import outline
from readkeeper.read.readers.grammars import PYTHON


def module(classes: int, tag: str) -> str:
    """A module of `classes` small classes, its names its own (no other test's outline)."""
    return "".join(
        f"class LoopGuard{tag}{i}:\n    def method_{i}(self, value):\n"
        f"        return value * {i} + len(str(value))\n\n\n"
        for i in range(classes)
    )


@pytest.mark.parametrize(
    ("classes", "tag"),
    [(900, "Big"), (230, "Near")],  # ~90 KB: over by its size; ~23 KB: over by its count
)
def test_an_outline_read_on_the_loop_leaves_it_before_the_parse(
    workspace: Path, classes: int, tag: str
) -> None:
    text = module(classes, tag)
    path = workspace / "m.py"
    path.write_text(text)
    core = Readkeeper(roots=[str(workspace)])
    core.tokens.warm_up()
    try:
        with on_the_loop(), pytest.raises(OffTheLoop):
            read(core, "m.py")
        assert outline.recall(PYTHON, digest(text.encode())) is None  # never parsed
        result = read(core, "m.py")  # as a worker thread reads it
    finally:
        core.close()
    fresh = Readkeeper(roots=[str(workspace)])
    fresh.tokens.warm_up()
    try:
        assert result["type"] == "outline"
        assert result == read(fresh, "m.py")
    finally:
        fresh.close()
