"""Cost before content: `estimate: true` says what a read would send, sends nothing and
records nothing; `readkeeper/stats` says where the tokens went, per file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PIL import Image

from conftest import Session
from readkeeper.core import Readkeeper
from readkeeper.protocol import ReadParams, StatsParams, unstructure


def read(core: Readkeeper, path: str, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = unstructure(core.read(ReadParams(file_path=path, **params)))
    return result


def lines(count: int) -> str:
    return "".join(f"row {i}: {'value ' * (i % 9)}\n" for i in range(count))


def test_an_estimate_is_what_the_read_then_costs(core: Readkeeper, workspace: Path) -> None:
    (workspace / "data.txt").write_text(lines(2500))
    estimate = read(core, "data.txt", estimate=True)
    assert estimate["type"] == "estimate"
    assert "content" not in estimate["file"]
    real = read(core, "data.txt")  # not a stub: the estimate recorded nothing
    assert real["type"] == "text"
    assert estimate["file"]["tokens"] == real["file"]["tokens"]
    assert estimate["file"]["num_lines"] == real["file"]["num_lines"]
    assert estimate["file"]["total_lines"] == 2500
    assert estimate["file"]["partial"] is True


def test_an_estimate_of_a_range_of_a_huge_file(core: Readkeeper, workspace: Path) -> None:
    (workspace / "huge.log").write_text(lines(40_000))
    estimate = read(core, "huge.log", offset=30_001, limit=100, estimate=True)
    real = read(core, "huge.log", offset=30_001, limit=100)
    assert real["type"] == "text"
    assert (estimate["file"]["tokens"], estimate["file"]["num_lines"]) == (
        real["file"]["tokens"],
        100,
    )


def test_an_estimate_of_an_image(core: Readkeeper, workspace: Path) -> None:
    Image.new("RGB", (3000, 2000), "teal").save(workspace / "shot.png")
    estimate = read(core, "shot.png", estimate=True)
    real = read(core, "shot.png")
    assert real["type"] == "image"
    assert estimate["file"]["tokens"] == real["file"]["tokens"]
    assert (estimate["file"]["num_lines"], estimate["file"]["total_lines"]) == (0, None)
    assert "base64" not in estimate["file"]


def test_stats_say_which_files_cost_the_most(core: Readkeeper, workspace: Path) -> None:
    (workspace / "big.txt").write_text(lines(900))
    (workspace / "small.txt").write_text(lines(5))
    big = read(core, "big.txt")["file"]["tokens"]
    small = read(core, "small.txt")["file"]["tokens"]
    read(core, "big.txt")  # a stub costs nothing more
    by_file = core.stats_for(StatsParams(session=""))["session"]["tokens_by_file"]
    assert list(by_file) == [str(workspace / "big.txt"), str(workspace / "small.txt")]
    assert by_file[str(workspace / "big.txt")] == big
    assert by_file[str(workspace / "small.txt")] == small


async def test_an_estimate_through_the_server(lsp: Session, workspace: Path) -> None:
    (workspace / "data.txt").write_text(lines(50))
    estimate = await lsp.read(workspace / "data.txt", estimate=True)
    assert estimate["type"] == "estimate"
    assert estimate["file"]["num_lines"] == 50
