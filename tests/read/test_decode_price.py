"""The price of a decode (decode_price.py) as plain Python: what it counts, and that it
holds: every format readkeeper decodes, in every extreme shape, peaks within its price
when decoded and fitted in a fresh process (measured, not assumed)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from document_samples import encode
from image_bombs import (
    bmp_bomb,
    bmp_rle_padded,
    bmp_rle_rows,
    gif_bomb,
    png_bomb,
    png_text_bomb,
    tiff_bomb,
    webp_bomb,
)
from PIL import Image

from readkeeper.errors import ReadkeeperError
from readkeeper.read.readers.decode_price import MB, STRIP_PIXELS, decode_cost, tile_shape
from readkeeper.read.readers.image import fit_image
from readkeeper.settings import Settings

POINTER = 8  # bytes of one row's address in Pillow's row array (64-bit)


def opened(data: bytes) -> Image.Image:
    return Image.open(io.BytesIO(data))


def test_pillows_image_is_priced_with_a_pointer_per_row() -> None:
    rgba = png_bomb(2_000, 1_000, rows=1)
    picture = opened(rgba)
    cost = decode_cost(picture, picture.size, None, rgba)
    pixels = 2_000 * 1_000 * 4 + 1_000 * POINTER
    assert pixels < cost < pixels + 3 * (2_000 * 4 + 1) + 8192  # and the PNG row buffers
    # Same pixels, the other way up: a pointer for each of 2,000,000 rows.
    tall = png_bomb(1, 2_000_000, grey=True, rows=1)
    picture = opened(tall)
    assert decode_cost(picture, picture.size, None, tall) > 2_000_000 * (1 + POINTER)


def test_a_wide_pngs_decoder_rows_are_priced() -> None:
    wide = png_bomb(2_000_000, 1, grey=True, rows=1)
    picture = opened(wide)
    # Pillow's image, then the zlib decoder's row, previous row and spare.
    assert decode_cost(picture, picture.size, None, wide) >= 4 * 2_000_000


def test_a_tiffs_tile_is_priced_as_its_tags_declare_it() -> None:
    tiled = tiff_bomb(16, 16, tile=2_000)
    picture = opened(tiled)
    assert decode_cost(picture, picture.size, None, tiled) > 2_000 * 2_000 * 3


def test_a_jpeg_is_priced_at_its_draft_scale() -> None:
    data = encode(Image.new("RGB", (4_000, 3_000), (90, 30, 10)), "JPEG")
    photo = opened(data)
    photo.draft(None, (500, 375))
    assert photo.size == (500, 375)
    small = decode_cost(photo, (4_000, 3_000), None, data)
    assert small < 4 * MB
    # Progressive: libjpeg keeps every coefficient whole (4:2:0 here: 1.5 per pixel).
    layered_data = encode(Image.new("RGB", (4_000, 3_000), (90, 30, 10)), "JPEG", progressive=True)
    layered = opened(layered_data)
    layered.draft(None, (500, 375))
    assert decode_cost(layered, (4_000, 3_000), None, layered_data) >= small + 36_000_000


def test_fitting_cuts_tiles_of_bounded_pixels_whatever_the_shape() -> None:
    for size, factors in [
        ((178_000_000, 1), (113_520, 1)),
        ((1, 178_000_000), (1, 113_520)),
        ((13_000, 13_000), (11, 11)),
        ((2, 89_000_000), (1, 56_760)),
    ]:
        columns, rows = tile_shape(size, factors)
        assert columns * rows <= max(STRIP_PIXELS, factors[0] * factors[1]), size
        assert columns % factors[0] == 0 or columns == size[0]
        assert rows % factors[1] == 0 or rows == size[1]


def test_a_tall_picture_that_fits_is_still_shown() -> None:
    fitted = fit_image(png_bomb(1, 2_000_000, grey=True), "/w/tall.png", Settings())
    assert (fitted.width, fitted.height) == (1, 1568)


def test_the_attackers_tall_png_is_refused_from_its_header() -> None:
    with pytest.raises(ReadkeeperError) as caught:
        fit_image(png_bomb(1, 178_000_000, grey=True), "/w/tall.png", Settings())
    error = caught.value
    assert error.kind == "too_large"
    assert error.data["decode_bytes"] > 178_000_000 * (1 + POINTER)
    assert "downscaled (to 1568x1568 or less) with an image tool" in error.message


def test_a_picture_pillow_decodes_in_python_is_capped_by_pixels() -> None:
    # 20,000 x 2,800 RLE rows of one pixel each (11 KB): priced within the memory cap,
    # but Pillow pads each row in Python a byte at a time: 17 s of CPU.
    with pytest.raises(ReadkeeperError) as caught:
        fit_image(bmp_rle_padded(20_000, 2_800), "/w/rows.bmp", Settings())
    error = caught.value
    assert error.kind == "too_large"
    assert error.data["max_python_pixels"] < 20_000 * 2_800
    assert "a copy saved as PNG with an image tool" in error.message
    # A small one is still shown.
    shown = fit_image(bmp_rle_padded(2_000, 1_000), "/w/rows.bmp", Settings())
    assert (shown.original_width, shown.original_height) == (2_000, 1_000)


def test_text_a_png_inflates_on_opening_is_capped() -> None:
    # 70 zTXt chunks of 1 MB each (70 KB on disk): Pillow's own cap is 64 MB, held
    # outside any budget while the header is read.
    with pytest.raises(ReadkeeperError) as caught:
        fit_image(png_text_bomb(70), "/w/notes.png", Settings())
    error = caught.value
    assert error.kind == "too_large"
    assert "image tool" in error.message
    assert "`" not in error.message  # in words, never a shell command
    # A few MB of text is still read past.
    assert fit_image(png_text_bomb(2), "/w/notes.png", Settings()).width == 1


# Each case is sized so its shape, not its pixel count, dominates what it holds.
SHAPES: dict[str, Callable[[], bytes]] = {
    "png-square-rgba": lambda: png_bomb(3_000, 3_000),
    "png-tall-grey": lambda: png_bomb(1, 12_000_000, grey=True),
    "png-wide-grey": lambda: png_bomb(12_000_000, 1, grey=True),
    "png-two-columns": lambda: png_bomb(2, 6_000_000, grey=True),
    "png-two-rows-rgba": lambda: png_bomb(6_000_000, 2),
    "png-tall-16-bit": lambda: encode(Image.new("I;16", (1, 3_000_000)), "PNG"),
    "png-tall-palette": lambda: encode(Image.new("P", (1, 6_000_000)), "PNG"),
    "png-tall-grey-alpha": lambda: encode(Image.new("LA", (1, 4_000_000)), "PNG"),
    "png-wide-16-bit": lambda: encode(Image.new("I;16", (3_000_000, 1)), "PNG"),
    "tiff-tall": lambda: tiff_bomb(1, 5_000_000),
    "tiff-wide": lambda: tiff_bomb(5_000_000, 1),
    "tiff-huge-tile": lambda: tiff_bomb(16, 16, tile=4_000),
    "bmp-rle-tall": lambda: bmp_rle_rows(1, 8_000_000),
    "bmp-rle-square": lambda: bmp_bomb(3_000, 3_000),
    "gif-square": lambda: gif_bomb(3_000, 3_000),
    "gif-tall": lambda: gif_bomb(1, 65_535),
    "webp-square": lambda: webp_bomb(2_000, 2_000),
    "jpeg-tall": lambda: encode(Image.new("L", (8, 65_000)), "JPEG"),
    "png-text-chunks": lambda: png_text_bomb(70),
}

# What the measurement itself may add: the interpreter's own allocations, the payload.
SLACK_MB = 12

MEASURE = """
import json, sys
from pathlib import Path
from readkeeper.errors import ReadkeeperError
from readkeeper.read.readers.image import fit_image
from readkeeper.settings import Settings

def status(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1]) / 1024

data = Path(sys.argv[1]).read_bytes()
Path("/proc/self/clear_refs").write_text("5")  # the peak (VmHWM) starts again here
before = status("VmRSS:")
try:
    price, outcome = fit_image(data, "/w/picture", Settings()).decode_bytes, "shown"
except ReadkeeperError as error:
    price, outcome = error.data.get("decode_bytes", 0), error.kind
print(json.dumps({"growth_mb": status("VmHWM:") - before, "price_mb": price / 2**20,
                  "outcome": outcome}))
"""


@pytest.mark.parametrize("shape", SHAPES)
def test_every_format_and_shape_peaks_within_its_price(shape: str, tmp_path: Path) -> None:
    picture = tmp_path / "picture"
    picture.write_bytes(SHAPES[shape]())
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(picture)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    measured = json.loads(done.stdout)
    assert measured["outcome"] in ("shown", "too_large"), measured
    if measured["outcome"] == "shown":
        assert measured["growth_mb"] <= measured["price_mb"] + SLACK_MB, measured
    else:  # refused from the header: reading it held next to nothing
        assert measured["growth_mb"] <= SLACK_MB, measured
