"""The payload of a fitted picture: the bytes a model is sent, within the byte cap.

PNG for line art and flat-colour screenshots (tried when the picture has at most 4,096
colours, or was not downscaled, and kept while it costs at most half as many bytes
again as a JPEG), else JPEG (WebP when it has transparency) at falling quality, colour
kept at full resolution for lossless sources so coloured text stays sharp; and smaller
still when even that is over the byte cap.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, cast

from ...errors import ReadkeeperError
from ...settings import Settings

if TYPE_CHECKING:
    from PIL import Image

_LOSSY_SOURCES = {"JPEG", "MPO"}
# Lossless output is kept while it is at most this many times the size of a JPEG.
_LOSSLESS_ALLOWANCE = 1.5
_JPEG_QUALITIES = (85, 75, 60, 45)
_FLAT_COLOURS = 4096
_WEBP_QUALITIES = (60, 40)
_SHRINK_STEP = 0.75


def encode(
    picture: Image.Image, source_format: str, resized: bool, settings: Settings
) -> tuple[bytes, str, str, tuple[int, int]]:
    """The payload for `picture`: bytes, media type, how it was made, and its size
    (smaller than `picture` when nothing else fit the byte cap)."""
    from PIL import Image

    cap = settings.image_max_base64_bytes
    lossy_format = "WEBP" if _has_alpha(picture) else "JPEG"
    # Full-resolution colour for screenshots: 4:2:0 blurs coloured text.
    chroma = 0 if source_format not in _LOSSY_SOURCES else 2
    lossy = _save(picture, lossy_format, quality=_JPEG_QUALITIES[0], chroma=chroma)
    # Lossless is worth trying for flat graphics (after a downscale, anti-aliased text and
    # gradients have thousands of colours and PNG comes out two or three times a JPEG).
    flat = picture.getcolors(_FLAT_COLOURS) is not None
    if source_format not in _LOSSY_SOURCES and (flat or not resized):
        lossless = _save(picture, "PNG")
        if len(lossless) <= _LOSSLESS_ALLOWANCE * len(lossy) and b64_len(len(lossless)) <= cap:
            return lossless, "image/png", "PNG (lossless: line art or flat colours)", picture.size
    while True:
        for quality in _JPEG_QUALITIES:
            if quality != _JPEG_QUALITIES[0]:
                lossy = _save(picture, lossy_format, quality=quality, chroma=chroma)
            if b64_len(len(lossy)) <= cap:
                what = f"{lossy_format} at quality {quality}"
                return lossy, f"image/{lossy_format.lower()}", what, picture.size
        for quality in _WEBP_QUALITIES:
            smaller = _save(picture, "WEBP", quality=quality)
            if b64_len(len(smaller)) <= cap:
                return smaller, "image/webp", f"WEBP at quality {quality}", picture.size
        if picture.width <= 16 and picture.height <= 16:
            raise ReadkeeperError(
                "too_large",
                f"No encoding of this image fits the {cap:,}-byte payload cap. Raise the "
                "image_max_base64_bytes setting (READKEEPER_IMAGE_MAX_BASE64_BYTES).",
                max_base64_bytes=cap,
            )
        size = (
            max(1, int(picture.width * _SHRINK_STEP)),
            max(1, int(picture.height * _SHRINK_STEP)),
        )
        picture = picture.resize(size, Image.Resampling.LANCZOS)
        lossy = _save(picture, lossy_format, quality=_JPEG_QUALITIES[0], chroma=chroma)


def _save(picture: Image.Image, fmt: str, quality: int = 0, chroma: int = 2) -> bytes:
    out = io.BytesIO()
    if fmt == "PNG":
        # Level 3 is within a few percent of 6 on screenshots, at two thirds the time.
        picture.save(out, "PNG", compress_level=3)
    elif fmt == "JPEG":
        rgb = picture if picture.mode in ("RGB", "L") else picture.convert("RGB")
        # The source's comment is not the model's (and a GIF's may be longer than the
        # 65,533 bytes a JPEG comment holds: the encoder raised).
        rgb.save(out, "JPEG", quality=quality, subsampling=chroma, comment=b"")
    else:
        picture.save(out, "WEBP", quality=quality, method=3)
    return out.getvalue()


def _has_alpha(picture: Image.Image) -> bool:
    if picture.mode != "RGBA":
        return False
    low, _high = cast("tuple[int, int]", picture.getchannel("A").getextrema())
    return low < 255


def b64_len(size: int) -> int:
    return 4 * -(-size // 3)
