"""Hostile images for the decode-budget tests and benchmark: files of a few hundred KB
whose pixels take hundreds of MB once decoded, and files whose headers say more than
they hold. Each is written from its format's bytes (zlib, struct), never by decoding
or encoding the full-size picture, so making one costs the test almost no memory."""

from __future__ import annotations

import functools
import io
import struct
import zlib

from PIL import Image

BOMB_EDGE = 13_000  # 169 M pixels: under Pillow's and readkeeper's pixel caps


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


@functools.cache  # bytes: one making a size per test process (13,000 square took 10 s)
def png_bomb(
    width: int = BOMB_EDGE, height: int = BOMB_EDGE, rows: int | None = None, grey: bool = False
) -> bytes:
    """A real RGBA PNG of `width` x `height` transparent pixels (13,000 square: 676 MB
    decoded, about 650 KB on disk), or with `grey` an 8-bit grey one. With `rows`, the
    pixel data stops after that many rows: a header that promises more than the file
    holds."""
    samples, colour = (1, 0) if grey else (4, 6)
    header = struct.pack(">IIBBBBB", width, height, 8, colour, 0, 0, 0)
    deflate = zlib.compressobj(9)
    data = _deflated_rows(deflate, 1 + samples * width, height if rows is None else rows)
    data += deflate.flush()
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", data)
        + _png_chunk(b"IEND", b"")
    )


def _deflated_rows(deflate: zlib._Compress, row_bytes: int, rows: int) -> bytes:
    """`rows` zero rows of `row_bytes` through `deflate`, a few MB of input at a time (a
    row of 178,000,000 pixels is never built whole, nor 178,000,000 rows one by one)."""
    out = []
    chunk = 1 << 22
    total = row_bytes * rows
    block = bytes(min(chunk, total))
    while total > 0:
        out.append(deflate.compress(block[: min(chunk, total)]))
        total -= chunk
    return b"".join(out)


def gif_bomb(width: int = BOMB_EDGE, height: int = BOMB_EDGE) -> bytes:
    """A real GIF of `width` x `height` palette pixels, all one colour (13,000 square:
    169 MB decoded, 125 KB on disk). Pillow's LZW encoder writes it (the test process
    holds the 169 MB for a few seconds)."""
    picture = Image.new("P", (width, height), 0)
    picture.putpalette([0, 0, 0, 255, 255, 255])
    out = io.BytesIO()
    picture.save(out, "GIF")
    return out.getvalue()


def gif_claiming(width: int = BOMB_EDGE, height: int = BOMB_EDGE) -> bytes:
    """A 35-byte GIF whose one frame says `width` x `height` palette pixels and whose
    LZW data is a clear code and an end code: a header that promises what is not there."""
    screen = struct.pack("<HHBBB", width, height, 0x80, 0, 0)  # 2-colour global palette
    palette = b"\x00\x00\x00\xff\xff\xff"
    descriptor = b"," + struct.pack("<HHHHB", 0, 0, width, height, 0)
    # Minimum code size 2: one sub-block holding the clear code (4) and the end code (5),
    # three bits each, then the terminator.
    lzw = b"\x02\x01\x2c\x00"
    return b"GIF89a" + screen + palette + descriptor + lzw + b";"


def tiff_bomb(width: int = BOMB_EDGE, height: int = BOMB_EDGE, tile: int | None = None) -> bytes:
    """A deflate-compressed RGB TIFF of `width` x `height` black pixels: one strip, or
    with `tile` one `tile` x `tile` tile (a tile may be larger than the picture)."""
    deflate = zlib.compressobj(9)
    block = (tile, tile) if tile else (width, height)
    strip = _deflated_rows(deflate, 3 * block[0], block[1]) + deflate.flush()
    layout = (
        [(322, 4, 1, tile), (323, 4, 1, tile), (324, 4, 1, 0), (325, 4, 1, len(strip))]
        if tile
        else [(273, 4, 1, 0), (278, 4, 1, height), (279, 4, 1, len(strip))]
    )
    entries = [
        (256, 4, 1, width),  # ImageWidth, LONG
        (257, 4, 1, height),  # ImageLength
        (258, 3, 3, 0),  # BitsPerSample 8,8,8: the value is at an offset, patched below
        (259, 3, 1, 8),  # Compression: deflate
        (262, 3, 1, 2),  # PhotometricInterpretation: RGB
        (277, 3, 1, 3),  # SamplesPerPixel
        *layout,  # StripOffsets or TileOffsets (patched below), and the sizes
    ]
    entries.sort()
    ifd_offset = 8
    ifd_size = 2 + 12 * len(entries) + 4
    bits_offset = ifd_offset + ifd_size
    strip_offset = bits_offset + 6
    out = io.BytesIO()
    out.write(b"II*\x00" + struct.pack("<I", ifd_offset))
    out.write(struct.pack("<H", len(entries)))
    for tag, kind, count, value in entries:
        if tag == 258:
            value = bits_offset
        elif tag in (273, 324):
            value = strip_offset
        if kind == 3 and count == 1:
            out.write(struct.pack("<HHIHH", tag, kind, count, value, 0))
        else:
            out.write(struct.pack("<HHII", tag, kind, count, value))
    out.write(struct.pack("<I", 0))
    out.write(struct.pack("<HHH", 8, 8, 8))
    out.write(strip)
    return out.getvalue()


