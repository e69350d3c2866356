"""A read of a file over `max_tokens` counts only as far as its decision needs (issue
34): a forced whole read is cut at the cap, a ranged read over it is refused, and
neither counts the text far past the cap (the count is the costly part of both)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from document_samples import code_notebook, page_text, text_pdf

from helpers import read, refused
from readkeeper.core import Readkeeper

CAP = 3000
LINES = 20_000  # about 40 times the cap


class EncodeSpy:
    """The core's exact count, adding up the characters it is asked to count."""

    def __init__(self, core: Readkeeper) -> None:
        core.tokens.warm_up()
        self._original: Any = core.tokens._count
        core.tokens._count = self
        self.chars = 0

    def __call__(self, text: str) -> int:
        self.chars += len(text)
        result: int = self._original(text)
        return result


@pytest.fixture
def big(workspace: Path) -> Path:
    path = workspace / "big.txt"
    path.write_text("".join(f"entry {i}: value {i * 7919 % 100_003} ok\n" for i in range(LINES)))
    return path


def spied(workspace: Path, cap: int = CAP) -> tuple[Readkeeper, EncodeSpy]:
    core = Readkeeper(
        roots=[str(workspace)], client_settings={"max_tokens": cap, "max_size_bytes": 10**7}
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


def test_a_pdf_over_the_cap_is_not_counted_past_it(workspace: Path) -> None:
    pages = [page_text(n, lines=120) for n in range(1, 21)]
    (workspace / "long.pdf").write_bytes(text_pdf(pages))
    core, spy = spied(workspace)
    file = read(core, "long.pdf", pages="1-20")["file"]
    assert isinstance(file, dict)
    assert file["partial"] is True
    assert file["tokens"] <= CAP
    assert spy.chars < sum(map(len, pages)) // 3


def test_a_pdf_page_alone_over_the_cap_is_cut_without_counting_it_again_and_again(
    workspace: Path,
) -> None:
    page = page_text(1, lines=2000)  # about 40 times the cap of 1,000 tokens
    (workspace / "dense.pdf").write_bytes(text_pdf([page]))
    core, spy = spied(workspace, cap=1000)
    file = read(core, "dense.pdf")["file"]
    assert isinstance(file, dict)
    assert "page cut here" in str(file["content"])
    assert file["tokens"] <= 1000
    assert spy.chars < len(page) // 2  # a whole count of each shorter prefix: 10 pages


def test_a_notebook_cell_alone_over_the_cap_is_cut_without_counting_it_again_and_again(
    workspace: Path,
) -> None:
    source = "".join(f"value_{i} = {i * 7919 % 100_003}  # entry {i}\n" for i in range(8000))
    (workspace / "big.ipynb").write_text(code_notebook([source, "x = 1\n"]))
    core, spy = spied(workspace)
    file = read(core, "big.ipynb")["file"]
    assert isinstance(file, dict)
    assert file["partial"] is True
    assert file["tokens"] <= CAP
    assert spy.chars < len(source) // 2  # a whole count of each shorter cut: 5 cells
    # No read shows the rest of it: the note says so and names a search (round 34: the
    # way on skipped to the next cell, the cut cell's rest offered nowhere).
    note = str(file["note"])
    assert "Cell 1 is over the cap on its own" in note, note
    assert 'readkeeper/grep {"pattern": "<what you look for>", "path": ' in note, note
