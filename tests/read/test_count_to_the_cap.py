"""A read of a file over `max_tokens` counts only as far as its decision needs (issue
34): a forced whole read is cut at the cap, a ranged read over it is refused, and
neither counts the text far past the cap (the count is the costly part of both)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helpers import read, refused
from readkeeper.core import Readkeeper

CAP = 3000
LINES = 20_000  # about 40 times the cap


class EncodeSpy:
    """The core's encoding, adding up the characters it is asked to count."""

    def __init__(self, core: Readkeeper) -> None:
        core.tokens.warm_up()
        self._original: Any = core.tokens._encoding
        core.tokens._encoding = self
        self.chars = 0

    def encode_ordinary(self, text: str) -> list[int]:
        self.chars += len(text)
        result: list[int] = self._original.encode_ordinary(text)
        return result


@pytest.fixture
def big(workspace: Path) -> Path:
    path = workspace / "big.txt"
    path.write_text("".join(f"entry {i}: value {i * 7919 % 100_003} ok\n" for i in range(LINES)))
    return path


def spied(workspace: Path) -> tuple[Readkeeper, EncodeSpy]:
    core = Readkeeper(
        roots=[str(workspace)], client_settings={"max_tokens": CAP, "max_size_bytes": 10**7}
    )
    return core, EncodeSpy(core)


def test_a_forced_whole_read_over_the_cap_counts_about_the_cap(workspace: Path, big: Path) -> None:
    core, spy = spied(workspace)
    file = read(core, big, force=True)["file"]
    assert isinstance(file, dict)
    assert file["partial"] is True
    shown = len(str(file["content"]))
    assert spy.chars < 4 * shown  # what is shown, the next block, the next call's fit
    assert spy.chars < big.stat().st_size // 5


def test_a_ranged_read_over_the_cap_is_refused_without_counting_the_whole_range(
    workspace: Path, big: Path
) -> None:
    core, spy = spied(workspace)
    error = refused(core, big, offset=1, limit=LINES)
    assert error.kind == "token_limit"
    assert spy.chars < big.stat().st_size // 5
    assert error.data["tokens"] > CAP * 10  # the whole range's, scaled from the counted
    assert "about" in error.message
