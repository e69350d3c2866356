"""Opening an image for readkeeper: which formats Pillow may open, what opening may hold
before a decode is priced, and which decoders are too slow for large pictures.

- Only the formats `sniff` lets through are opened (`DECODED_FORMATS`): notebook images
  are any bytes under an image/* label, and some of Pillow's other plugins run programs
  (EPS runs Ghostscript) or parse far more than pixels.
- Opening a PNG inflates its text chunks before the header's size is known (Pillow's own
  cap is 64 MB: a 70 KB file of zTXt chunks held 69 MB beside the decode budget). Here
  at most `HEADER_TEXT_BYTES`; past it the image is `too_large`.
- Pillow runs a few decoders in Python (RLE BMP's pads a row a byte at a time: an 11 KB
  file of one-pixel rows, priced within the memory cap, took 17 s of CPU at 56 M
  pixels). Those decode at most `PYTHON_DECODE_PIXELS`; decoders in C are bounded by the
  decode budget alone.
"""

from __future__ import annotations

import io
import warnings
from typing import TYPE_CHECKING

from ... import quoting
from ...errors import ReadkeeperError
from .decode_price import MB
from .image_scan import Steps, Structure, gif_size, scan

if TYPE_CHECKING:
    from PIL import Image

DECODED_FORMATS = ("PNG", "JPEG", "GIF", "WEBP", "BMP", "TIFF")  # JPEG opens MPO too
HEADER_TEXT_BYTES = 4 * MB
# About 2 s of Pillow's Python RLE decoder at its worst.
PYTHON_DECODE_PIXELS = 8_000_000


def open_image(data: bytes, path: str, steps: Steps | None = None) -> tuple[Image.Image, Structure]:
    """`data` opened (header only) by one of `DECODED_FORMATS`, and its structure as
    image_scan.py walked it first; raises `too_large` for a file whose structure or
    header text is over its cap (or `steps`, the read's, are spent), and Pillow's own
    errors for the rest."""
    from PIL import Image, PngImagePlugin

    structure = scan(data, path, steps)
    PngImagePlugin.MAX_TEXT_MEMORY = min(PngImagePlugin.MAX_TEXT_MEMORY, HEADER_TEXT_BYTES)
    try:
        return Image.open(io.BytesIO(data), formats=DECODED_FORMATS), structure
    except ValueError as exc:
        if "MAX_TEXT_MEMORY" in str(exc):  # Pillow's words for its text cap
            raise _text_heavy(path) from None
        raise


def header_size(data: bytes) -> tuple[int, int] | None:
    """The width and height `data`'s header says, past Pillow's own pixel limit too
    (`Image.open` raises `DecompressionBombError` without them, so a refusal would say
    null): its format's plugin opens the header alone, as `Image.open` does before that
    check. Only after `open_image`, which walked the structure and capped header text."""
    from PIL import Image

    Image.init()
    for name in DECODED_FORMATS:
        factory, accept = Image.OPEN.get(name, (None, None))
        if factory is None or (accept is not None and not accept(data[:16])):
            continue
        try:
            with factory(io.BytesIO(data), "") as img:
                width, height = img.size
                return width, height
        except Image.DecompressionBombError:
            return gif_size(data) if name == "GIF" else None
        except Exception:  # not this format after all: the next
            continue
    return None


def probe(data: bytes, path: str = "image", steps: Steps | None = None) -> tuple[int, int] | None:
    """An image's stored width and height, from its header alone (None if unreadable);
    raises `too_large` for a file over the structure budget (image_scan.py), which
    Pillow is not given."""
    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            img, _ = open_image(data, path, steps)
            with img:
                return img.size
    except ReadkeeperError:
        raise
    except Image.DecompressionBombError:
        return header_size(data)
    except Exception:  # any unreadable image is simply "size unknown"
        return None


def check_decoder(img: Image.Image, path: str) -> None:
    """Refuse (`too_large`) a picture over `PYTHON_DECODE_PIXELS` that Pillow would
    decode in Python: its decoder is one registered from Python (Pillow's C decoders
    are not in that registry)."""
    from PIL import Image

    width, height = img.size
    if width * height <= PYTHON_DECODE_PIXELS:
        return
    if not any(tile[0] in Image.DECODERS for tile in getattr(img, "tile", [])):
        return
    raise ReadkeeperError(
        "too_large",
        f"{quoting.name(path)} is a {img.format} of {width}x{height} that Pillow decodes in "
        f"Python (compressed rows), slowly: over {PYTHON_DECODE_PIXELS:,} pixels it is not "
        "decoded. Ask the user for a smaller export, or for a copy saved as PNG with an "
        "image tool, and read that.",
        file_path=path,
        width=width,
        height=height,
        max_python_pixels=PYTHON_DECODE_PIXELS,
    )


def _text_heavy(path: str) -> ReadkeeperError:
    return ReadkeeperError(
        "too_large",
        f"{quoting.name(path)} carries over {HEADER_TEXT_BYTES // MB} MB of text in its "
        "header (PNG text chunks), which readkeeper does not inflate. Ask the user for a "
        "copy with its text stripped (by an image tool), and read that.",
        file_path=path,
        max_header_text_bytes=HEADER_TEXT_BYTES,
    )
