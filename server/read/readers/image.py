"""Images (PNG, JPEG, GIF, WebP, BMP, TIFF) fitted to a pixel, token and byte budget.

An image costs an agent's model about width * height / 750 tokens, whatever its bytes,
so the budget is set in pixels: the long edge at most `image_max_edge` and the area at
most `image_max_tokens` * 750, aspect kept, never upscaled. The payload is then made to
fit `image_max_base64_bytes`: an image already within every budget is sent as it is;
otherwise it is re-encoded (image_encode.py). The note says which.

Pillow does the decoding, priced before it starts (decode_price.py): what the decode
will hold is computed from the header and held in the server's one decode budget
(decode_budget.py), and a decode that cannot fit is refused with `too_large` before a
byte is inflated. JPEGs are decoded at a reduced DCT scale (`draft`), so a 12,000 x 8,000
photo is never held at full size; other formats are decoded whole, then converted and
box-reduced a tile at a time, so the full-size picture is held once, never copied.
Images with more pixels than `image_max_pixels` (or Pillow's own bomb limit) are refused
before decoding, and truncated files are refused, not shown half grey. What may be
opened, and how, is image_open.py's.
"""

from __future__ import annotations

import base64
import math
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from ... import quoting
from ...errors import ReadkeeperError, library_detail, library_words
from ...protocol import ImageDimensions, ImageFile
from ...settings import Settings
from . import worker
from .decode_budget import DECODE_MAX_BYTES, Allowance, Busy, budget, busy
from .decode_price import MB, decode_cost, reduce_factors, tile_shape
from .image_encode import b64_len, encode
from .image_open import check_decoder, header_size, open_image
from .image_scan import STRUCTURE_STEPS, Steps, Structure

if TYPE_CHECKING:
    from PIL import Image

# The estimate agents' models use for the cost of an image.
PIXELS_PER_TOKEN = 750
# Formats a model accepts as they are; anything else is re-encoded.
_SENDABLE = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
# EXIF orientations that swap width and height.
_TRANSPOSING = {5, 6, 7, 8}
# The turn that makes a picture stored in each EXIF orientation upright.
_UPRIGHT = {
    2: "FLIP_LEFT_RIGHT",
    3: "ROTATE_180",
    4: "FLIP_TOP_BOTTOM",
    5: "TRANSPOSE",
    6: "ROTATE_270",
    7: "TRANSVERSE",
    8: "ROTATE_90",
}


@dataclass(frozen=True)
class FittedImage:
    """An image fitted to the pixel, token and byte budgets: the payload, its sizes
    before and after, and the note that says what was done."""

    base64: str
    media_type: str
    format: str  # the source's format
    original_width: int  # as displayed, after EXIF rotation
    original_height: int
    width: int
    height: int
    tokens: int
    frames: int
    note: str | None
    decode_bytes: int = 0  # what the decode was priced at (decode_price.py)


