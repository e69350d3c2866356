"""The structure of an image file, walked under one budget before Pillow opens it.

Pillow walks a file's structure in Python: every PNG chunk (a 100 MB PNG of one real
IDAT and 8.7 M empty ones took 48 s to read), every GIF block and sub-block (counting the
frames of a GIF of 4.19 M one-pixel frames took 10 s), every TIFF directory and its
entries, every byte between two JPEG markers. It also inflates every compressed PNG
profile it meets (94,600 iCCP chunks of 1 KB, each inflating to 1 MB: 67 s of CPU). That
work grows with how the file is built, not with its pixels, so the decode's price
(decode_price.py) does not bound it. Here it is bounded:

- `scan` walks the same structure with cheap slicing, counting each step Pillow would
  take in Python (a chunk, a block, a directory entry, a stray byte) and stops at
  `STRUCTURE_STEPS`; what compressed metadata inflates to is counted, and inflated at
  most up to `METADATA_INFLATE_BYTES` in all.
- Past either cap before the first picture is reached (everything Pillow walks to open
  and decode it), the image is `too_large`, with how to rewrite it. Past the step cap
  after it (frames Pillow would walk only to count them), the frames are not counted
  further: the note says "at least N frames".

The scan's own cost is bounded by the same caps: a refusal on a `force` re-read costs
the walk again, never Pillow's.
"""

from __future__ import annotations

import contextlib
import struct
import zlib
from dataclasses import dataclass

from ... import quoting
from ...errors import ReadkeeperError
from .decode_price import MB

# Steps (chunks, blocks, directory entries, stray bytes) of a file's structure walked in
# all: about half a second of Pillow's Python at its slowest per step.
STRUCTURE_STEPS = 100_000
# What one read's images walk together (a notebook's, probed then decoded one after
# another): a few floods' worth, not one per image.
READ_STRUCTURE_STEPS = 4 * STRUCTURE_STEPS
# What a PNG's compressed metadata (iCCP profiles, zTXt and compressed iTXt text) may
# inflate to, together: a real ICC profile is at most about 1 MB.
METADATA_INFLATE_BYTES = 4 * MB
# PNG chunks whose payload is compressed metadata, with the bytes before the zlib stream
# found by `_png_inflate`.
_PNG_COMPRESSED = (b"iCCP", b"zTXt", b"iTXt")


@dataclass(frozen=True)
class Structure:
    """What the walk found: the frames it counted, and whether it counted them all."""

    frames: int | None  # None: the format's header says (PNG, WebP, JPEG)
    counted_all: bool = True


class Steps:
    """The structure steps one read's images have walked in all (a notebook's)."""

    def __init__(self, total: int = READ_STRUCTURE_STEPS) -> None:
        self.total = total
        self.spent = 0


class _Over(Exception):
    """A cap was passed; `what` says which, for the message; `for_read` when it was the
    read's share (`Steps`) rather than the file's own."""

    def __init__(self, what: str, for_read: bool = False) -> None:
        super().__init__(what)
        self.what = what
        self.for_read = for_read


class _Walk:
    """The steps and inflated bytes a scan has spent, and the steps it may."""

    def __init__(self, limit: int = STRUCTURE_STEPS) -> None:
        self.limit = limit
        self.steps = 0
        self.inflated = 0

    def step(self, count: int = 1) -> None:
        self.steps += count
        if self.steps > self.limit:
            if self.limit < STRUCTURE_STEPS:
                raise _Over("the images read before it", for_read=True)
            raise _Over(f"over {STRUCTURE_STEPS:,} chunks, blocks or markers")


def scan(data: bytes, path: str, steps: Steps | None = None) -> Structure:
    """Walk `data`'s structure within the caps (and what is left of the read's `steps`,
    charged with what this walk took); raises `too_large` past them before the first
    picture. WebP (walked by libwebp in C) passes as it is."""
    left = STRUCTURE_STEPS if steps is None else steps.total - steps.spent
    walk = _Walk(min(STRUCTURE_STEPS, left))
    try:
        return _scan(data, walk)
    except _Over as over:
        if over.for_read and steps is not None:
            raise _read_spent(path, steps) from None
        raise _too_structured(path, over.what) from None
    finally:
        if steps is not None:
            steps.spent = min(steps.total, steps.spent + walk.steps)


