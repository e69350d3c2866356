"""The readers, one module per kind of file, and `sniff`, which picks one.

The bytes decide first: a PNG named `notes.txt` is an image, and a text file named
`logo.png` (a Git LFS pointer, say) is text. The name decides only where the bytes
cannot: a notebook is JSON, with no signature of its own. SVG is text. Files no
reader claims go to the text reader, which refuses what is not text.

`read_document` runs the reader for a kind; the read pipeline (read/pipeline.py) keeps
the read-state around it. Heavy libraries (Pillow, nbformat) are imported inside the
readers, on first use, never when the server starts; pypdf and pypdfium2 only ever in
the PDF worker's process (pdf_worker.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from ...errors import ReadkeeperError
from ...files.fileio import peek
from ...protocol import ImageResult, NotebookResult, PartsResult, PdfResult, ReadParams
from ...settings import Settings
from ..tokens import TokenCounter
from .text import Window

Kind = Literal["image", "pdf", "notebook"]

# Enough for every signature below (a PDF header may sit up to 1 KB into the file).
SNIFF_BYTES = 1024

_IMAGE_SIGNATURES = (
    b"\x89PNG\r\n\x1a\n",
    b"\xff\xd8\xff",  # JPEG
    b"GIF87a",
    b"GIF89a",
    b"II*\x00",  # TIFF, little-endian
    b"MM\x00*",  # TIFF, big-endian
)
# The sizes of the BMP info headers Pillow reads (BITMAPCOREHEADER .. BITMAPV5HEADER).
_BMP_INFO_SIZES = {12, 40, 52, 56, 64, 108, 124}


def sniff(head: bytes, path: str) -> Kind | None:
    """Which reader `path` needs, from its first `SNIFF_BYTES` bytes; None for text."""
    if head.startswith(_IMAGE_SIGNATURES) or _is_webp(head) or _is_bmp(head):
        return "image"
    if head.startswith(b"%PDF-"):
        return "pdf"
    extension = os.path.splitext(path)[1].lower()
    # Readers of PDFs accept junk before the header; trust that only in a .pdf.
    if extension == ".pdf" and b"%PDF-" in head[:SNIFF_BYTES]:
        return "pdf"
    if extension == ".ipynb":
        return "notebook"
    return None


def whole_cap(fd: int, path: str, settings: Settings) -> tuple[int, str]:
    """The most bytes of `path` (open as `fd`) read whole, so the most its text edits
    load, and the setting that says so: a notebook is read whole, as its cells or,
    damaged, as its text (read/damaged.py), up to `max_document_bytes`; any other text
    file up to `max_size_bytes` (attack round 28, B4)."""
    return cap_for(peek(fd, SNIFF_BYTES), path, settings)


def cap_for(head: bytes, path: str, settings: Settings) -> tuple[int, str]:
    """`whole_cap` of a file whose first bytes are `head` (a file about to be made)."""
    if sniff(head[:SNIFF_BYTES], path) == "notebook":
        return settings.max_document_bytes, "max_document_bytes"
    return settings.max_size_bytes, "max_size_bytes"


def _is_webp(head: bytes) -> bool:
    return head[:4] == b"RIFF" and head[8:12] == b"WEBP"


def _is_bmp(head: bytes) -> bool:
    # "BM" alone starts plenty of text files; the info header's size field does not.
    return head[:2] == b"BM" and int.from_bytes(head[14:18], "little") in _BMP_INFO_SIZES


# --- one call for every reader but text -------------------------------------------------


@dataclass(frozen=True)
class DocumentView:
    """What a reader other than text answers, and what the read pipeline records of it."""

    result: ImageResult | PdfResult | PartsResult | NotebookResult
    partial: bool  # the agent got less than it asked for: never answered with a stub
    tokens: int
    tokens_left_out: int  # estimate of what the budgets kept from the agent
    # The folder rendered pages went to, which the caller lets the session read.
    output_dir: str | None = None
    # The text to keep as what the agent saw (a notebook's), for a later edit's merge.
    snapshot: str | None = None


def view_key(kind: Kind, params: ReadParams) -> str:
    """What, beyond offset/limit, makes two reads of the same bytes the same view."""
    if kind == "pdf":
        from .pdf_pages import canonical_pages

        return f"pages={canonical_pages(params.pages)};render={int(params.render)}"
    if kind == "notebook":
        return f"images={int(params.include_images)}"
    return ""


def read_document(
    kind: Kind,
    data: bytes,
    path: str,
    params: ReadParams,
    window: Window,
    content_digest: str,
    output_dir: Callable[[], str],
    settings: Settings,
    counter: TokenCounter,
) -> DocumentView:
    """Run the reader for `kind` on a file's bytes (already read within the byte cap).
    `output_dir` is the session's folder for rendered pages, made when first asked for:
    the view says whether it was (`output_dir`), for the caller to grant."""
    if kind == "image":
        from .image import read_image, tokens_for

        image = read_image(data, path, settings)
        dims = image.dimensions
        unbudgeted = tokens_for(dims.original_width, dims.original_height)
        return DocumentView(
            ImageResult(image), False, image.tokens, max(0, unbudgeted - image.tokens)
        )
    if kind == "pdf":
        from .pdf import read_pdf

        used: list[str] = []

        def folder() -> str:
            used.append(output_dir())
            return used[-1]

        result = read_pdf(
            data,
            path,
            params.pages,
            params.render,
            folder,
            content_digest,
            settings,
            counter,
            window.room,
        )
        return DocumentView(
            result, result.file.partial, result.file.tokens, 0, used[0] if used else None
        )
    from .notebook import SNAPSHOT_MAX_BYTES, read_notebook

    view = read_notebook(data, path, window, params.include_images, settings, counter)
    # An estimate records nothing, so it keeps no snapshot either.
    kept = not params.estimate and len(data) <= SNAPSHOT_MAX_BYTES
    return DocumentView(
        NotebookResult(view.file),
        view.file.partial,
        view.file.tokens,
        view.tokens_left_out,
        snapshot=data.decode("utf-8-sig") if kept else None,
    )


def too_large(path: str, size: int, settings: Settings) -> ReadkeeperError:
    """The `too_large` refusal of an image, PDF or notebook over `max_document_bytes`."""
    return ReadkeeperError(
        "too_large",
        f"{path} is {size:,} bytes, over the {settings.max_document_bytes:,}-byte limit for "
        "images, PDFs and notebooks. Ask the user for a smaller copy (or to raise the "
        "max_document_bytes setting, READKEEPER_MAX_DOCUMENT_BYTES).",
        file_path=path,
        size=size,
        max_document_bytes=settings.max_document_bytes,
    )
