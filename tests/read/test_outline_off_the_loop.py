"""An outline's parse never runs on a front end's event loop (loop_guard.py, issue 34):
a whole read of a big source file on the loop leaves it (`OffTheLoop`) before the
parse, both when its size alone says it may be over `outline_over_tokens` (before the
file is even loaded or counted) and when the count decides it; the read made off the
loop is the outline a new core gives, or the lines when the count finds it under."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import read
from readkeeper.core import Readkeeper
from readkeeper.files.fileio import digest
from readkeeper.read import count_cache
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
    # ~90 KB: over by its size; ~30 KB: likely over by its size; ~23 KB: over by its count
    [(900, "Big"), (300, "Likely"), (230, "Near")],
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


def test_a_read_its_size_says_is_likely_outlined_is_not_counted_on_the_loop(
    workspace: Path,
) -> None:
    # About 30 KB: its estimate is over the threshold, so the loop leaves before the
    # deciding count (which the worker thread then makes, once).
    path = workspace / "m.py"
    path.write_text(module(300, "Counted"))
    core = Readkeeper(roots=[str(workspace)])
    core.tokens.warm_up()
    try:
        looked = count_cache.STATS.lookups
        with on_the_loop(), pytest.raises(OffTheLoop):
            read(core, "m.py")
        assert count_cache.STATS.lookups == looked  # nothing counted on the loop
        assert read(core, "m.py")["type"] == "outline"
        assert count_cache.STATS.lookups > looked
    finally:
        core.close()


def test_a_read_likely_outlined_that_its_count_finds_under_is_its_lines(workspace: Path) -> None:
    # Over the threshold by its size estimate (a character a byte), under it by its
    # count: off the loop all the same, and the lines, as a core reads them.
    text = "".join(f"# {'information ' * 10}{i}\n" for i in range(260))
    assert len(text) * 5 // 16 > 8_000
    path = workspace / "notes.py"
    path.write_text(text)
    core = Readkeeper(roots=[str(workspace)])
    core.tokens.warm_up()
    try:
        with on_the_loop(), pytest.raises(OffTheLoop):
            read(core, "notes.py")
        result = read(core, "notes.py")
    finally:
        core.close()
    assert result["type"] == "text"
    assert result["file"]["content"].count("\n") == 259  # type: ignore[index]
