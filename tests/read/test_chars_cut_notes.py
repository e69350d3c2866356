"""A read cut by the characters it sends (read/room.py) says so in characters, and a line
alone over them names the lines after it (round 38, A5: with max_line_chars raised, a
read stopped before a line of 450,000 spaces named `offset=2`, refused, and no call
named line 3; its note said "about 113,000 tokens" of a file of 3,500)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import read
from readkeeper import hints
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError


def test_a_line_over_the_characters_names_the_lines_after_it(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "one.txt").write_text("a\n" + " " * 450_000 + "Z\nb\n")
    core.configure({"max_tokens": 200_000, "max_line_chars": 1_000_000, "max_size_bytes": 2 << 20})
    note = str(read(core, workspace / "one.txt")["file"]["note"])  # type: ignore[index]
    assert "the file is 450,006 characters, over the 400,000 characters" in note, note
    with pytest.raises(ReadkeeperError) as refused:
        read(core, workspace / "one.txt", offset=2)
    assert f"The lines after it: {hints.again(offset=3)}." in refused.value.message
    after = read(core, workspace / "one.txt", offset=3)
    assert after["file"]["content"] == "     3\tb"  # type: ignore[index]
