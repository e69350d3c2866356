"""Images whose pixels take far more memory than their bytes: the real server (a
subprocess over LSP) answers each with a downscaled picture or `too_large`, never holds
their full decode at once, and keeps answering small reads beside them."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import pytest
from document_samples import encode, screenshot
from image_bombs import (
    animated_gif,
    bmp_bomb,
    gif_bomb,
    gif_claiming,
    jpeg_claiming,
    png_bomb,
    tiff_bomb,
    webp_bomb,
)
from pygls.exceptions import JsonRpcException

from conftest import Session

# The server's peak resident memory stays under this with any number of bombs in flight
# (unbounded, four 13,000 x 13,000 PNGs at once took it to 5.4 GB).
PEAK_RSS_CAP_MB = 1024


@pytest.fixture(scope="module")
def bomb() -> bytes:
    return png_bomb()


def server_pid(lsp: Session) -> int:
    return lsp.client._server.pid  # type: ignore[union-attr]


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


async def answer(lsp: Session, path: str, **params: Any) -> dict[str, Any]:
    """The read's result, or its error's data (with the message) as a dict."""
    try:
        result: dict[str, Any] = await lsp.read(path, **params)
    except JsonRpcException as exc:
        return {"error": exc.data, "message": exc.message}
    return result


def assert_scaled_or_too_large(reply: dict[str, Any]) -> None:
    if "error" in reply:
        assert reply["error"]["kind"] == "too_large", reply
        # What to do instead, not just "no".
        assert "smaller" in reply["message"] or "downscale" in reply["message"]
    else:
        assert reply["type"] == "image", reply
        dims = reply["file"]["dimensions"]
        assert max(dims["display_width"], dims["display_height"]) <= 1568


async def test_four_png_bombs_at_once_and_small_reads_beside_them(
    lsp: Session, workspace: Path, bomb: bytes
) -> None:
    for n in range(4):
        (workspace / f"bomb{n}.png").write_bytes(bomb)
    (workspace / "notes.txt").write_text("".join(f"line {n}\n" for n in range(1, 301)))
    bombs = [asyncio.create_task(answer(lsp, f"bomb{n}.png")) for n in range(4)]
    small: list[dict[str, Any]] = []
    offset = 1
    while not all(task.done() for task in bombs) or len(small) < 3:
        small.append(await lsp.read("notes.txt", offset=offset, limit=3, force=True))
        offset = offset % 297 + 1
    for reply in await asyncio.gather(*bombs):
        assert_scaled_or_too_large(reply)
    for reply in small:
        assert reply["type"] == "text"
        assert reply["file"]["num_lines"] == 3
    assert peak_rss_mb(server_pid(lsp)) < PEAK_RSS_CAP_MB


def notebook_of(images: list[bytes]) -> str:
    cells = [
        {
            "cell_type": "code",
            "execution_count": n + 1,
            "id": f"cell{n}",
            "metadata": {},
            "source": [f"plot({n})"],
            "outputs": [
                {
                    "output_type": "display_data",
                    "metadata": {},
                    "data": {
                        "image/png": base64.b64encode(data).decode(),
                        "text/plain": ["<Figure>"],
                    },
                }
            ],
        }
        for n, data in enumerate(images)
    ]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


async def test_notebook_with_six_bombs_and_include_images(
    lsp: Session, workspace: Path, bomb: bytes
) -> None:
    (workspace / "plots.ipynb").write_text(notebook_of([bomb] * 6))
    result = await lsp.read("plots.ipynb", include_images=True)
    assert result["type"] == "notebook"
    images = [i for c in result["file"]["cells"] for o in c["outputs"] for i in o["images"]]
    assert len(images) == 6
    for image in images:
        assert (image["width"], image["height"]) == (13_000, 13_000)
        if image.get("base64") is None:
            assert "too_large" in image["note"] or "MB" in image["note"]
        else:
            assert max(image["display_width"], image["display_height"]) <= 1568
    assert peak_rss_mb(server_pid(lsp)) < PEAK_RSS_CAP_MB


async def test_a_notebook_of_small_plots_still_shows_them(lsp: Session, workspace: Path) -> None:
    plot = encode(screenshot(640, 480), "PNG")
    (workspace / "small.ipynb").write_text(notebook_of([plot] * 3))
    result = await lsp.read("small.ipynb", include_images=True)
    images = [i for c in result["file"]["cells"] for o in c["outputs"] for i in o["images"]]
    assert [i["base64"] is not None for i in images] == [True] * 3
    assert [(i["display_width"], i["display_height"]) for i in images] == [(640, 480)] * 3


BOMBS = {
    "gif.gif": gif_bomb,
    "tiff.tif": tiff_bomb,
    "bmp.bmp": bmp_bomb,
    "webp.webp": webp_bomb,
    "rows-missing.png": lambda: png_bomb(rows=10),
    "lying.gif": gif_claiming,
    "small-header-lie.png": lambda: png_bomb(6000, 6000, rows=10),
}


async def test_other_formats_bombs(lsp: Session, workspace: Path) -> None:
    for name, make in BOMBS.items():
        (workspace / name).write_bytes(make())
    for name in BOMBS:
        reply = await answer(lsp, name)
        if name in ("small-header-lie.png", "lying.gif") and "error" in reply:
            # Within the budget: decoded, and found short (Pillow takes a zlib stream
            # that ends early as the end of the picture, so it may also show).
            assert reply["error"]["kind"] == "corrupt", reply
        else:
            assert_scaled_or_too_large(reply)
    assert peak_rss_mb(server_pid(lsp)) < PEAK_RSS_CAP_MB


async def test_a_huge_jpeg_is_decoded_reduced(lsp: Session, workspace: Path) -> None:
    # 13,000 x 13,000 RGB is 676 MB whole; at libjpeg's 1/8 scale it is 10 MB.
    (workspace / "huge.jpg").write_bytes(jpeg_claiming(13_000, 13_000))
    reply = await answer(lsp, "huge.jpg")
    if "error" in reply:  # the header lies: 256x256 of data behind it
        assert reply["error"]["kind"] == "corrupt", reply
    else:
        assert_scaled_or_too_large(reply)
        assert reply["file"]["dimensions"]["original_width"] == 13_000
    assert peak_rss_mb(server_pid(lsp)) < 400


async def test_an_animation_of_thousands_of_frames(lsp: Session, workspace: Path) -> None:
    (workspace / "frames.gif").write_bytes(animated_gif(2000))
    result = await lsp.read("frames.gif")
    assert result["type"] == "image"
    assert result["file"]["frames"] == 2000
    assert "first of 2000 frames" in result["file"]["note"]


async def test_four_images_the_budget_admits_two_at_a_time(lsp: Session, workspace: Path) -> None:
    """Four real 7,000 x 7,000 RGBA PNGs (196 MB each decoded, under the one-image cap;
    four at once would pass the shared budget): all are shown, downscaled, while 3-line
    reads are answered beside them, and the memory goes back to the system after."""
    picture = png_bomb(7_000, 7_000)
    for n in range(4):
        (workspace / f"big{n}.png").write_bytes(picture)
    (workspace / "notes.txt").write_text("".join(f"line {n}\n" for n in range(1, 301)))
    images = [asyncio.create_task(answer(lsp, f"big{n}.png")) for n in range(4)]
    beside = 0  # 3-line reads answered while an image was still being decoded
    offset = 1
    while not all(task.done() for task in images):
        reply = await lsp.read("notes.txt", offset=offset, limit=3, force=True)
        assert reply["file"]["num_lines"] == 3
        beside += not all(task.done() for task in images)
        offset = offset % 297 + 1
    for reply in await asyncio.gather(*images):
        assert reply["type"] == "image", reply
        assert reply["file"]["dimensions"]["display_width"] <= 1568
    assert beside > 0
    pid = server_pid(lsp)
    assert peak_rss_mb(pid) < PEAK_RSS_CAP_MB
    # Unbounded and untrimmed, glibc's arenas kept most of the decodes' memory.
    assert resident_mb(pid) < 350


def resident_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")
