"""image_scan.py: the structure of an image file is walked within one budget of steps
and of inflated metadata, whatever the format; past it before the picture the file is
`too_large`, past it after the first frame the frames are counted as "at least"."""

from __future__ import annotations

import io

import pytest
from image_bombs import animated_gif
from image_structure import (
    bmp_rle_idle,
    gif_frames,
    gif_long_extension,
    jpeg_stray_bytes,
    png_ancillary_flood,
    png_idat_flood,
    png_profiles,
    tiff_pages,
    tiff_rationals,
)
from PIL import Image

from readkeeper.errors import ReadkeeperError
from readkeeper.read.readers.image_scan import (
    METADATA_INFLATE_BYTES,
    STRUCTURE_STEPS,
    Structure,
    scan,
)

OVER = STRUCTURE_STEPS + 10


@pytest.mark.parametrize(
    "data",
    [
        png_idat_flood(OVER),
        png_ancillary_flood(OVER),
        png_profiles(METADATA_INFLATE_BYTES // 1_000_000 + 1),
        gif_long_extension(OVER),
        jpeg_stray_bytes(OVER),
        bmp_rle_idle(OVER + 1_000),  # past the commands its 16 x 16 pixels may take
        tiff_rationals(OVER),
    ],
    ids=[
        "png-idat",
        "png-ancillary",
        "png-iccp",
        "gif-extension",
        "jpeg-stray",
        "bmp-rle",
        "tiff-rationals",
    ],
)
def test_over_the_budget_before_the_picture_is_too_large(data: bytes) -> None:
    with pytest.raises(ReadkeeperError) as caught:
        scan(data, "a/flood.img")
    assert caught.value.kind == "too_large"
    assert "image tool" in str(caught.value)  # what to do instead, in words
    assert caught.value.data["max_structure_steps"] == STRUCTURE_STEPS


def test_frames_past_the_budget_are_counted_as_at_least() -> None:
    gif = scan(gif_frames(OVER), "many.gif")
    assert not gif.counted_all
    assert 1 < gif.frames < OVER  # type: ignore[operator]
    tiff = scan(tiff_pages(OVER // 10 + 10), "many.tif")
    assert not tiff.counted_all
    assert 1 < tiff.frames < OVER // 10 + 10  # type: ignore[operator]


def test_real_files_within_the_budget_are_walked_whole() -> None:
    assert scan(animated_gif(2000), "a.gif") == Structure(frames=2000)
    assert scan(gif_frames(3), "b.gif") == Structure(frames=3)
    assert scan(tiff_pages(40), "c.tif") == Structure(frames=40)
    # One real-sized profile, a little metadata and a few thousand chunks are fine.
    assert scan(png_profiles(1), "d.png") == Structure(frames=None)
    assert scan(png_idat_flood(5_000), "e.png") == Structure(frames=None)
    assert scan(jpeg_stray_bytes(100), "f.jpg") == Structure(frames=None)
    assert scan(bmp_rle_idle(100), "i.bmp") == Structure(frames=None)
    assert scan(tiff_rationals(1), "j.tif") == Structure(frames=1)
    out = io.BytesIO()
    pages = [Image.new("L", (8, 8), n) for n in range(5)]
    pages[0].save(out, "TIFF", save_all=True, append_images=pages[1:])
    assert scan(out.getvalue(), "g.tif") == Structure(frames=5)
    out = io.BytesIO()
    Image.new("RGB", (64, 64), "red").save(out, "JPEG", quality=90)
    assert scan(out.getvalue(), "h.jpg") == Structure(frames=None)


def test_a_directory_loop_ends() -> None:
    data = bytearray(tiff_pages(2))
    # The second directory points back at the first.
    data[-4:] = (16).to_bytes(4, "little")
    assert scan(bytes(data), "loop.tif") == Structure(frames=2)
