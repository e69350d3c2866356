"""A PDF page whose text cannot be read is sent to its drawing only when it draws (asked
first), as a page that cannot be drawn is sent to its text only when that reads (attack
round 22, finding 9: a bomb page's text refusal and its per-page note both said to draw
it, and that drawing is refused `too_large`); and a page's note is in readkeeper's words,
never pypdf's ("Limit reached while decompressing. 334782 bytes remaining.")."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest
from document_samples import pdf_of
from test_pdf_worker import raw_pdf, stream

from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import ReadParams, unstructure

_DRAW = ('"render": true', "render=true", "Draw it", "draw it")


def test_a_bomb_page_s_text_refusal_names_no_drawing(core: Readkeeper, workspace: Path) -> None:
    # Over 1,000 pages: pdfium reads the text, and the bomb page's text fails outright.
    (workspace / "many.pdf").write_bytes(raw_pdf(["bomb"] + ["text"] * 1000))
    with pytest.raises(ReadkeeperError) as caught:
        core.read(ReadParams(file_path="many.pdf", pages="1-2"))
    refused = caught.value
    assert refused.kind == "too_large"
    assert "no read shows page 1" in refused.message
    assert not any(word in refused.message for word in _DRAW), refused.message
    assert 'the pages after it: pages="2".' in refused.message  # the page after it still reads
    assert refused.data["draw_reason"]


def test_a_bomb_page_s_note_names_no_drawing_nor_pypdf_s_words(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "two.pdf").write_bytes(raw_pdf(["bomb", "text"]))
    file = unstructure(core.read(ReadParams(file_path="two.pdf", pages="1-2")))["file"]
    page_1 = file["content"].split("--- page 2 ---")[0]
    assert not any(word in page_1 for word in _DRAW), page_1
    assert "no read shows it" in page_1
    assert "Page 2" in file["content"]
    for words in ("Limit reached", "bytes remaining"):
        assert words not in file["content"]


def test_a_page_whose_text_is_too_long_but_draws_is_sent_to_its_drawing(
    core: Readkeeper, workspace: Path
) -> None:
    # 9 MB of content (over the 8 MB text cap) of a cheap operator: it draws.
    body = zlib.compress(b"q Q\n" * (9 << 18), 9)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        stream(b"/Filter /FlateDecode", body),
    ]
    (workspace / "long.pdf").write_bytes(pdf_of(objects))
    file = unstructure(core.read(ReadParams(file_path="long.pdf", pages="1")))["file"]
    assert 'Read them as images: pages="1", render=true.' in file["note"], file["content"]
    drawn = unstructure(core.read(ReadParams(file_path="long.pdf", pages="1", render=True)))
    assert len(drawn["file"]["pages"]) == 1


def test_a_bomb_page_skipped_after_others_names_no_read(core: Readkeeper, workspace: Path) -> None:
    (workspace / "after.pdf").write_bytes(raw_pdf(["text", "bomb"] + ["text"] * 999))
    for render in (False, True):
        read = ReadParams(file_path="after.pdf", pages="1-2", render=render)
        file = unstructure(core.read(read))["file"]
        note = file["note"]
        assert "Page 2 was skipped" in note, note
        assert "no read shows it" in note, note
        assert "instead" not in note, note


def test_a_damaged_page_s_note_says_what_failed_in_readkeeper_s_words(
    core: Readkeeper, workspace: Path
) -> None:
    """A page whose text pypdf fails on with an assertion of its own (a font encoding
    that is a number, a TJ array holding a reference to it): its words ("mypy", a note
    to its type checker) are its inner workings, never the page's note; the note names
    what failed in readkeeper's words, and the page after it still reads."""
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R 5 0 R] /Count 2 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 8 0 R >> >> >>",
        stream(b"", b"BT /F1 12 Tf [(a) 9 0 R (b)] TJ ET"),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 6 0 R "
        b"/Resources << /Font << /F1 7 0 R >> >> >>",
        stream(b"", b"BT /F1 12 Tf 72 700 Td (page two) Tj ET"),
        font,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /X /Encoding 9 0 R >>",
        b"42",
    ]
    (workspace / "damaged.pdf").write_bytes(pdf_of(objects))
    file = unstructure(core.read(ReadParams(file_path="damaged.pdf", pages="1-2")))["file"]
    page_1, page_2 = file["content"].split("--- page 2 ---")
    assert "mypy" not in file["content"]
    assert "[text could not be extracted (the PDF reader failed inside: AssertionError)" in page_1
    assert "page two" in page_2