def tokens_for(width: int, height: int) -> int:
    """What an image of this size costs the agent's model, in tokens."""
    return -(-width * height // PIXELS_PER_TOKEN)


def budget_size(width: int, height: int, settings: Settings) -> tuple[int, int]:
    """The largest size with the same aspect that fits the edge and token budgets."""
    scale = min(
        1.0,
        settings.image_max_edge / max(width, height),
        math.sqrt(settings.image_max_tokens * PIXELS_PER_TOKEN / (width * height)),
    )
    if scale >= 1.0:
        return width, height
    w, h = max(1, int(width * scale)), max(1, int(height * scale))
    while tokens_for(w, h) > settings.image_max_tokens and (w > 1 or h > 1):
        w, h = (w - 1, h) if w * height >= h * width and w > 1 else (w, max(1, h - 1))
    return w, h


def read_image(data: bytes, path: str, settings: Settings) -> ImageFile:
    """The `image` result for an image file's bytes."""
    fitted = fit_image(data, path, settings)
    return ImageFile(
        file_path=path,
        base64=fitted.base64,
        media_type=fitted.media_type,
        original_size=len(data),
        dimensions=ImageDimensions(
            original_width=fitted.original_width,
            original_height=fitted.original_height,
            display_width=fitted.width,
            display_height=fitted.height,
        ),
        tokens=fitted.tokens,
        format=fitted.format,
        frames=fitted.frames if fitted.frames > 1 else None,
        note=fitted.note,
    )


def fit_image(
    data: bytes,
    path: str,
    settings: Settings,
    allowance: Allowance | None = None,
    steps: Steps | None = None,
) -> FittedImage:
    """Decode `data` and fit it to the budgets; raises `too_large` or `corrupt`. What
    the decode will hold is priced from the header first and held in the server's decode
    budget (decode_budget.py) while it runs; `allowance` is the read's own, for a read
    that decodes many images, with `steps` its share of structure to walk
    (image_scan.py)."""
    from PIL import Image

    with warnings.catch_warnings():
        # The pixel limit is checked below, with an error the agent can act on.
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        try:
            img, structure = open_image(data, path, steps)
        except Image.DecompressionBombError:
            raise _bomb(path, header_size(data), settings) from None
        except Exception as exc:  # Pillow raises many types for undecodable input
            if isinstance(exc, ReadkeeperError):
                raise
            raise _corrupt(path, exc) from None
        with img:
            plan = _plan(img, structure, data, path, settings)
            if plan.cost > DECODE_MAX_BYTES:
                raise _over_decode_cap(path, img, plan)
            if allowance is not None and not allowance.take(plan.cost):
                raise _over_allowance(path, plan, allowance)
            try:
                with budget().reserve(plan.cost, cancelled=worker.cancelled):
                    try:
                        return _fit(img, plan, data, path, settings)
                    finally:
                        # The pixels go before the budget is given back (and trimmed).
                        img.close()
            except Busy:
                raise busy(path) from None


@dataclass(frozen=True)
class _Plan:
    """What is known of an image before its pixels are decoded."""

    source_format: str
    width: int  # as displayed, after EXIF rotation
    height: int
    orientation: int
    frames: int
    counted_all: bool  # False: at least `frames` (image_scan.py stopped counting)
    target: tuple[int, int]  # display size after the pixel and token budgets
    as_is: bool  # sent as its own bytes, after a decode that proves it whole
    cost: int  # bytes the decode and fitting hold at their peak


def _plan(
    img: Image.Image, structure: Structure, data: bytes, path: str, settings: Settings
) -> _Plan:
    source_format = img.format or "unknown"
    stored_w, stored_h = img.size
    if stored_w * stored_h > settings.image_max_pixels:
        raise _bomb(path, (stored_w, stored_h), settings)
    check_decoder(img, path)
    # GIF and TIFF frames were counted by the scan, within its budget (Pillow's
    # `n_frames` walks every one); the other formats' headers say.
    frames = structure.frames or int(getattr(img, "n_frames", 1))
    orientation = _orientation(img)
    width, height = (stored_h, stored_w) if orientation in _TRANSPOSING else img.size
    target = budget_size(width, height, settings)
    as_is = (
        source_format in _SENDABLE
        and target == (width, height)
        and orientation == 1
        and frames == 1
        and structure.counted_all
        and b64_len(len(data)) <= settings.image_max_base64_bytes
    )
    stored_target = target if orientation not in _TRANSPOSING else target[::-1]
    if target != (width, height):
        # Decode at the smallest DCT scale that still covers the target (JPEG only).
        img.draft(None, stored_target)
    cost = decode_cost(img, (stored_w, stored_h), None if as_is else stored_target, data)
    return _Plan(
        source_format,
        width,
        height,
        orientation,
        frames,
        structure.counted_all,
        target,
        as_is,
        cost,
    )


def _fit(img: Image.Image, plan: _Plan, data: bytes, path: str, settings: Settings) -> FittedImage:
    from PIL import Image

    source_format, width, height, frames = plan.source_format, plan.width, plan.height, plan.frames
    orientation, target = plan.orientation, plan.target
    notes: list[str] = []
    if not plan.counted_all:
        notes.append(
            f"{source_format} of at least {frames} frame{'s' if frames > 1 else ''}: showing "
            f"the first (readkeeper stops counting after {STRUCTURE_STEPS:,} blocks of a "
            "file's structure)."
        )
    elif frames > 1:
        what = "Animated" if source_format in ("GIF", "PNG", "WEBP") else "Multi-image"
        notes.append(
            f"{what} {source_format}: showing the first of {frames} frames ({frames - 1} dropped)."
        )

    if plan.as_is:
        _decode(img, path)  # a truncated file must fail here, not in the model
        return FittedImage(
            base64=base64.b64encode(data).decode("ascii"),
            media_type=_SENDABLE[source_format],
            format=source_format,
            original_width=width,
            original_height=height,
            width=width,
            height=height,
            tokens=tokens_for(width, height),
            frames=frames,
            note=" ".join(notes) or None,
            decode_bytes=plan.cost,
        )

    _decode(img, path)
    # Downscaled as stored, then turned upright: the turn copies the small picture only.
    stored_target = target if orientation not in _TRANSPOSING else target[::-1]
    # An integer box reduction first (box averaging does not alias), then Lanczos for
    # the rest: twice as fast as Lanczos alone.
    picture = _reduced(img, stored_target)
    if picture.size != stored_target:
        picture = picture.resize(stored_target, Image.Resampling.LANCZOS)
    if orientation != 1:
        picture = picture.transpose(Image.Transpose[_UPRIGHT[orientation]])
    payload, media_type, how, (width_out, height_out) = encode(
        picture, source_format, target != (width, height), settings
    )
    if (width_out, height_out) != (width, height):
        reasons = []
        if target != (width, height):
            reasons.append(f"{settings.image_max_tokens:,} tokens and {settings.image_max_edge} px")
        if (width_out, height_out) != target:
            reasons.append(f"the {settings.image_max_base64_bytes:,}-byte payload cap")
        why = " and ".join(reasons)
        notes.insert(
            0,
            f"Downscaled from {width}x{height} to {width_out}x{height_out} to fit {why}; "
            f"map coordinates back by x{width / width_out:.3f}.",
        )
    if orientation != 1:
        notes.append(f"Rotated upright per EXIF orientation {orientation}.")
    notes.append(f"Sent as {how}.")
    return FittedImage(
        base64=base64.b64encode(payload).decode("ascii"),
        media_type=media_type,
        format=source_format,
        original_width=width,
        original_height=height,
        width=width_out,
        height=height_out,
        tokens=tokens_for(width_out, height_out),
        frames=frames,
        note=" ".join(notes),
        decode_bytes=plan.cost,
    )


def _decode(img: Image.Image, path: str) -> None:
    try:
        img.load()
    except Exception as exc:
        raise _corrupt(path, exc) from None


def _reduced(img: Image.Image, size: tuple[int, int]) -> Image.Image:
    """`img` in a displayable mode, box-reduced by the largest whole factors that keep it
    at least `size`. A tile at a time (decode_price.py's `tile_shape`: rows of a very
    wide picture are cut too): Pillow's own `reduce` and `resize` copy an RGBA picture
    whole (premultiplied) first, which doubles a bomb's peak."""
    from PIL import Image

    width, height = img.size
    factors = reduce_factors(img.size, size)
    if factors == (1, 1) or img.mode.startswith("I") or img.mode == "F":
        # Nothing to reduce, or grey scaled by the whole picture's range (priced whole).
        picture = _displayable(img)
        return picture if factors == (1, 1) else picture.reduce(factors)
    step_x, step_y = factors
    columns, rows = tile_shape(img.size, factors)
    reduced: Image.Image | None = None
    for top in range(0, height, rows):
        for left in range(0, width, columns):
            box = (left, top, min(width, left + columns), min(height, top + rows))
            tile = _displayable(img.crop(box)).reduce(factors)
            if reduced is None:
                reduced = Image.new(tile.mode, (-(-width // step_x), -(-height // step_y)))
            reduced.paste(tile, (left // step_x, top // step_y))
    assert reduced is not None
    return reduced


def _displayable(img: Image.Image) -> Image.Image:
    """`img` in a mode every encoder takes: L, RGB, or RGBA."""
    mode = img.mode
    if mode in ("L", "RGB", "RGBA"):
        return img
    if mode in ("1", "LA", "La"):
        return img.convert("RGBA" if mode != "1" else "L")
    if mode.startswith("I") or mode == "F":
        # 16- and 32-bit grey: scale into 8 bits rather than clip to white.
        low, high = cast("tuple[float, float]", img.getextrema())
        span = (high - low) or 1
        return img.convert("F").point(lambda v: (v - low) * 255 / span).convert("L")
    if mode in ("P", "PA"):
        transparent = "transparency" in img.info or mode == "PA"
        return img.convert("RGBA" if transparent else "RGB")
    return img.convert("RGBA" if "A" in mode else "RGB")


def _orientation(img: Image.Image) -> int:
    if img.format == "PNG" and "exif" not in img.info:
        # Pillow looks for an eXIf chunk after the pixel data by decoding them all (a
        # bomb's whole decode, before any limit could refuse it); the PNG specification
        # places the chunk before them.
        return 1
    try:
        value = img.getexif().get(0x0112, 1)  # Orientation
    except Exception:  # unreadable EXIF is no reason to refuse the picture
        return 1
    return value if isinstance(value, int) and 1 <= value <= 8 else 1


def _bomb(path: str, size: tuple[int, int] | None, settings: Settings) -> ReadkeeperError:
    dims = f"{size[0]}x{size[1]} ({size[0] * size[1]:,} pixels)" if size else "too many pixels"
    return ReadkeeperError(
        "too_large",
        f"{path} is {dims}, over the {settings.image_max_pixels:,}-pixel limit for images "
        "(a decompression bomb guard). Ask the user for a smaller export of it; the "
        "image_max_pixels setting raises the limit up to Pillow's own.",
        file_path=path,
        width=size[0] if size else None,
        height=size[1] if size else None,
        max_pixels=settings.image_max_pixels,
    )


def _corrupt(path: str, exc: BaseException) -> ReadkeeperError:
    detail = library_detail(exc)
    return ReadkeeperError(
        "corrupt",
        f"{quoting.name(path)} cannot be decoded as an image ({library_words(exc)}). It may "
        "be truncated or damaged: ask the user for an intact copy.",
        file_path=path,
        detail=detail,
    )


def _over_decode_cap(path: str, img: Image.Image, plan: _Plan) -> ReadkeeperError:
    return ReadkeeperError(
        "too_large",
        f"{quoting.name(path)} is {plan.width}x{plan.height} {img.mode}: decoding it takes "
        f"{plan.cost / MB:,.0f} MB, over the {DECODE_MAX_BYTES // MB} MB one image may use. "
        "Ask the user for a smaller export, or for a copy downscaled (to 1568x1568 or "
        "less) with an image tool, and read that.",
        file_path=path,
        width=plan.width,
        height=plan.height,
        decode_bytes=plan.cost,
        max_decode_bytes=DECODE_MAX_BYTES,
    )


def _over_allowance(path: str, plan: _Plan, allowance: Allowance) -> ReadkeeperError:
    return ReadkeeperError(
        "too_large",
        f"An image of {plan.width}x{plan.height} in {path} was not decoded: this read's "
        f"images already took {allowance.spent / MB:,.0f} of the {allowance.total // MB} MB "
        "one read may decode. Read fewer cells at a time to see it.",
        file_path=path,
        decode_bytes=plan.cost,
        max_read_decode_bytes=allowance.total,
    )
