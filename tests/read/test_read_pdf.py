"""readkeeper/read of PDFs: whole small ones, `pages` of large ones, rendered `parts`,
and a clear error for each way a PDF can fail. PDFs made with pypdf, and matplotlib's."""

from __future__ import annotations

import base64
import io
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from document_samples import (
    image_only_pdf,
    matplotlib_data,
    numbered_pdf,
    page_text,
    text_pdf,
)
from PIL import Image

from conftest import Session
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import ReadParams, unstructure
from readkeeper.read.readers.pdf_pages import canonical_pages
from readkeeper.settings import Settings
from readkeeper.words import compress


def read(core: Readkeeper, path: Path | str, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = unstructure(core.read(ReadParams(file_path=str(path), **params)))
    if result["type"] in ("pdf", "parts"):
        assert result["file"]["tokens"] <= core.settings.max_tokens
    return result


def refused(core: Readkeeper, path: Path | str, **params: Any) -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as caught:
        core.read(ReadParams(file_path=str(path), **params))
    return caught.value


def headers(content: str) -> list[int]:
    return [int(n) for n in re.findall(r"^--- page (\d+) ---$", content, re.MULTILINE)]


@pytest.fixture
def forty(workspace: Path) -> Path:
    path = workspace / "forty.pdf"
    path.write_bytes(numbered_pdf(40, lines=30))
    return path


# --- whole, small PDFs ----------------------------------------------------------------------


def test_small_pdf_is_read_whole(core: Readkeeper, workspace: Path) -> None:
    data = numbered_pdf(3)
    (workspace / "small.pdf").write_bytes(data)
    result = read(core, "small.pdf")
    assert result["type"] == "pdf"
    file = result["file"]
    assert headers(file["content"]) == [1, 2, 3]
    assert page_text(2).split("\n")[5] in file["content"]
    assert file["page_count"] == 3
    assert file["shown_pages"] == "1-3"
    assert file["original_size"] == len(data)
    assert file["partial"] is False
    assert "base64" not in file
    assert 0 < file["tokens"] <= core.settings.max_tokens


def test_pdf_inline_setting_adds_the_pdf_itself(core: Readkeeper, workspace: Path) -> None:
    core.configure({"pdf_inline": "true"})
    data = numbered_pdf(2)
    (workspace / "small.pdf").write_bytes(data)
    file = read(core, "small.pdf")["file"]
    assert base64.b64decode(file["base64"]) == data
    assert file["media_type"] == "application/pdf"
    assert headers(file["content"]) == [1, 2]


def test_a_small_page_count_but_many_bytes_needs_pages(core: Readkeeper, workspace: Path) -> None:
    core.configure({"pdf_whole_max_bytes": 1000})
    (workspace / "small.pdf").write_bytes(numbered_pdf(2))
    error = refused(core, "small.pdf")
    assert error.kind == "pages_required"
    assert "bytes" in error.message


# --- pages ----------------------------------------------------------------------------------


def test_large_pdf_without_pages_is_refused_with_a_first_range(
    core: Readkeeper, forty: Path
) -> None:
    error = refused(core, forty)
    assert error.kind == "pages_required"
    assert error.data["page_count"] == 40
    assert error.data["suggested_pages"] == "1-20"  # as many as one read returns
    assert "40 pages" in error.message
    assert 'start with pages="1-20".' in error.message  # the read refused, its pages set
    # The suggestion works, and is taken whole.
    file = read(core, forty, pages=error.data["suggested_pages"])["file"]
    assert headers(file["content"]) == list(range(1, 21))


def test_a_pdf_under_the_per_read_cap_is_told_to_read_all_its_pages(
    core: Readkeeper, workspace: Path
) -> None:
    # Too many pages to read without `pages` (over pdf_whole_max_pages), but few enough
    # for one read: the advice is all of them, not the whole-read limit.
    (workspace / "seventeen.pdf").write_bytes(numbered_pdf(17))
    error = refused(core, "seventeen.pdf")
    assert error.kind == "pages_required"
    assert error.data["suggested_pages"] == "1-17"
    assert 'pages="1-17"' in error.message
    file = read(core, "seventeen.pdf", pages="1-17")["file"]
    assert headers(file["content"]) == list(range(1, 18))


@pytest.mark.parametrize(
    ("pages", "expected"),
    [
        ("3", [3]),
        ("1-5", [1, 2, 3, 4, 5]),
        ("2,4-6", [2, 4, 5, 6]),
        (" 7 - 8 ", [7, 8]),
        ("38-", [38, 39, 40]),
        ("39-45", [39, 40]),
        ("5,3,5", [5, 3]),
    ],
)
def test_pages(core: Readkeeper, forty: Path, pages: str, expected: list[int]) -> None:
    file = read(core, forty, pages=pages)["file"]
    assert headers(file["content"]) == expected
    for number in expected:
        assert f"Page {number} line 29:" in file["content"]
    assert file["partial"] is False
    assert file["page_count"] == 40


def test_at_most_20_pages_a_read(core: Readkeeper, forty: Path) -> None:
    file = read(core, forty, pages="1-40")["file"]
    assert headers(file["content"]) == list(range(1, 21))
    assert file["partial"] is True
    assert file["next_pages"] == "21-40"
    assert 'pages="21-40"' in file["note"]
    rest = read(core, forty, pages=file["next_pages"])["file"]
    assert headers(rest["content"]) == list(range(21, 41))
    assert rest["partial"] is False


def test_token_cap_cuts_at_a_page_and_says_where_to_go_on(core: Readkeeper, forty: Path) -> None:
    core.configure({"max_tokens": 2500})
    seen: list[int] = []
    pages = "1-12"
    while pages:
        file = read(core, forty, pages=pages)["file"]
        assert file["tokens"] <= 2500
        seen += headers(file["content"])
        pages = file.get("next_pages")
        if pages:
            assert file["partial"] is True
            assert "token cap" in file["note"]
    assert seen == list(range(1, 13))


def test_a_single_page_over_the_cap_is_cut_not_dropped(core: Readkeeper, workspace: Path) -> None:
    core.configure({"max_tokens": 300})
    (workspace / "dense.pdf").write_bytes(text_pdf([page_text(1, lines=60)]))
    file = read(core, "dense.pdf")["file"]
    assert file["tokens"] <= 300
    assert file["partial"] is True
    assert headers(file["content"]) == [1]
    assert "page cut here" in file["content"]


def test_a_page_alone_over_the_cap_is_not_named_again(core: Readkeeper, workspace: Path) -> None:
    # Its way on named the same pages again: the same cut page, forever (round 34). The
    # rest of it is named drawn, and the read goes on with the pages after it.
    core.configure({"max_tokens": 300})
    (workspace / "dense.pdf").write_bytes(text_pdf([page_text(1, lines=60), "two", "three"]))
    file = read(core, "dense.pdf", pages="1-3")["file"]
    assert headers(file["content"]) == [1]
    assert file["next_pages"] == "2-3", file
    drawn = 'read it as an image (pages="1", render=true).'
    assert f"The rest of page 1 is over the cap on its own: {drawn}" in file["note"]
    assert headers(read(core, "dense.pdf", pages="2-3")["file"]["content"]) == [2, 3]
    alone = read(core, "dense.pdf", pages="1", force=True)["file"]
    assert alone["partial"] is True
    assert "next_pages" not in alone
    assert 'pages="1", render=true' in alone["note"]


@pytest.mark.parametrize("pages", ["abc", "0", "5-3", "1-2-3", "", "-4"])
def test_bad_pages_spec(core: Readkeeper, forty: Path, pages: str) -> None:
    error = refused(core, forty, pages=pages)
    assert error.kind == "bad_params"
    assert error.data["field"] == "pages"
    assert '"1-5"' in error.message


def test_page_past_the_end(core: Readkeeper, forty: Path) -> None:
    error = refused(core, forty, pages="41")
    assert error.kind == "bad_params"
    assert error.data["page_count"] == 40
    assert "40 pages" in error.message
    # The advice respects the cap of pages per read (20), and is itself accepted.
    assert 'Ask for pages="1-20"' in error.message
    assert "at most 20 pages" in error.message
    file = read(core, forty, pages="1-20")["file"]
    assert file["partial"] is False


def test_page_past_the_end_of_a_short_pdf_suggests_all_its_pages(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "three.pdf").write_bytes(numbered_pdf(3))
    error = refused(core, "three.pdf", pages="7")
    assert 'pages="1-3"' in error.message
    assert "at most" not in error.message


def test_page_helpers() -> None:
    assert compress([1, 2, 3, 5, 7, 8]) == "1-3,5,7-8"
    assert compress([]) == ""
    assert canonical_pages(" 1 - 3 , 5 ") == "1-3,5"
    assert canonical_pages("4-") == "4-"
    assert canonical_pages(None) == ""


# --- read-state -----------------------------------------------------------------------------


def test_stub_only_for_the_same_view(core: Readkeeper, forty: Path) -> None:
    assert read(core, forty, pages="1-3")["type"] == "pdf"
    assert read(core, forty, pages="1-3")["type"] == "file_unchanged"
    assert read(core, forty, pages=" 1-3")["type"] == "file_unchanged"  # same pages
    assert read(core, forty, pages="2-3")["type"] == "pdf"  # another view
    assert read(core, forty, pages="1-40")["type"] == "pdf"
    # cut at 20 pages: the same view again, a stub that says where the rest starts
    assert 'pages="21-40"' in read(core, forty, pages="1-40")["file"]["note"]
    assert read(core, forty, pages="4", force=True)["type"] == "pdf"
    forty.write_bytes(numbered_pdf(40, lines=30, seed=1))
    assert read(core, forty, pages="4")["type"] == "pdf"  # changed


# --- failures -------------------------------------------------------------------------------


def test_encrypted_pdf(core: Readkeeper, workspace: Path) -> None:
    (workspace / "secret.pdf").write_bytes(text_pdf(["classified"], user_password="pw"))
    error = refused(core, "secret.pdf")
    assert error.kind == "encrypted"
    assert "password" in error.message
    assert refused(core, "secret.pdf", pages="1", render=True).kind == "encrypted"


def test_owner_password_only_pdf_opens(core: Readkeeper, workspace: Path) -> None:
    (workspace / "locked.pdf").write_bytes(
        text_pdf(["printing is restricted"], user_password="", owner_password="owner")
    )
    file = read(core, "locked.pdf")["file"]
    assert "printing is restricted" in file["content"]


@pytest.mark.parametrize(
    "data",
    [
        b"%PDF-1.7\n" + b"\x00\xff garbage " * 100,
        b"%PDF-1.4\n",
        numbered_pdf(3)[:300],
    ],
    ids=["garbage", "header-only", "truncated"],
)
def test_broken_pdf_is_corrupt(core: Readkeeper, workspace: Path, data: bytes) -> None:
    (workspace / "broken.pdf").write_bytes(data)
    error = refused(core, "broken.pdf")
    assert error.kind == "corrupt"
    assert error.data["file_path"] == str(workspace / "broken.pdf")
    assert "PDF" in error.message


def test_pdf_without_a_text_layer_points_to_render(core: Readkeeper, workspace: Path) -> None:
    (workspace / "scan.pdf").write_bytes(image_only_pdf(2))
    error = refused(core, "scan.pdf")
    assert error.kind == "unsupported"
    assert error.data["reason"] == "no_text_layer"
    assert 'Read them as images: pages="1-2", render=true.' in error.message


def test_mixed_pages_note_the_ones_without_text(core: Readkeeper, workspace: Path) -> None:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for data in (numbered_pdf(1), image_only_pdf(1)):
        for page in PdfReader(io.BytesIO(data)).pages:
            writer.add_page(page)
    out = workspace / "mixed.pdf"
    with out.open("wb") as handle:
        writer.write(handle)
    file = read(core, out)["file"]
    assert headers(file["content"]) == [1, 2]
    # The page's block says why and points to the note, which names the call that draws
    # it: each front end says it whole (a run in the content was said bare: round 35).
    assert (
        "[no text layer on this page (scanned or drawn): read it as an image (the note says "
        "how)]" in file["content"]
    )
    assert "render=" not in file["content"]
    assert 'Read them as images: pages="2", render=true.' in file["note"]


def _page_with_content(content: bytes) -> bytes:
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    page = writer.add_blank_page(612, 792)
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    page[NameObject("/Resources")] = DictionaryObject(
        {NameObject("/Font"): DictionaryObject({NameObject("/F1"): writer._add_object(font)})}
    )
    stream = DecodedStreamObject()
    stream.set_data(content)
    page[NameObject("/Contents")] = writer._add_object(stream)
    page.compress_content_streams()
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_a_page_too_big_for_pypdf_is_read_by_pdfium(core: Readkeeper, workspace: Path) -> None:
    # 12,000 separately placed words: about 450 KB of content, which pypdf's extractor
    # would take seconds over.
    core.configure({"max_tokens": 100_000})
    runs = [
        f"BT /F1 3 Tf {20 + (i % 100) * 5.7:.1f} {770 - (i // 100) * 6.2:.1f} Td (w{i}) Tj ET"
        for i in range(12_000)
    ]
    (workspace / "dense.pdf").write_bytes(_page_with_content("\n".join(runs).encode()))
    file = read(core, "dense.pdf")["file"]
    assert "w0" in file["content"]
    assert "w11999" in file["content"]


def test_a_hostile_page_is_not_parsed(core: Readkeeper, workspace: Path) -> None:
    (workspace / "hostile.pdf").write_bytes(_page_with_content(b"0 0 m 1 1 l S\n" * 700_000))
    file = read(core, "hostile.pdf")["file"]
    assert "page content too large to extract text from" in file["content"]
    assert 'Read them as images: pages="1", render=true.' in file["note"]


# --- parts: pages rendered to PNG -----------------------------------------------------------


def test_render_pages_to_png_files_within_the_image_budget(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "scan.pdf").write_bytes(image_only_pdf(2))
    result = read(core, "scan.pdf", pages="1-2", render=True)
    assert result["type"] == "parts"
    file = result["file"]
    assert file["count"] == 2
    assert file["page_numbers"] == [1, 2]
    assert len(file["pages"]) == 2
    out = Path(file["output_dir"])
    assert not out.is_relative_to(workspace)
    settings = core.settings
    for page in file["pages"]:
        assert Path(page).parent == out
        with Image.open(page) as picture:
            assert picture.format == "PNG"
            assert max(picture.size) <= settings.image_max_edge
            assert picture.width * picture.height / 750 <= settings.image_max_tokens
    # The agent may read the pages it was handed, though they are outside the workspace.
    image = read(core, file["pages"][0])
    assert image["type"] == "image"
    assert image["file"]["tokens"] <= settings.image_max_tokens
    assert base64.b64decode(image["file"]["base64"]) == Path(file["pages"][0]).read_bytes()
    # Another session may not.
    assert refused(core, file["pages"][0], session="other").kind == "outside_workspace"


def test_render_more_than_20_pages_continues(
    core: Readkeeper, forty: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # About the page cap, not the time cap (10 s), which a loaded machine can reach.
    monkeypatch.setattr("readkeeper.read.readers.pdf_reading.MAX_SECONDS", 300.0)
    file = read(core, forty, pages="10-40", render=True)["file"]
    assert file["page_numbers"] == list(range(10, 30))
    assert file["partial"] is True
    assert file["next_pages"] == "30-40"
    # A call: the note names another too (each page file's read).
    assert 'continue with pages="30-40".' in file["note"], file["note"]


def test_render_of_a_large_pdf_still_needs_pages(core: Readkeeper, forty: Path) -> None:
    error = refused(core, forty, render=True)
    assert error.kind == "pages_required"
    assert 'pages="1-20"' in error.message  # the render asked is kept by the call


def test_rendering_again_reuses_the_files(core: Readkeeper, forty: Path) -> None:
    first = read(core, forty, pages="1", render=True)["file"]
    stamp = os.stat(first["pages"][0]).st_mtime_ns
    assert read(core, forty, pages="1", render=True)["type"] == "file_unchanged"
    again = read(core, forty, pages="1", render=True, force=True)["file"]
    assert again["pages"] == first["pages"]
    assert os.stat(again["pages"][0]).st_mtime_ns == stamp


# --- type by content ------------------------------------------------------------------------


def test_a_pdf_named_otherwise_is_still_a_pdf(core: Readkeeper, workspace: Path) -> None:
    (workspace / "report.txt").write_bytes(numbered_pdf(1))
    assert read(core, "report.txt")["type"] == "pdf"
    (workspace / "mentions.py").write_text('HEADER = b"%PDF-1.4"\n')
    assert read(core, "mentions.py")["type"] == "text"


# --- real-world files -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["matplotlib.pdf", "home.pdf", "hand.pdf"])
def test_matplotlib_icon_pdfs(core: Readkeeper, workspace: Path, name: str) -> None:
    """Real PDFs written by matplotlib's PDF backend: vector drawings, no text."""
    shutil.copy(matplotlib_data() / "images" / name, workspace / name)
    error = refused(core, name)
    assert error.kind == "unsupported"
    assert error.data["reason"] == "no_text_layer"
    parts = read(core, name, pages="1", render=True)["file"]
    with Image.open(parts["pages"][0]) as picture:
        assert picture.width > 1
        assert max(picture.size) <= Settings().image_max_edge
        assert len(picture.getcolors(1_000_000) or []) > 1  # something was drawn


# --- through the server ---------------------------------------------------------------------


async def test_pdf_through_the_server(lsp: Session, workspace: Path) -> None:
    (workspace / "forty.pdf").write_bytes(numbered_pdf(40, lines=30))
    error = await lsp.read_error("forty.pdf")
    assert error.data["kind"] == "pages_required"
    assert error.data["page_count"] == 40
    file = (await lsp.read("forty.pdf", pages="2-3"))["file"]
    assert headers(file["content"]) == [2, 3]
    parts = (await lsp.read("forty.pdf", pages="4", render="true"))["file"]
    assert parts["count"] == 1
    image = await lsp.read(parts["pages"][0])
    assert image["type"] == "image"
    bad = await lsp.read_error("forty.pdf", pages="x")
    assert bad.data["kind"] == "bad_params"


async def test_encrypted_pdf_through_the_server(lsp: Session, workspace: Path) -> None:
    (workspace / "secret.pdf").write_bytes(text_pdf(["x"], user_password="pw"))
    error = await lsp.read_error("secret.pdf")
    assert error.data["kind"] == "encrypted"