def _scan(data: bytes, walk: _Walk) -> Structure:
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        _png(data, walk)
    elif data[:6] in (b"GIF87a", b"GIF89a"):
        return _gif(data, walk)
    elif data.startswith(b"\xff\xd8"):
        _jpeg(data, walk)
    elif data[:4] in (b"II*\x00", b"MM\x00*"):
        return _tiff(data, walk)
    elif data.startswith(b"BM"):
        _bmp(data, walk)
    return Structure(frames=None)


def _png(data: bytes, walk: _Walk) -> None:
    pos = 8
    while pos + 8 <= len(data):
        walk.step()
        length, kind = struct.unpack_from(">I4s", data, pos)
        payload = data[pos + 8 : pos + 8 + length]
        if kind in _PNG_COMPRESSED:
            _png_inflate(kind, payload, walk)
        if kind == b"IEND":
            return
        pos += 12 + length


def _png_inflate(kind: bytes, payload: bytes, walk: _Walk) -> None:
    """Count what a compressed metadata chunk inflates to, inflating no further than
    the cap allows."""
    keyword_end = payload.find(b"\x00")
    if keyword_end < 0:
        return
    if kind == b"iTXt":
        if payload[keyword_end + 1 : keyword_end + 2] != b"\x01":
            return  # stored as it is
        start = keyword_end + 3
        for _ in range(2):  # the language tag, then the translated keyword
            end = payload.find(b"\x00", start)
            if end < 0:
                return
            start = end + 1
    else:
        start = keyword_end + 2  # the compression method byte
    left = METADATA_INFLATE_BYTES - walk.inflated
    try:
        inflated = zlib.decompressobj().decompress(payload[start:], left + 1)
    except zlib.error:
        return  # Pillow's own error, when it meets it
    walk.inflated += len(inflated)
    if walk.inflated > METADATA_INFLATE_BYTES:
        raise _Over(f"over {METADATA_INFLATE_BYTES // MB} MB of compressed metadata")


def _gif(data: bytes, walk: _Walk) -> Structure:
    if len(data) < 13:
        return Structure(frames=None)
    pos = 13 + _gif_palette(data[10])
    frames = 0
    try:
        while pos < len(data):
            walk.step()
            kind = data[pos]
            if kind == 0x21:  # an extension: its label, then sub-blocks
                pos = _gif_blocks(data, pos + 2, walk)
            elif kind == 0x2C:  # an image: descriptor, palette, LZW size, sub-blocks
                if pos + 10 > len(data):
                    break
                # Counted at its descriptor: libgif-like C code decodes its data, and
                # Pillow walks it in Python only to reach the next frame.
                frames += 1
                pos = _gif_blocks(data, pos + 11 + _gif_palette(data[pos + 9]), walk)
            else:  # the trailer, or bytes Pillow stops at
                break
    except _Over:
        if frames == 0:
            raise
        return Structure(frames=frames, counted_all=False)
    return Structure(frames=max(1, frames))


def gif_size(data: bytes) -> tuple[int, int] | None:
    """A GIF's size as Pillow takes it: its screen, grown to hold its first frame (which
    Pillow's plugin refuses inside its open when that is over Pillow's own pixel limit,
    before any size is known). None when no frame's descriptor is found within the caps."""
    if data[:6] not in (b"GIF87a", b"GIF89a") or len(data) < 13:
        return None
    width, height = struct.unpack_from("<HH", data, 6)
    pos = 13 + _gif_palette(data[10])
    walk = _Walk()
    with contextlib.suppress(_Over):
        while pos < len(data):
            walk.step()
            if data[pos] == 0x21:  # an extension before the frame: skipped
                pos = _gif_blocks(data, pos + 2, walk)
                continue
            if data[pos] != 0x2C or pos + 9 > len(data):
                break
            left, top, across, down = struct.unpack_from("<HHHH", data, pos + 1)
            return max(width, left + across), max(height, top + down)
    return None


def _gif_palette(flags: int) -> int:
    return 3 << ((flags & 7) + 1) if flags & 0x80 else 0


def _gif_blocks(data: bytes, pos: int, walk: _Walk) -> int:
    """The position after the sub-blocks starting at `pos` (and their terminator)."""
    while pos < len(data):
        walk.step()
        size = data[pos]
        pos += 1 + size
        if size == 0:
            break
    return pos


