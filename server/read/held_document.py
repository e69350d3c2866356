"""What the stub of a re-read of an image, PDF or notebook says the agent holds, in the
file's own terms (DESIGN.md, "Read-state: the rules"; issue 30): the pages of a PDF (as
text, or rendered to PNG), of how many; the cells of a notebook, of how many, with their
outputs and whether their images; the image as it was sent, and downscaled from what.
`held` takes it from the answer a read gave, `fields` and `words` give it back in the
stub's fields and in the sentence every front end shows.
"""

from __future__ import annotations

from typing import Any

from ..hints import again
from ..protocol import ImageResult, NotebookResult, PartsResult, PdfResult
from ..state.held import HeldDocument
from ..words import compress
from .readers.notebook_cost import CUT_MARK
from .readers.pdf import PAGE_CUT_MARK

DocumentResult = ImageResult | PdfResult | PartsResult | NotebookResult


def held(result: DocumentResult, include_images: bool) -> HeldDocument:
    """What the answer `result` gave the agent."""
    if isinstance(result, ImageResult):
        dims = result.file.dimensions
        return HeldDocument(
            "image",
            result.file.tokens,
            display=(dims.display_width, dims.display_height),
            original=(dims.original_width, dims.original_height),
        )
    if isinstance(result, NotebookResult):
        nb = result.file
        first = nb.cells[0].index + 1 if nb.cells else 1
        after = first + len(nb.cells)  # as a text stub says where the next lines start
        return HeldDocument(
            "notebook",
            nb.tokens,
            first_cell=first,
            num_cells=len(nb.cells),
            total_cells=nb.total_cells,
            next_offset=after if after <= nb.total_cells else None,
            include_images=include_images,
            cut_cell=nb.cells[-1].index + 1 if nb.cells and nb.cells[-1].note == CUT_MARK else None,
        )
    if isinstance(result, PartsResult):
        parts = result.file
        return HeldDocument(
            "parts",
            parts.tokens,
            pages=compress(parts.page_numbers),
            page_count=parts.page_count,
            next_pages=parts.next_pages,
        )
    pdf = result.file
    shown = _numbers(pdf.shown_pages)
    # A page cut short by the token cap: its text ends in the cut's mark.
    cut = shown[-1] if shown and pdf.content.endswith(PAGE_CUT_MARK) else None
    return HeldDocument(
        "pdf",
        pdf.tokens,
        pages=pdf.shown_pages,
        page_count=pdf.page_count,
        next_pages=pdf.next_pages,
        cut_page=cut,
    )


def fields(document: HeldDocument) -> dict[str, Any]:
    """The stub's fields that name what `document` holds (protocol UnchangedFile)."""
    found: dict[str, Any] = {"held_type": document.kind, "tokens": document.tokens}
    if document.kind in ("pdf", "parts"):
        found |= {
            "shown_pages": document.pages,
            "page_count": document.page_count,
            "next_pages": document.next_pages,
        }
    elif document.kind == "notebook":
        found |= {
            "first_cell": document.first_cell,
            "num_cells": document.num_cells,
            "total_cells": document.total_cells,
            "next_offset": document.next_offset,
            "include_images": document.include_images,
        }
    elif document.display is not None and document.original is not None:
        found |= {
            "display_width": document.display[0],
            "display_height": document.display[1],
            "original_width": document.original[0],
            "original_height": document.original[1],
        }
    return found


def words(document: HeldDocument) -> str:
    """What the agent holds of the document, unchanged since its read, in one sentence
    and the next call (the stub's `note`)."""
    if document.kind == "image":
        return f"{_image(document)}, unchanged since your read. {_ENDING}"
    if document.kind == "notebook":
        said = _cells(document)
        images = True if document.include_images else None
        rest = f"; the rest starts at {again(offset=document.next_offset, include_images=images)}"
        rest = rest if document.next_offset else ""
        return f"{said}, unchanged since your read{rest}. {_ENDING}"
    said = _pages(document)
    render = True if document.kind == "parts" else None
    pages = document.next_pages
    rest = f"; the rest: {again(pages=pages, render=render)}" if pages else ""
    return f"{said}, unchanged since your read{rest}. {_ENDING}"


_ENDING = f"Your copy is current; {again(force=True)} resends."


def named(document: HeldDocument) -> str:
    """What the agent read of the document, as a change notice names it ("pages 2-3 of
    40 as text", "all 12 cells, with outputs ...", "the image as sent to you (...)")."""
    if document.kind == "image":
        said = _image(document)
    elif document.kind == "notebook":
        said = _cells(document)
    else:
        said = _pages(document)
    return said[0].lower() + said[1:]


def json_diff(document: HeldDocument) -> str:
    """The note of a change notice's diff of a notebook, which the agent read as cells."""
    return f"The diff is of the notebook's JSON; you read {named(document)}."


def _pages(document: HeldDocument) -> str:
    pages, count = document.pages or "", document.page_count or 0
    numbers = _numbers(pages)
    if len(numbers) == count and count > 1:
        named = f"All {count:,} pages"
    elif len(numbers) == 1:
        named = f"Page {pages} of {count:,}"
    else:
        named = f"Pages {pages} of {count:,}"
    if document.kind == "parts":
        return f"{named} rendered as {'a PNG image' if len(numbers) == 1 else 'PNG images'}"
    cut = f" (page {document.cut_page} cut short)" if document.cut_page is not None else ""
    return f"{named} as text{cut}"


def _cells(document: HeldDocument) -> str:
    first, count = document.first_cell or 1, document.num_cells or 0
    total = document.total_cells or 0
    if count == 0:
        named = "The notebook, with no cells"
    elif first == 1 and count == total:
        named = "The notebook's one cell" if total == 1 else f"All {total:,} cells"
    elif count == 1:
        named = f"Cell {first} of {total:,}"
    else:
        named = f"Cells {first}-{first + count - 1} of {total:,}"
    if count == 0:
        return named
    images = "and images" if document.include_images else "(images as placeholders)"
    return f"{named}, with outputs {images}"


def _image(document: HeldDocument) -> str:
    (width, height), (w0, h0) = document.display or (0, 0), document.original or (0, 0)
    scaled = "full size" if (width, height) == (w0, h0) else f"downscaled from {w0}x{h0}"
    return f"The image as sent to you ({width}x{height}, {scaled}, {document.tokens:,} tokens)"


def _numbers(pages: str) -> list[int]:
    """'1-3,5' as [1, 2, 3, 5]."""
    found: list[int] = []
    for part in filter(None, pages.split(",")):
        first, _, last = part.partition("-")
        found.extend(range(int(first), int(last or first) + 1))
    return found
