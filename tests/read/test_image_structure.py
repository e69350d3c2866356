"""Images whose decode would cost CPU by their structure rather than their pixels (floods
of chunks, blocks, markers, directories, compressed profiles): the real server (a
subprocess over LSP) refuses them with `too_large` and what to do, before Pillow walks
them, counts at most a budget of frames ("at least N"), and answers reads beside them."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from image_structure import (
    bmp_rle_idle,
    gif_comment,
    gif_frames,
    gif_long_extension,
    jpeg_stray_bytes,
    png_ancillary_flood,
    png_idat_flood,
    png_profiles,
    tiff_pages,
    tiff_rationals,
)
from pygls.exceptions import JsonRpcException

from conftest import Session

# A little past the budget of steps (image_scan.STRUCTURE_STEPS), as a client knows it:
# from the refusal's data.
STEPS = 100_000

FLOODS = {
    "idat.png": lambda: png_idat_flood(STEPS + 10),
    "ancillary.png": lambda: png_ancillary_flood(STEPS + 10),
    "profiles.png": lambda: png_profiles(6),
    "comment.gif": lambda: gif_long_extension(STEPS + 10),
    "stray.jpg": lambda: jpeg_stray_bytes(STEPS + 10),
    "idle.bmp": lambda: bmp_rle_idle(STEPS + 1_000),
    "rationals.tif": lambda: tiff_rationals(STEPS + 10),
}


async def answer(lsp: Session, path: str, **params: Any) -> dict[str, Any]:
    try:
        result: dict[str, Any] = await lsp.read(path, **params)
    except JsonRpcException as exc:
        return {"error": exc.data, "message": exc.message}
    return result


async def test_structure_floods_are_too_large_and_small_reads_go_on(
    lsp: Session, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("one\ntwo\n")
    for name, make in FLOODS.items():
        (workspace / name).write_bytes(make())
    for name in FLOODS:
        for force in (False, True):  # a forced re-read is refused the same way
            reply = await answer(lsp, name, force=force)
            assert "error" in reply, (name, reply.get("file", {}).get("note"))
            assert reply["error"]["kind"] == "too_large", reply
            assert reply["error"]["max_structure_steps"] == STEPS
            assert "image tool" in reply["message"], reply  # what to do instead, in words
        small = await lsp.read("notes.txt", force=True)
        assert small["file"]["num_lines"] == 2


async def test_frames_past_the_budget_are_at_least(lsp: Session, workspace: Path) -> None:
    (workspace / "many.gif").write_bytes(gif_frames(STEPS + 10))
    (workspace / "pages.tif").write_bytes(tiff_pages(STEPS // 10 + 10))
    for name in ("many.gif", "pages.tif"):
        reply = await lsp.read(name)
        assert reply["type"] == "image", reply
        note = reply["file"]["note"]
        assert "at least" in note, note
        assert "showing the first" in note, note
        assert 1 < reply["file"]["frames"] < STEPS + 10


async def test_frames_within_the_budget_are_counted(lsp: Session, workspace: Path) -> None:
    (workspace / "few.gif").write_bytes(gif_frames(500))
    (workspace / "few.tif").write_bytes(tiff_pages(30))
    for name, frames in (("few.gif", 500), ("few.tif", 30)):
        reply = await lsp.read(name)
        assert reply["file"]["frames"] == frames
        assert f"first of {frames} frames" in reply["file"]["note"]
    # A real profile and some chunks are no flood.
    (workspace / "profile.png").write_bytes(png_profiles(1))
    (workspace / "chunks.png").write_bytes(png_idat_flood(2_000))
    for name in ("profile.png", "chunks.png"):
        assert (await lsp.read(name))["type"] == "image"


async def test_a_long_comment_is_not_carried_into_the_payload(
    lsp: Session, workspace: Path
) -> None:
    # Re-encoded (two frames), the comment went into the JPEG encoder, which raised.
    (workspace / "comment.gif").write_bytes(gif_comment(100_000))
    reply = await lsp.read("comment.gif")
    assert reply["type"] == "image", reply
    assert reply["file"]["frames"] == 2


def notebook_of(images: list[bytes]) -> str:
    outputs = [
        {"output_type": "display_data", "metadata": {}, "data": {"image/png": encoded}}
        for encoded in (base64.b64encode(data).decode() for data in images)
    ]
    cells = [
        {
            "cell_type": "code",
            "execution_count": n + 1,
            "id": f"cell{n}",
            "metadata": {},
            "source": [f"plot({n})"],
            "outputs": [output],
        }
        for n, output in enumerate(outputs)
    ]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


async def test_a_notebook_of_floods_walks_one_budget(lsp: Session, workspace: Path) -> None:
    """Each image just under the one-file budget: the read's images share four files'
    worth, so the later ones are not opened, and say why."""
    flood = png_ancillary_flood(STEPS - 100)
    (workspace / "floods.ipynb").write_text(notebook_of([flood] * 12))
    for include_images in (False, True):
        result = await lsp.read("floods.ipynb", include_images=include_images, force=True)
        images = [i for c in result["file"]["cells"] for o in c["outputs"] for i in o["images"]]
        assert len(images) == 12
        refused = [i for i in images if i.get("width") is None]
        assert len(refused) >= 12 - 4, images
        for image in refused:
            assert "too_large" in image["note"]
            # The way on: its cell alone, the images asked for again when they were.
            assert "Read fewer cells at a time to see it. Its cell alone: offset=" in image["note"]
            assert image["note"].endswith(
                ", limit=1, include_images=true." if include_images else ", limit=1."
            ), image["note"]
