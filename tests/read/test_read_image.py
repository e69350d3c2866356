"""readkeeper/read of images: fitted to the pixel, token and byte budgets, or refused
with a clear kind. Real files made with Pillow, and matplotlib's sample images."""

from __future__ import annotations

import base64
import json
import math
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from document_samples import decode, encode, matplotlib_data, photo, screenshot
from PIL import Image, ImageDraw

from conftest import Session
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import ReadParams, StatsParams, unstructure
from readkeeper.settings import Settings


def read(core: Readkeeper, path: Path | str, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = unstructure(core.read(ReadParams(file_path=str(path), **params)))
    return result


def refused(core: Readkeeper, path: Path | str, **params: Any) -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as caught:
        core.read(ReadParams(file_path=str(path), **params))
    return caught.value


def assert_within_budget(file: dict[str, Any], settings: Settings) -> Image.Image:
    """Every budget holds, and the payload is the picture the result says it is."""
    dims = file["dimensions"]
    width, height = dims["display_width"], dims["display_height"]
    assert max(width, height) <= settings.image_max_edge
    assert file["tokens"] == math.ceil(width * height / 750)
    assert file["tokens"] <= settings.image_max_tokens
    assert len(file["base64"]) <= settings.image_max_base64_bytes
    # Aspect kept (to a pixel of rounding), never upscaled.
    assert width <= dims["original_width"]
    assert height <= dims["original_height"]
    expected = dims["original_height"] * width / dims["original_width"]
    assert abs(height - expected) <= 1.5
    picture = decode(file["base64"])
    assert picture.size == (width, height)
    assert file["media_type"] == Image.MIME[picture.format or ""]
    return picture


# --- budgets ------------------------------------------------------------------------------


def test_small_png_is_sent_as_it_is(core: Readkeeper, workspace: Path) -> None:
    data = encode(screenshot(400, 250), "PNG")
    (workspace / "small.png").write_bytes(data)
    result = read(core, "small.png")
    assert result["type"] == "image"
    file = result["file"]
    assert file["file_path"] == str(workspace / "small.png")
    assert base64.b64decode(file["base64"]) == data
    assert file["media_type"] == "image/png"
    assert file["format"] == "PNG"
    assert file["original_size"] == len(data)
    assert file["dimensions"] == {
        "original_width": 400,
        "original_height": 250,
        "display_width": 400,
        "display_height": 250,
    }
    assert file["tokens"] == math.ceil(400 * 250 / 750)
    assert_within_budget(file, core.settings)


def test_screenshot_2880x1800_fits_1600_tokens(core: Readkeeper, workspace: Path) -> None:
    (workspace / "shot.png").write_bytes(encode(screenshot(), "PNG"))
    file = read(core, "shot.png")["file"]
    assert_within_budget(file, core.settings)
    assert file["tokens"] <= 1600
    assert file["tokens"] > 1500  # uses the budget, not a thumbnail
    assert file["dimensions"]["original_width"] == 2880
    assert "Downscaled from 2880x1800" in file["note"]
    assert "Sent as" in file["note"]


def test_photo_4032x3024_fits_and_stays_a_jpeg(core: Readkeeper, workspace: Path) -> None:
    (workspace / "photo.jpg").write_bytes(encode(photo(), "JPEG", quality=90))
    file = read(core, "photo.jpg")["file"]
    assert_within_budget(file, core.settings)
    assert file["media_type"] == "image/jpeg"
    assert file["format"] == "JPEG"


def test_line_art_stays_lossless(core: Readkeeper, workspace: Path) -> None:
    diagram = Image.new("RGB", (3000, 2000), (255, 255, 255))
    draw = ImageDraw.Draw(diagram)
    for i in range(12):
        draw.rectangle((100 + i * 230, 300, 280 + i * 230, 1700), outline=(0, 0, 0), width=6)
        draw.line((190 + i * 230, 1700, 190 + i * 230, 1900), fill=(200, 0, 0), width=8)
    (workspace / "diagram.png").write_bytes(encode(diagram, "PNG"))
    file = read(core, "diagram.png")["file"]
    assert_within_budget(file, core.settings)
    assert file["media_type"] == "image/png"
    assert "PNG (lossless" in file["note"]


def test_12000x8000_photo_is_decoded_at_reduced_scale(core: Readkeeper, workspace: Path) -> None:
    big = Image.new("RGB", (12_000, 8_000), (90, 120, 150))
    (workspace / "huge.jpg").write_bytes(encode(big, "JPEG", quality=80))
    file = read(core, "huge.jpg")["file"]
    picture = assert_within_budget(file, core.settings)
    assert file["dimensions"]["original_width"] == 12_000
    assert abs(picture.getpixel((10, 10))[2] - 150) < 8  # type: ignore[index]


@pytest.mark.parametrize(
    ("mode", "fmt"),
    [
        ("RGB", "PNG"),
        ("RGBA", "PNG"),
        ("P", "PNG"),
        ("L", "PNG"),
        ("LA", "PNG"),
        ("1", "PNG"),
        ("I;16", "PNG"),
        ("CMYK", "JPEG"),
        ("L", "JPEG"),
        ("RGB", "WEBP"),
        ("RGBA", "WEBP"),
        ("RGB", "BMP"),
        ("P", "GIF"),
        ("RGB", "TIFF"),
    ],
)
@pytest.mark.parametrize("size", [(300, 200), (2400, 1600)])
def test_modes_and_formats(
    core: Readkeeper, workspace: Path, mode: str, fmt: str, size: tuple[int, int]
) -> None:
    base = screenshot(*size)
    if mode == "RGBA":
        picture = base.convert("RGBA")
        picture.putalpha(Image.linear_gradient("L").resize(size))
    elif mode == "I;16":
        picture = Image.linear_gradient("L").resize(size).convert("I").point(lambda v: v * 256)
        picture = picture.convert("I;16")
    else:
        picture = base.convert(mode)
    name = f"pic.{fmt.lower()}"
    (workspace / name).write_bytes(encode(picture, fmt))
    file = read(core, name)["file"]
    shown = assert_within_budget(file, core.settings)
    assert file["format"] == fmt
    if fmt == "BMP" or fmt == "TIFF":
        assert file["media_type"] != "image/bmp"  # re-encoded to a type models accept
    if mode == "I;16":
        # 16-bit grey is scaled into 8 bits, not clipped to white.
        low, high = shown.convert("L").getextrema()  # type: ignore[misc]
        assert low < 50
        assert high > 200
    if mode in ("RGBA",) and size[0] > 1568:
        assert shown.mode in ("RGBA", "LA") or file["media_type"] == "image/webp"


def test_exif_orientation_is_honoured(core: Readkeeper, workspace: Path) -> None:
    # Stored landscape with a red mark top-left; orientation 6 means "rotate 90° clockwise
    # to display", so the picture is portrait and the mark ends up top-right.
    stored = Image.new("RGB", (400, 300), (255, 255, 255))
    stored.paste((255, 0, 0), (0, 0, 60, 60))
    exif = Image.Exif()
    exif[0x0112] = 6
    (workspace / "phone.jpg").write_bytes(encode(stored, "JPEG", exif=exif, quality=95))
    file = read(core, "phone.jpg")["file"]
    picture = assert_within_budget(file, core.settings)
    assert (file["dimensions"]["original_width"], file["dimensions"]["original_height"]) == (
        300,
        400,
    )
    assert picture.size == (300, 400)
    red_top_right = picture.convert("RGB").getpixel((280, 20))
    assert red_top_right[0] > 200
    assert red_top_right[1] < 80
    assert "EXIF orientation 6" in file["note"]


def test_exif_rotated_large_photo(core: Readkeeper, workspace: Path) -> None:
    exif = Image.Exif()
    exif[0x0112] = 8
    (workspace / "tall.jpg").write_bytes(encode(photo(4032, 3024), "JPEG", exif=exif))
    file = read(core, "tall.jpg")["file"]
    assert_within_budget(file, core.settings)
    dims = file["dimensions"]
    assert (dims["original_width"], dims["original_height"]) == (3024, 4032)
    assert dims["display_height"] > dims["display_width"]


def test_animated_gif_shows_the_first_frame_and_says_so(core: Readkeeper, workspace: Path) -> None:
    frames = [Image.new("RGB", (120, 80), (i * 40, 0, 0)) for i in range(5)]
    out = workspace / "anim.gif"
    frames[0].save(out, save_all=True, append_images=frames[1:], duration=100, loop=0)
    file = read(core, out)["file"]
    assert_within_budget(file, core.settings)
    assert file["frames"] == 5
    assert "first of 5 frames (4 dropped)" in file["note"]


def test_byte_cap_lowers_quality_then_size(core: Readkeeper, workspace: Path) -> None:
    core.configure({"image_max_base64_bytes": 40_000})
    (workspace / "photo.jpg").write_bytes(encode(photo(2000, 1500), "JPEG", quality=95))
    file = read(core, "photo.jpg")["file"]
    assert_within_budget(file, core.settings)
    assert len(file["base64"]) <= 40_000
    assert "quality" in file["note"]


def test_token_and_edge_settings_apply(core: Readkeeper, workspace: Path) -> None:
    core.configure({"image_max_tokens": 300, "image_max_edge": 400})
    (workspace / "shot.png").write_bytes(encode(screenshot(1600, 900), "PNG"))
    file = read(core, "shot.png")["file"]
    assert_within_budget(file, core.settings)
    assert file["tokens"] <= 300


# --- refusals -----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["PNG", "JPEG"])
def test_truncated_image_is_corrupt(core: Readkeeper, workspace: Path, fmt: str) -> None:
    data = encode(photo(800, 600), fmt)
    (workspace / f"cut.{fmt.lower()}").write_bytes(data[: len(data) // 2])
    error = refused(core, f"cut.{fmt.lower()}")
    assert error.kind == "corrupt"
    assert "truncated" in error.message
    assert error.data["file_path"] == str(workspace / f"cut.{fmt.lower()}")


def test_garbage_after_a_png_signature_is_corrupt(core: Readkeeper, workspace: Path) -> None:
    (workspace / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00garbage" * 20)
    assert refused(core, "bad.png").kind == "corrupt"


def test_decompression_bomb_is_refused(core: Readkeeper, workspace: Path) -> None:
    # 200 million pixels in a 24 KB file: over Pillow's own limit.
    (workspace / "bomb.png").write_bytes(encode(Image.new("1", (20_000, 10_000)), "PNG"))
    error = refused(core, "bomb.png")
    assert error.kind == "too_large"
    assert "decompression bomb" in error.message
    # The header gave the size: it is said (it was null, attack round 22).
    assert (error.data["width"], error.data["height"]) == (20_000, 10_000)
    assert "20000x10000 (200,000,000 pixels)" in error.message
    # And a notebook's placeholder of the same picture says its size too.
    output = {"output_type": "display_data", "metadata": {}, "data": {"image/png": ""}}
    output["data"]["image/png"] = base64.b64encode((workspace / "bomb.png").read_bytes()).decode()
    cell = {"cell_type": "code", "source": "", "metadata": {}, "outputs": [output]}
    cell["execution_count"] = None
    book = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (workspace / "bomb.ipynb").write_text(json.dumps(book))
    for include_images in (False, True):
        notebook = read(core, "bomb.ipynb", include_images=include_images)["file"]
        (image,) = notebook["cells"][0]["outputs"][0]["images"]
        assert (image["width"], image["height"]) == (20_000, 10_000), image


@pytest.mark.parametrize(
    ("screen", "frame", "size"),
    [
        ((20_000, 10_000), (0, 0, 20_000, 10_000), (20_000, 10_000)),
        # A small screen and a frame past it: the picture is as big as both together.
        ((10, 10), (5_000, 7, 15_000, 10_000), (20_000, 10_007)),
    ],
)
def test_a_gif_over_pillow_s_limit_says_its_size(
    core: Readkeeper,
    workspace: Path,
    screen: tuple[int, int],
    frame: tuple[int, int, int, int],
    size: tuple[int, int],
) -> None:
    # Pillow's GIF plugin refuses such a frame inside its open, so the header's size
    # was never read and the refusal said null (attack round 27).
    header = b"GIF89a" + struct.pack("<HHBBB", *screen, 0x80, 0, 0) + b"\0\0\0\xff\xff\xff"
    extension = b"!\xf9\x04\x00\x00\x00\x00\x00"  # a graphic control block before it
    descriptor = b"," + struct.pack("<HHHHB", *frame, 0)
    (workspace / "bomb.gif").write_bytes(header + extension + descriptor + b"\x02\x01\x2c\x00;")
    error = refused(core, "bomb.gif")
    assert error.kind == "too_large"
    assert (error.data["width"], error.data["height"]) == size
    assert f"{size[0]}x{size[1]} ({size[0] * size[1]:,} pixels)" in error.message


def test_pixel_limit_setting(core: Readkeeper, workspace: Path) -> None:
    core.configure({"image_max_pixels": 10_000})
    (workspace / "a.png").write_bytes(encode(Image.new("RGB", (200, 100)), "PNG"))
    error = refused(core, "a.png")
    assert error.kind == "too_large"
    assert error.data["width"] == 200
    assert error.data["max_pixels"] == 10_000


def test_file_over_the_document_byte_cap(core: Readkeeper, workspace: Path) -> None:
    core.configure({"max_document_bytes": 1000})
    (workspace / "p.jpg").write_bytes(encode(photo(400, 300), "JPEG"))
    error = refused(core, "p.jpg")
    assert error.kind == "too_large"
    assert error.data["max_document_bytes"] == 1000


# --- type by content, and read-state ------------------------------------------------------


def test_content_decides_over_the_name(core: Readkeeper, workspace: Path) -> None:
    (workspace / "notes.txt").write_bytes(encode(screenshot(200, 100), "PNG"))
    assert read(core, "notes.txt")["type"] == "image"
    pointer = "version https://git-lfs.github.com/spec/v1\noid sha256:ab\nsize 12\n"
    (workspace / "logo.png").write_text(pointer)
    assert read(core, "logo.png")["type"] == "text"
    (workspace / "icon.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"/>\n')
    assert read(core, "icon.svg")["type"] == "text"
    (workspace / "BMW.md").write_text("BM" + "W cars are fast.\n" * 3)
    assert read(core, "BMW.md")["type"] == "text"


def test_reread_is_a_stub_until_the_image_changes(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "shot.png"
    path.write_bytes(encode(screenshot(800, 500), "PNG"))
    assert read(core, path)["type"] == "image"
    stub = read(core, path)
    assert (stub["type"], stub["file"]["file_path"]) == ("file_unchanged", str(path))
    assert read(core, path, force=True)["type"] == "image"
    assert read(core, path, session="other")["type"] == "image"
    path.write_bytes(encode(screenshot(801, 500), "PNG"))
    assert read(core, path)["type"] == "image"
    stats = core.stats_for(StatsParams(session=""))
    assert stats["session"]["dedup_hits"] == 1
    assert stats["session"]["tokens_saved_by_stubs"] > 0


# --- real-world files ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "sample_data/grace_hopper.jpg",
        "sample_data/logo2.png",
        "sample_data/Minduka_Present_Blue_Pack.png",
        "images/matplotlib_large.png",
    ],
)
def test_matplotlib_sample_images(core: Readkeeper, workspace: Path, name: str) -> None:
    source = matplotlib_data() / name
    shutil.copy(source, workspace / source.name)
    file = read(core, source.name)["file"]
    assert_within_budget(file, core.settings)
    with Image.open(source) as original:
        assert (file["dimensions"]["original_width"], file["dimensions"]["original_height"]) == (
            original.size
        )


# --- through the server -------------------------------------------------------------------


async def test_image_through_the_server(lsp: Session, workspace: Path) -> None:
    (workspace / "shot.png").write_bytes(encode(screenshot(), "PNG"))
    result = await lsp.read("shot.png")
    assert result["type"] == "image"
    assert_within_budget(result["file"], Settings())
    again = await lsp.read("shot.png")
    assert again["type"] == "file_unchanged"


async def test_corrupt_image_through_the_server(lsp: Session, workspace: Path) -> None:
    data = encode(photo(600, 400), "JPEG")
    (workspace / "cut.jpg").write_bytes(data[:2000])
    error = await lsp.read_error("cut.jpg")
    assert error.data["kind"] == "corrupt"
    assert error.data["file_path"] == str(workspace / "cut.jpg")


def test_reader_libraries_are_imported_lazily() -> None:
    """Start-up is a benchmarked target: Pillow, pypdf, pypdfium2, nbformat and tiktoken
    load on the first read that needs them, and edits.py with the first edit, never with
    the server."""
    code = (
        "import sys, readkeeper.lsp.app, readkeeper.cli, readkeeper.core\n"
        "heavy = {'PIL', 'pypdf', 'pypdfium2', 'nbformat', 'tiktoken', 'readkeeper.edit.edits'}\n"
        "print(sorted(heavy & {*sys.modules, *(m.split('.')[0] for m in sys.modules)}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


EPS = b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 100 100\n0 0 moveto 100 100 lineto stroke\n"


def test_only_the_image_formats_are_decoded(core: Readkeeper, workspace: Path) -> None:
    """Bytes a notebook labels image/png may be anything: Pillow would open PostScript and
    run Ghostscript (a program chosen by the repository) to decode it."""
    from readkeeper.read.readers.image import fit_image
    from readkeeper.read.readers.image_open import probe

    assert probe(EPS) is None
    with pytest.raises(ReadkeeperError) as caught:
        fit_image(EPS, "/w/figure.png", Settings())
    assert caught.value.kind == "corrupt"
    assert "Ghostscript" not in caught.value.message
    cell = {
        "cell_type": "code",
        "execution_count": 1,
        "id": "c",
        "metadata": {},
        "source": ["plot()"],
        "outputs": [
            {
                "output_type": "display_data",
                "metadata": {},
                "data": {"image/png": base64.b64encode(EPS).decode()},
            }
        ],
    }
    book = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (workspace / "eps.ipynb").write_text(json.dumps(book))
    result = read(core, "eps.ipynb", include_images=True)
    (image,) = result["file"]["cells"][0]["outputs"][0]["images"]
    assert image.get("base64") is None
    assert image.get("width") is None
