"""A page range of a PDF of many pages costs what its pages cost (attack round 21,
finding 3): a 20,000-page file took 13-15 s a read of pages 1-20, because pypdf parses
every page object of a file before it finds one; four such reads at once all went over
the time limit. Past `_PYPDF_MAX_PAGES` pages, pdfium (which finds a page without
walking the rest) counts the pages and extracts their text.

What shows it without a clock: a page tree whose page 1,150 is a loop back to the tree
node. pypdf's walk meets the loop whichever pages are asked for, so the whole file was
`corrupt`; a read that does not walk the pages it does not show reads pages 1-2 and
page 1,100."""

from __future__ import annotations

from pathlib import Path

import pytest
from document_samples import pdf_of

from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import ReadParams, unstructure
from readkeeper.read.readers import pdf_worker


def many_pages_pdf(pages: int, loop_at: int | None = None) -> bytes:
    """A PDF of `pages` pages, page N showing "Page N"; page `loop_at`, if any, is a
    reference back to the page tree node (a loop)."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"",  # the page tree, filled in below
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    kids = []
    for number in range(1, pages + 1):
        if number == loop_at:
            kids.append(2)
            continue
        body = b"BT /F1 24 Tf 72 700 Td (Page %d) Tj ET" % number
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(body), body))
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % len(objects)
        )
        kids.append(len(objects))
    refs = b" ".join(b"%d 0 R" % kid for kid in kids)
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (refs, len(kids))
    return pdf_of(objects)


def test_a_page_range_of_many_pages_does_not_walk_the_others(
    core: Readkeeper, workspace: Path
) -> None:
    assert pdf_worker._PYPDF_MAX_PAGES < 1200
    (workspace / "many.pdf").write_bytes(many_pages_pdf(1200, loop_at=1150))
    first = unstructure(core.read(ReadParams(file_path="many.pdf", pages="1-2")))["file"]
    assert "Page 1" in first["content"]
    assert "Page 2" in first["content"]
    late = unstructure(core.read(ReadParams(file_path="many.pdf", pages="1100")))["file"]
    assert "Page 1100" in late["content"]


def test_a_loop_in_a_short_page_tree_is_still_corrupt(core: Readkeeper, workspace: Path) -> None:
    # Below the bound pypdf walks the tree as before, and names the loop.
    (workspace / "loop.pdf").write_bytes(many_pages_pdf(3, loop_at=2))
    with pytest.raises(ReadkeeperError) as caught:
        core.read(ReadParams(file_path="loop.pdf", pages="1"))
    assert caught.value.kind == "corrupt"
