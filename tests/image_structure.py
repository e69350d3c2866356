"""Images whose cost grows with how the file is built rather than with its pixels: a
one-pixel picture in a flood of chunks, blocks, markers or directories. Each is written
from its format's bytes, by repetition, so a file of millions of steps is made at once."""

from __future__ import annotations

import io
import struct
import zlib

from PIL import Image


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


_PNG_HEAD = b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
_PNG_PIXEL = _png_chunk(b"IDAT", zlib.compress(b"\x00\x00"))
_PNG_END = _png_chunk(b"IEND", b"")


def png_idat_flood(chunks: int) -> bytes:
    """A 1 x 1 grey PNG: its real IDAT, then `chunks` empty IDAT chunks (walked by the
    decode)."""
    return _PNG_HEAD + _PNG_PIXEL + _png_chunk(b"IDAT", b"") * chunks + _PNG_END


def png_ancillary_flood(chunks: int) -> bytes:
    """A 1 x 1 grey PNG with `chunks` empty private chunks before its pixels (walked when
    the file is opened)."""
    return _PNG_HEAD + _png_chunk(b"prVt", b"") * chunks + _PNG_PIXEL + _PNG_END


def png_profiles(count: int, inflated: int = 1_000_000) -> bytes:
    """A 1 x 1 grey PNG with `count` iCCP chunks of about 1 KB, each a profile inflating
    to `inflated` bytes of zeros."""
    profile = _png_chunk(b"iCCP", b"p\x00\x00" + zlib.compress(bytes(inflated), 9))
    return _PNG_HEAD + profile * count + _PNG_PIXEL + _PNG_END


def _one_pixel_gif() -> tuple[bytes, bytes]:
    """A 1 x 1 GIF's header (up to its first image) and that image's bytes."""
    out = io.BytesIO()
    Image.new("P", (1, 1), 0).save(out, "GIF")
    data = out.getvalue()
    start = data.index(b"\x2c", 13)
    return data[:start], data[start:-1]


def gif_frames(frames: int) -> bytes:
    """A GIF of `frames` one-pixel frames, each behind its own control extension."""
    head, image = _one_pixel_gif()
    control = b"\x21\xf9\x04\x00\x00\x00\x00\x00"
    return head + (control + image) * frames + b"\x3b"


def gif_long_extension(blocks: int) -> bytes:
    """A 1 x 1 GIF whose first image comes after a comment of `blocks` one-byte
    sub-blocks (walked when the file is opened)."""
    head, image = _one_pixel_gif()
    return head + b"\x21\xfe" + b"\x01x" * blocks + b"\x00" + image + b"\x3b"


def jpeg_stray_bytes(count: int) -> bytes:
    """A 1 x 1 JPEG with `count` bytes that are no marker after its first segment
    (skipped one at a time when the file is opened)."""
    out = io.BytesIO()
    Image.new("L", (1, 1), 0).save(out, "JPEG")
    data = out.getvalue()
    first = 4 + int.from_bytes(data[4:6], "big")
    return data[:first] + b"\x00" * count + data[first:]


def tiff_pages(pages: int) -> bytes:
    """A little-endian TIFF of `pages` directories that all describe the same 1 x 1 grey
    strip."""
    entries = [
        (256, 3, 1, 1),  # width
        (257, 3, 1, 1),  # height
        (258, 3, 1, 8),  # bits per sample
        (259, 3, 1, 1),  # no compression
        (262, 3, 1, 1),  # black is zero
        (273, 4, 1, 8),  # the strip's offset
        (277, 3, 1, 1),  # samples per pixel
        (278, 3, 1, 1),  # rows per strip
        (279, 4, 1, 1),  # the strip's bytes
    ]
    size = 2 + 12 * len(entries) + 4
    first = 16  # after the header and the strip (padded)
    out = bytearray(b"II*\x00" + struct.pack("<I", first) + b"\x80" + bytes(7))
    for page in range(pages):
        out += struct.pack("<H", len(entries))
        for tag, kind, count, value in entries:
            packed = struct.pack("<H", value) + b"\0\0" if kind == 3 else struct.pack("<I", value)
            out += struct.pack("<HHI", tag, kind, count) + packed
        following = first + size * (page + 1) if page + 1 < pages else 0
        out += struct.pack("<I", following)
    return bytes(out)


def bmp_rle_idle(commands: int, edge: int = 16) -> bytes:
    """An 8-bit RLE BMP of `edge` x `edge`: `commands` end-of-line commands that draw
    nothing, then each row as one run and the end of the bitmap."""
    rows = (bytes([edge, 7]) + b"\x00\x00") * edge
    pixels = b"\x00\x00" * commands + rows + b"\x00\x01"
    palette = b"".join(bytes([n, n, n, 0]) for n in range(256))
    offset = 14 + 40 + len(palette)
    info = struct.pack("<IiiHHIIiiII", 40, edge, edge, 1, 8, 1, len(pixels), 2835, 2835, 256, 0)
    head = b"BM" + struct.pack("<IHHI", offset + len(pixels), 0, 0, offset)
    return head + info + palette + pixels


def gif_comment(size: int, frames: int = 2) -> bytes:
    """A GIF of `frames` one-pixel frames behind a comment of `size` bytes in full
    sub-blocks (JPEG's comment marker holds at most 65,533)."""
    head, image = _one_pixel_gif()
    blocks = b"".join(
        bytes([len(part)]) + part
        for part in (b"x" * min(255, size - n) for n in range(0, size, 255))
    )
    return head + b"\x21\xfe" + blocks + b"\x00" + image * frames + b"\x3b"


def tiff_rationals(count: int) -> bytes:
    """A 1 x 1 grey TIFF whose one directory holds an X resolution of `count` rationals
    (Pillow builds each in Python when it opens the file)."""
    entries = [
        (256, 3, 1, 1),
        (257, 3, 1, 1),
        (258, 3, 1, 8),
        (259, 3, 1, 1),
        (262, 3, 1, 1),
        (273, 4, 1, 8),
        (277, 3, 1, 1),
        (278, 3, 1, 1),
        (279, 4, 1, 1),
        (282, 5, count, 16 + 2 + 12 * 10 + 4),  # the values follow the directory
    ]
    out = bytearray(b"II*\x00" + struct.pack("<I", 16) + b"\x80" + bytes(7))
    out += struct.pack("<H", len(entries))
    for tag, kind, number, value in entries:
        packed = struct.pack("<H", value) + b"\0\0" if kind == 3 else struct.pack("<I", value)
        out += struct.pack("<HHI", tag, kind, number) + packed
    out += struct.pack("<I", 0)
    return bytes(out) + struct.pack("<II", 72, 1) * count
