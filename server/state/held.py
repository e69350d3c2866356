"""What a read of an image, PDF or notebook gave the agent, in the file's own terms: the
pages (as text or rendered), the cells (with or without their images), the image as sent.
A stub of a re-read names it (read/held_document.py words it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

HeldType = Literal["image", "pdf", "parts", "notebook"]


@dataclass(frozen=True)
class HeldDocument:
    """One document view as the agent got it; fields of other kinds stay None."""

    kind: HeldType  # the read's answer: "pdf" (page text), "parts" (rendered pages), ...
    tokens: int  # what the view cost the agent
    # PDFs: the pages shown ("1-3,5"), of how many, where the rest starts, and the last
    # page shown when it was cut short by the token cap.
    pages: str | None = None
    page_count: int | None = None
    next_pages: str | None = None
    cut_page: int | None = None
    # Notebooks: the cells shown (numbered from 1, as offset counts them), of how many,
    # where the rest starts, and whether the outputs' images were sent.
    first_cell: int | None = None
    num_cells: int | None = None
    total_cells: int | None = None
    next_offset: int | None = None
    include_images: bool | None = None
    # The cell shown cut short by the token cap (numbered from 1): its source was not
    # seen whole, so a cell edit may not replace or delete it (edit/notebook_seen.py).
    cut_cell: int | None = None
    # Images: the size sent and the file's own.
    display: tuple[int, int] | None = None
    original: tuple[int, int] | None = None
