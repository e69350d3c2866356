"""What decoding an image will hold at its peak, priced from its header alone.

The price is the sum of what every allocation of the decode grows with, each by its own
dimension, so that no shape of picture can hold more than it is priced at:

- Pillow's image (`storage`): a row of pixels AND a pointer per row (Pillow keeps an
  array of row addresses). A 1 x 178,000,000 grey PNG has 178 MB of pixels but 1.4 GB of
  row pointers: priced by pixels alone it passed the cap and took the server to 1.6 GB.
- The decoder's own working memory (`_decoder_bytes`), by what it grows with: rows of
  the file's width (PNG's zlib decoder keeps the row, the previous row and a spare:
  a 178,000,000 x 1 PNG added 510 MB), a TIFF's strip or tile as its tags declare it
  (a tile may be far larger than the picture), whole copies (WebP, BMP's RLE decoder,
  which Pillow runs in Python and which may write up to 255 rows past the end).
- Fitting (image.py's `_reduced`): tiles of at most `STRIP_PIXELS` pixels in both
  directions (rows of a very wide picture are cut too), or whole copies where the
  picture is converted whole, then the small picture and the encoders' copies.

tests/read/test_decode_price.py measures, in a fresh process per case, that every format
and extreme shape peaks within its price.
"""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL import Image

MB = 1 << 20
# Pixels in one tile that fitting crops, converts and reduces at a time.
STRIP_PIXELS = 1 << 20
# Pillow's row array holds one address per row; its arena hands out blocks of 16 MB,
# each with a small record.
_POINTER = ctypes.sizeof(ctypes.c_void_p)
_BLOCK = 16 * MB
_BLOCK_RECORD = 2 * _POINTER
# Whole copies of the picture a format's decoder holds besides Pillow's image: libwebp's
# canvas and the frame handed over as bytes (a 3,000 x 3,000 WebP peaks at 4x its pixels).
_DECODER_COPIES = {"WEBP": 3}
# Rows of the file's width a line decoder holds (PNG: the row, the previous row and the
# buffer Pillow sets up; GIF: its row; JPEG: an MCU row of coefficients and its sample
# rows, about 130 bytes a column for four components).
_DECODER_ROWS = {"PNG": 3, "GIF": 2, "BMP": 2, "TIFF": 2, "JPEG": 24}
# Bytes per pixel of a file's rows when the header does not say: the widest there is
# (16-bit RGBA).
_WIDEST_PIXEL = 8
# PNG colour types: samples per pixel.
_PNG_SAMPLES = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
# An RLE BMP: a delta may add 255 rows and 255 pixels past the picture's end.
_RLE_OVERRUN_ROWS = 256
# Bytes Pillow keeps per pixel, by mode: 1, 2 or 4 (three-band modes are padded to 4).
_ONE_BYTE = {"1", "L", "P"}
_TWO_BYTES = {"I;16", "I;16L", "I;16B", "I;16N"}


def pixel_bytes(mode: str) -> int:
    """How many bytes Pillow's in-memory image of `mode` takes per pixel."""
    if mode in _ONE_BYTE:
        return 1
    if mode in _TWO_BYTES:
        return 2
    return 4