def bmp_rle_rows(width: int, height: int, overrun: bool = False) -> bytes:
    """An 8-bit RLE BMP of `width` x `height` zero pixels written with deltas (each moves
    255 rows down in 4 bytes: a 1 x 178,000,000 picture in 2.8 MB). With `overrun`, one
    delta of 255 rows from the last row: Pillow's decoder writes them all."""
    palette = b"\x00\x00\x00\x00" * 2
    if overrun:
        pixels = b"\x00\x02\x00\xff"
    else:
        full, rest = divmod(height, 255)
        pixels = b"\x00\x02\x00\xff" * full + (b"\x00\x02\x00" + bytes([rest]) if rest else b"")
    pixels += b"\x00\x01"
    return _bmp(width, height, palette, pixels)


def bmp_rle_padded(width: int, height: int) -> bytes:
    """An 8-bit RLE BMP whose rows are one pixel and an end of line: 4 bytes a row, which
    Pillow's decoder (Python) pads to the row's width a byte at a time."""
    pixels = b"\x01\x00\x00\x00" * height + b"\x00\x01"
    return _bmp(width, height, b"\x00\x00\x00\x00" * 2, pixels)


def _bmp(width: int, height: int, palette: bytes, pixels: bytes) -> bytes:
    offset = 14 + 40 + len(palette)
    info = struct.pack("<IiiHHIIiiII", 40, width, height, 1, 8, 1, len(pixels), 0, 0, 2, 0)
    head = b"BM" + struct.pack("<IHHI", offset + len(pixels), 0, 0, offset)
    return head + info + palette + pixels


def bmp_bomb(width: int = BOMB_EDGE, height: int = BOMB_EDGE) -> bytes:
    """A real 8-bit RLE BMP of `width` x `height` pixels of colour 0: runs of 255, an end
    of line per row, an end of bitmap (13,000 square: 169 MB decoded, 1.4 MB on disk)."""
    palette = b"\x00\x00\x00\x00" * 2
    full, rest = divmod(width, 255)
    row = b"\xff\x00" * full + (bytes([rest, 0]) if rest else b"") + b"\x00\x00"
    return _bmp(width, height, palette, row * height + b"\x00\x01")


def webp_bomb(width: int = BOMB_EDGE, height: int = BOMB_EDGE) -> bytes:
    """A lossless WebP whose header says `width` x `height` (a small real picture with
    its VP8L size field rewritten: libwebp allocates the canvas the header names)."""
    out = io.BytesIO()
    Image.new("RGBA", (16, 16), (0, 0, 0, 0)).save(out, "WEBP", lossless=True)
    data = bytearray(out.getvalue())
    at = data.index(b"VP8L") + 8  # chunk id, chunk size, then the 0x2f signature
    assert data[at] == 0x2F
    bits = int.from_bytes(data[at + 1 : at + 5], "little")
    bits = (bits & ~((1 << 28) - 1)) | (width - 1) | ((height - 1) << 14)
    data[at + 1 : at + 5] = bits.to_bytes(4, "little")
    return bytes(data)


def jpeg_claiming(width: int, height: int) -> bytes:
    """A real 256x256 JPEG whose frame header (SOF0) says `width` x `height`."""
    out = io.BytesIO()
    Image.new("RGB", (256, 256), (120, 60, 30)).save(out, "JPEG", quality=80)
    data = bytearray(out.getvalue())
    at = data.index(b"\xff\xc0") + 5  # marker, length (2), precision (1): height, width
    data[at : at + 4] = struct.pack(">HH", height, width)
    return bytes(data)


def animated_gif(frames: int, edge: int = 32) -> bytes:
    """An animated GIF of `frames` small frames, each a different grey."""
    pictures = [Image.new("L", (edge, edge), n % 256) for n in range(frames)]
    out = io.BytesIO()
    pictures[0].save(out, "GIF", save_all=True, append_images=pictures[1:], duration=10)
    return out.getvalue()


def png_text_bomb(chunks: int = 70) -> bytes:
    """A 1 x 1 grey PNG with `chunks` zTXt chunks of 1 MB of zeros each (1 KB each on
    disk): Pillow inflates the text when it opens the file, before any pixel."""
    text = zlib.compress(bytes(1_000_000), 9)
    body = b"".join(_png_chunk(b"zTXt", b"k%d\0\0" % n + text) for n in range(chunks))
    header = _png_chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
    pixels = _png_chunk(b"IDAT", zlib.compress(b"\0\0"))
    return b"\x89PNG\r\n\x1a\n" + header + body + pixels + _png_chunk(b"IEND", b"")