def _jpeg(data: bytes, walk: _Walk) -> None:
    """Markers up to the first scan: Pillow reads them, and every byte between them,
    one at a time in Python; libjpeg decodes from there."""
    pos = 2
    while pos < len(data):
        marker = data.find(b"\xff", pos)
        if marker < 0:
            return
        walk.step(marker - pos + 1)  # the stray bytes, then the marker
        pos = marker + 1
        while pos < len(data) and data[pos] == 0xFF:  # fill bytes
            walk.step()
            pos += 1
        if pos >= len(data):
            return
        code = data[pos]
        pos += 1
        if code == 0xDA or code == 0xD9:  # start of scan, end of image
            return
        if code in (0x01, 0x00) or 0xD0 <= code <= 0xD7:
            continue  # no length follows
        if pos + 2 > len(data):
            return
        pos += int.from_bytes(data[pos : pos + 2], "big")


def _tiff(data: bytes, walk: _Walk) -> Structure:
    """Directories (pages), their entries and their rational values: Pillow parses the
    first to open the file and walks every one to count pages."""
    order = "<" if data[:2] == b"II" else ">"
    if len(data) < 8:
        return Structure(frames=None)
    (offset,) = struct.unpack_from(order + "I", data, 4)
    pages = 0
    seen: set[int] = set()
    try:
        while offset and offset not in seen and offset + 2 <= len(data):
            seen.add(offset)
            (entries,) = struct.unpack_from(order + "H", data, offset)
            walk.step(1 + entries)
            after = offset + 2 + 12 * entries
            if after + 4 > len(data):
                pages += 1
                break
            walk.step(_tiff_rationals(data, order, offset + 2, entries))
            pages += 1  # walked whole: Pillow can open it
            (offset,) = struct.unpack_from(order + "I", data, after)
    except _Over:
        if pages == 0:
            raise
        return Structure(frames=pages, counted_all=False)
    return Structure(frames=max(1, pages))


def _bmp(data: bytes, walk: _Walk) -> None:
    """An RLE BMP: Pillow's decoder (in Python) takes one step per two-byte command, and
    commands that draw nothing (an end of line at a line's start, a delta of zero) cost
    as much as those that draw. Each command that draws adds a pixel or ends a row, so
    the commands past the picture's pixels and rows are charged to the walk."""
    if len(data) < 34 or int.from_bytes(data[14:18], "little") < 40:
        return  # an old OS/2 header: no compression
    if int.from_bytes(data[30:34], "little") not in (1, 2):  # RLE8, RLE4
        return
    offset = int.from_bytes(data[10:14], "little")
    width = abs(int.from_bytes(data[18:22], "little", signed=True))
    height = abs(int.from_bytes(data[22:26], "little", signed=True))
    commands = max(0, len(data) - offset) // 2
    walk.step(max(0, commands - width * height - height))


def _read_spent(path: str, steps: Steps) -> ReadkeeperError:
    return ReadkeeperError(
        "too_large",
        f"An image in {quoting.name(path)} was not opened: this read's images already "
        f"walked the {steps.total:,} chunks, blocks or markers one read may walk. Read "
        "fewer cells at a time to see it.",
        file_path=path,
        max_read_structure_steps=steps.total,
    )


def _tiff_rationals(data: bytes, order: str, start: int, entries: int) -> int:
    """The values of a directory's rational tags: Pillow builds each in Python (a 38 MB
    file of one tag of 5 M rationals took 12 s of CPU); other types it unpacks in C."""
    count = 0
    for _tag, kind, values, _ in struct.iter_unpack(
        order + "HHI4s", data[start : start + 12 * entries]
    ):
        if kind in (5, 10):  # RATIONAL, SRATIONAL
            count += values
    return count


def _too_structured(path: str, what: str) -> ReadkeeperError:
    return ReadkeeperError(
        "too_large",
        f"{quoting.name(path)} is built of {what}, more than readkeeper walks to show "
        "one picture (that work grows with the file's structure, not its pixels). "
        "Ask the user for a copy rewritten without them (by an image tool that strips "
        "metadata), and read that.",
        file_path=path,
        max_structure_steps=STRUCTURE_STEPS,
        max_metadata_inflate_bytes=METADATA_INFLATE_BYTES,
    )
