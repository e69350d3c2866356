"""The contract's types for reading images, PDFs and notebooks, and `ReadResult`, the
union of every `readkeeper/read` result."""

from __future__ import annotations

from typing import Literal

import attrs

from .contract import Contract
from .reads import ChangedResult, EstimateResult, OutlineResult, TextResult, UnchangedResult

# --- images, PDFs and notebooks (readers/image.py, pdf.py, notebook.py) -------------------


@attrs.frozen(repr=False, eq=False)
class ImageDimensions(Contract):
    """Sizes as displayed (after EXIF rotation): multiply display coordinates by
    original_width / display_width to map them back onto the original."""

    original_width: int
    original_height: int
    display_width: int
    display_height: int


@attrs.frozen(repr=False, eq=False)
class ImageFile(Contract):
    """An image as sent: its bytes (base64), type and sizes."""

    file_path: str
    base64: str
    media_type: str  # of the payload, which may be re-encoded: see `note`
    original_size: int  # bytes of the file
    dimensions: ImageDimensions
    tokens: int  # display_width * display_height / 750, rounded up
    format: str  # the file's own format, e.g. "PNG"
    frames: int | None = None  # for animated images: frames in the file (the first is shown)
    note: str | None = None


@attrs.frozen(repr=False, eq=False)
class ImageResult(Contract):
    """`readkeeper/read` of an image."""

    file: ImageFile
    type: Literal["image"] = "image"


@attrs.frozen(repr=False, eq=False)
class PdfFile(Contract):
    """A PDF's text, page by page, and where to go on when pages were left out."""

    file_path: str
    content: str  # one block per page, each headed by "--- page N ---"
    page_count: int
    shown_pages: str  # e.g. "1-5"
    tokens: int
    original_size: int
    partial: bool = False
    next_pages: str | None = None  # where to continue when `partial`
    note: str | None = None
    base64: str | None = None  # the PDF itself, when the `pdf_inline` setting is on
    media_type: str | None = None


@attrs.frozen(repr=False, eq=False)
class PdfResult(Contract):
    """`readkeeper/read` of a PDF as text."""

    file: PdfFile
    type: Literal["pdf"] = "pdf"


@attrs.frozen(repr=False, eq=False)
class PartsFile(Contract):
    """PDF pages rendered to PNG files; read each one (an `image` result) to see it."""

    file_path: str
    count: int
    output_dir: str
    pages: list[str]  # PNG paths, one per page, in page order
    page_numbers: list[int]
    page_count: int
    tokens: int  # of this result; reading the images costs `image_tokens` more
    image_tokens: int
    original_size: int
    partial: bool = False
    next_pages: str | None = None
    note: str | None = None


@attrs.frozen(repr=False, eq=False)
class PartsResult(Contract):
    """`readkeeper/read` of PDF pages rendered as images."""

    file: PartsFile
    type: Literal["parts"] = "parts"


@attrs.frozen(repr=False, eq=False)
class NotebookImage(Contract):
    """An image a notebook cell's output holds."""

    media_type: str
    width: int | None
    height: int | None
    bytes: int  # of the image itself (decoded)
    base64: str | None = None  # with `include_images`: fitted to the image budget
    display_width: int | None = None
    display_height: int | None = None
    tokens: int | None = None
    note: str | None = None  # why an image asked for (`include_images`) is not shown


@attrs.frozen(repr=False, eq=False)
class NotebookOutput(Contract):
    """One output of a notebook cell, as text, with its images apart."""

    output_type: str  # stream, execute_result, display_data, error
    name: str | None = None  # stream: stdout or stderr
    text: str | None = None  # stream text, or the text/plain (or markdown, latex) data
    execution_count: int | None = None
    ename: str | None = None
    evalue: str | None = None
    traceback: str | None = None  # trimmed, without terminal colours
    images: list[NotebookImage] | None = None
    note: str | None = None  # what was cut or left out (HTML, JavaScript, widgets)


@attrs.frozen(repr=False, eq=False)
class NotebookCell(Contract):
    """One notebook cell: its id, type, source and outputs."""

    cell_id: str  # its name: its own id, "cell-N" without one, "@N" (N = index) when shared
    index: int  # 0-based position in the notebook
    cell_type: str  # code, markdown or raw
    source: str
    execution_count: int | None = None
    outputs: list[NotebookOutput] | None = None  # code cells only
    note: str | None = None


@attrs.frozen(repr=False, eq=False)
class NotebookFile(Contract):
    """A notebook as structured cells, and where to go on when cells were left out."""

    file_path: str
    cells: list[NotebookCell]
    total_cells: int
    nbformat: str  # as read, e.g. "4.5" or "3.0" (v3 is upgraded to v4 for the view)
    tokens: int
    language: str | None = None
    partial: bool = False
    next_offset: int | None = None  # cells are numbered from 1 for offset/limit
    note: str | None = None
    unsaved: bool | None = None
    buffer_version: int | None = None
    include_images: bool | None = None  # true when the read asked for the output images


@attrs.frozen(repr=False, eq=False)
class NotebookResult(Contract):
    """`readkeeper/read` of a notebook."""

    file: NotebookFile
    type: Literal["notebook"] = "notebook"


ReadResult = (
    TextResult
    | UnchangedResult
    | ChangedResult
    | EstimateResult
    | OutlineResult
    | ImageResult
    | PdfResult
    | PartsResult
    | NotebookResult
)