def storage(width: int, height: int, per_pixel: int) -> int:
    """The bytes Pillow allocates for a `width` x `height` image of `per_pixel` bytes:
    the pixels, one pointer per row, and a record per block of rows."""
    line = max(1, width * per_pixel)
    rows_per_block = max(1, _BLOCK // line)
    blocks = -(-height // rows_per_block) + 1
    return height * (line + _POINTER) + blocks * _BLOCK_RECORD + 4096


def reduce_factors(size: tuple[int, int], target: tuple[int, int]) -> tuple[int, int]:
    """The whole factors a picture of `size` is box-reduced by on its way to `target`."""
    return max(1, size[0] // target[0]), max(1, size[1] // target[1])


def tile_shape(size: tuple[int, int], factors: tuple[int, int]) -> tuple[int, int]:
    """The columns and rows fitting crops at a time: whole steps of the reduction, at
    most `STRIP_PIXELS` pixels unless one step alone is more."""
    width, height = size
    step_x, step_y = factors
    columns = min(width, max(step_x, STRIP_PIXELS // step_y // step_x * step_x))
    rows = min(height, max(step_y, STRIP_PIXELS // columns // step_y * step_y))
    return columns, rows


def decode_cost(
    img: Image.Image,
    stored: tuple[int, int],
    target: tuple[int, int] | None,
    data: bytes,
) -> int:
    """The bytes decoding `img` (opened, not loaded; drafted if it will be) holds at its
    peak, with `stored` its size in the file before any draft; with a `target` to fit to
    (in stored orientation), the copies fitting makes (image.py's `_reduced`)."""
    width, height = img.size
    per_pixel = pixel_bytes(img.mode)
    cost = storage(width, height, per_pixel) + _decoder_bytes(img, stored, data)
    if target is None:
        return cost
    factors = reduce_factors(img.size, target)
    if img.mode.startswith("I") or img.mode == "F":
        # Scaled to 8 bits whole: a 32-bit copy, another, then the 8-bit picture.
        cost += 2 * storage(width, height, 4) + storage(width, height, 1)
    elif factors == (1, 1):
        # No reduction (under twice the target): converted and resized whole, and an
        # RGBA resize premultiplies a copy first.
        cost += 0 if img.mode in ("L", "RGB") else 2 * storage(width, height, 4)
    else:
        columns, rows = tile_shape(img.size, factors)
        cost += 3 * storage(columns, rows, 4)  # a tile: cropped, converted, reduced
    # The reduced picture (under twice the target each way), then the resized one, the
    # upright one and the encoders' copies.
    tw, th = target
    return cost + storage(2 * tw, 2 * th, 4) + 4 * storage(tw, th, 4)


def _decoder_bytes(img: Image.Image, stored: tuple[int, int], data: bytes) -> int:
    """What the format's decoder holds besides Pillow's image."""
    fmt = img.format or ""
    width, height = img.size
    stored_w, stored_h = stored
    row = stored_w * _file_pixel_bytes(img, data) + 1
    cost = _DECODER_ROWS.get(fmt, 2) * row
    cost += _DECODER_COPIES.get(fmt, 0) * width * height * pixel_bytes(img.mode)
    if fmt == "JPEG" and img.info.get("progressive"):
        # Libjpeg keeps a progressive JPEG's coefficients whole (2 bytes each, per
        # component at its sampling), whatever scale it then draws at.
        layers = getattr(img, "layer", [])
        most = max((h * v for _, h, v, _ in layers), default=1)
        cost += sum(2 * stored_w * stored_h * h * v // most for _, h, v, _ in layers)
    if fmt == "BMP" and any(tile[0] == "bmp_rle" for tile in getattr(img, "tile", [])):
        # Pillow's RLE decoder builds the pixels in a bytearray (grown by an eighth at a
        # time), a delta's run of zeros, then a bytes copy of it all.
        written = width * height + _RLE_OVERRUN_ROWS * (width + 1)
        cost += 3 * written
    if fmt == "TIFF":
        # Pillow hands libtiff the file's bytes, which it may copy and read a strip of.
        cost += _tiff_block_bytes(img, stored) + 2 * len(data)
    return cost


def _file_pixel_bytes(img: Image.Image, data: bytes) -> int:
    """Bytes per pixel of the file's rows (rounded up), from the header where it says."""
    if img.format == "PNG" and data[12:16] == b"IHDR" and len(data) >= 26:
        depth, colour = data[24], data[25]
        return max(1, -(-depth * _PNG_SAMPLES.get(colour, 4) // 8))
    return _WIDEST_PIXEL


def _tiff_block_bytes(img: Image.Image, stored: tuple[int, int]) -> int:
    """The strip or tile libtiff decodes into at once, as the tags declare it (a tile may
    be far larger than the picture; a strip is at most the picture), at least 4 bytes a
    pixel (the RGBA path converts into such a buffer)."""
    tags = getattr(img, "tag_v2", {})

    def tag(number: int, default: int) -> int:
        value = tags.get(number, default)
        if isinstance(value, tuple):
            value = max(value, default=default)
        return int(value) if isinstance(value, int | float) else default

    samples = max(1, tag(277, 1))
    bits = max(1, tag(258, 8))
    per_pixel = max(4, -(-samples * bits // 8))
    stored_w, stored_h = stored
    if 322 in tags or 323 in tags:
        pixels = max(1, tag(322, 1)) * max(1, tag(323, 1))
    else:
        pixels = stored_w * min(stored_h, max(1, tag(278, stored_h)))
    return pixels * per_pixel
