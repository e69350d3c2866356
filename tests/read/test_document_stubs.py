"""The stub of a re-read of an image, PDF or notebook names what the agent holds in the
file's own terms (issue 30): the pages it holds of the PDF (as text or rendered, of how
many), the cells of the notebook (which, of how many, with outputs and whether
their images), the image as it was sent (its size, downscaled from what, its tokens);
in the stub's fields and in words, on every front end. Another page or cell range of
the same unchanged document is sent, never stubbed as if held."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from document_samples import encode, every_output_notebook, numbered_pdf, screenshot

from conftest import Session
from mcp_helpers import mcp_env, private_runtime_dir, stdio_client, text_of
from readkeeper import render
from readkeeper.core import Readkeeper
from readkeeper.protocol import ReadParams, unstructure


def read(core: Readkeeper, path: Path | str, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = unstructure(core.read(ReadParams(file_path=str(path), **params)))
    return result


def stub(core: Readkeeper, path: Path | str, **params: Any) -> dict[str, Any]:
    """The stub's `file` of a re-read, checked to be one, with its words as rendered."""
    result = read(core, path, **params)
    assert result["type"] == "file_unchanged", result
    file: dict[str, Any] = result["file"]
    assert render.read(result).endswith(file["note"])
    return file


def notebook(cells: int) -> dict[str, Any]:
    return {
        "cells": [
            {
                "cell_type": "code",
                "id": f"c{i}",
                "metadata": {},
                "source": f"x_{i} = {i}",
                "outputs": [{"output_type": "stream", "name": "stdout", "text": f"{i}\n"}],
                "execution_count": i + 1,
            }
            for i in range(cells)
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def test_a_pdf_stub_names_the_pages_held_as_text(core: Readkeeper, workspace: Path) -> None:
    (workspace / "forty.pdf").write_bytes(numbered_pdf(40, lines=5))
    (workspace / "small.pdf").write_bytes(numbered_pdf(3, lines=5))
    assert read(core, "forty.pdf", pages="2-3")["type"] == "pdf"
    held = stub(core, "forty.pdf", pages="2-3")
    assert held["held_type"] == "pdf"
    assert (held["shown_pages"], held["page_count"], held["obtained_by"]) == ("2-3", 40, "read")
    assert held["tokens"] > 0
    assert "start_line" not in held
    assert "num_lines" not in held
    assert held["note"].startswith("Pages 2-3 of 40 as text, unchanged since your read")
    assert "lines" not in held["note"]
    # A whole small PDF: all of its pages.
    read(core, "small.pdf")
    assert stub(core, "small.pdf")["note"].startswith("All 3 pages as text, unchanged")
    # Over the 20-page cap: the pages held, and the read that returns the rest.
    assert read(core, "forty.pdf", pages="1-40")["file"]["partial"] is True
    cut = stub(core, "forty.pdf", pages="1-40")
    assert (cut["shown_pages"], cut["next_pages"]) == ("1-20", "21-40")
    assert cut["note"].startswith("Pages 1-20 of 40 as text, unchanged since your read")
    assert 'the rest: pages="21-40"' in cut["note"]


def test_a_rendered_pdf_stub_says_the_pages_were_rendered(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "forty.pdf").write_bytes(numbered_pdf(40, lines=5))
    assert read(core, "forty.pdf", pages="4", render=True)["type"] == "parts"
    held = stub(core, "forty.pdf", pages="4", render=True)
    assert (held["held_type"], held["shown_pages"], held["page_count"]) == ("parts", "4", 40)
    assert held["note"].startswith("Page 4 of 40 rendered as a PNG image, unchanged since")
    # The text of the same page is not what the agent holds: it is sent.
    assert read(core, "forty.pdf", pages="4")["type"] == "pdf"


def test_a_notebook_stub_names_the_cells_and_their_outputs(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "nb.ipynb"
    path.write_text(json.dumps(notebook(12)))
    read(core, path)
    whole = stub(core, path)
    assert whole["held_type"] == "notebook"
    assert (whole["first_cell"], whole["num_cells"], whole["total_cells"]) == (1, 12, 12)
    assert whole["include_images"] is False
    assert whole["note"].startswith(
        "All 12 cells, with outputs (images as placeholders), unchanged since your read"
    )
    assert read(core, path, offset=3, limit=2)["type"] == "notebook"
    some = stub(core, path, offset=3, limit=2)
    assert (some["first_cell"], some["num_cells"], some["next_offset"]) == (3, 2, 5)
    assert some["note"].startswith("Cells 3-4 of 12, with outputs")
    assert "the rest starts at offset=5" in some["note"]
    full = workspace / "all.ipynb"
    full.write_text(json.dumps(every_output_notebook()))
    read(core, full, include_images=True)
    with_images = stub(core, full, include_images=True)
    assert with_images["include_images"] is True
    assert "with outputs and images," in with_images["note"]


def test_an_image_stub_names_what_was_sent(core: Readkeeper, workspace: Path) -> None:
    (workspace / "shot.png").write_bytes(encode(screenshot(2880, 1800), "PNG"))
    (workspace / "icon.png").write_bytes(encode(screenshot(300, 200), "PNG"))
    sent = read(core, "shot.png")["file"]
    held = stub(core, "shot.png")
    dims = sent["dimensions"]
    assert held["held_type"] == "image"
    assert (held["display_width"], held["display_height"]) == (
        dims["display_width"],
        dims["display_height"],
    )
    assert (held["original_width"], held["original_height"]) == (2880, 1800)
    assert held["tokens"] == sent["tokens"]
    size = f"{dims['display_width']}x{dims['display_height']}"
    assert held["note"].startswith(
        f"The image as sent to you ({size}, downscaled from 2880x1800, "
        f"{sent['tokens']:,} tokens), unchanged since your read"
    )
    read(core, "icon.png")
    assert stub(core, "icon.png")["note"].startswith(
        "The image as sent to you (300x200, full size, "
    )


def test_other_pages_or_cells_of_an_unchanged_document_are_sent(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "forty.pdf").write_bytes(numbered_pdf(40, lines=5))
    (workspace / "nb.ipynb").write_text(json.dumps(notebook(12)))
    read(core, "forty.pdf", pages="1-3")
    for other in ("4-5", "2-4", "1-2", "3", "1-3,5"):
        again = read(core, "forty.pdf", pages=other)
        assert again["type"] == "pdf", other
    read(core, "nb.ipynb", offset=1, limit=4)
    for offset, limit in ((5, 4), (2, 4), (1, 3), (1, 5)):
        again = read(core, "nb.ipynb", offset=offset, limit=limit)
        assert again["type"] == "notebook", (offset, limit)
        first = again["file"]["cells"][0]["index"] + 1
        assert (first, len(again["file"]["cells"])) == (offset, min(limit, 12 - offset + 1))
    # Through the stamp's fast path too: the same file, untouched, other pages.
    read(core, "forty.pdf", pages="9")
    assert stub(core, "forty.pdf", pages="9")["shown_pages"] == "9"
    assert read(core, "forty.pdf", pages="10")["type"] == "pdf"


async def test_document_stubs_over_lsp(lsp: Session, workspace: Path) -> None:
    (workspace / "forty.pdf").write_bytes(numbered_pdf(40, lines=5))
    (workspace / "nb.ipynb").write_text(json.dumps(notebook(6)))
    (workspace / "shot.png").write_bytes(encode(screenshot(1600, 1000), "PNG"))
    assert (await lsp.read("forty.pdf", pages="5-6"))["type"] == "pdf"
    pdf = await lsp.read("forty.pdf", pages="5-6")
    assert pdf["type"] == "file_unchanged"
    assert (pdf["file"]["held_type"], pdf["file"]["shown_pages"]) == ("pdf", "5-6")
    assert pdf["file"]["note"].startswith("Pages 5-6 of 40 as text, unchanged")
    assert (await lsp.read("forty.pdf", pages="7"))["type"] == "pdf"
    assert (await lsp.read("nb.ipynb", offset=2, limit=3))["type"] == "notebook"
    cells = (await lsp.read("nb.ipynb", offset=2, limit=3))["file"]
    assert (cells["first_cell"], cells["num_cells"], cells["total_cells"]) == (2, 3, 6)
    assert cells["note"].startswith("Cells 2-4 of 6, with outputs")
    image = (await lsp.read("shot.png"))["file"]
    held = (await lsp.read("shot.png"))["file"]
    assert held["held_type"] == "image"
    assert held["tokens"] == image["tokens"]
    assert held["display_width"] == image["dimensions"]["display_width"]


async def test_document_stubs_over_mcp(workspace: Path) -> None:
    (workspace / "forty.pdf").write_bytes(numbered_pdf(40, lines=5))
    (workspace / "nb.ipynb").write_text(json.dumps(notebook(6)))
    (workspace / "shot.png").write_bytes(encode(screenshot(1600, 1000), "PNG"))
    args, env = ["--root", str(workspace)], mcp_env(private_runtime_dir())
    async with stdio_client(args, env) as client:
        for params in (
            {"file_path": "forty.pdf", "pages": "5-6"},
            {"file_path": "forty.pdf", "pages": "8", "render": True},
            {"file_path": "nb.ipynb"},
            {"file_path": "shot.png"},
        ):
            first = await client.call_tool("read", params)
            assert not first.is_error, text_of(first)
        said = {}
        for params in (
            {"file_path": "forty.pdf", "pages": "5-6"},
            {"file_path": "forty.pdf", "pages": "8", "render": True},
            {"file_path": "nb.ipynb"},
            {"file_path": "shot.png"},
        ):
            again = await client.call_tool("read", params)
            assert again.structured_content is not None
            assert again.structured_content["type"] == "file_unchanged"
            said[str(params["file_path"]) + str(params.get("render", ""))] = text_of(again)
        assert "Pages 5-6 of 40 as text, unchanged since your read" in said["forty.pdf"]
        assert "Page 8 of 40 rendered as a PNG image, unchanged" in said["forty.pdfTrue"]
        assert "All 6 cells, with outputs" in said["nb.ipynb"]
        assert "The image as sent to you (" in said["shot.png"]
        assert all("since your read" in words for words in said.values())
        other = await client.call_tool("read", {"file_path": "forty.pdf", "pages": "6-7"})
        assert other.structured_content is not None
        assert other.structured_content["type"] == "pdf"


def test_a_pdf_page_cut_at_the_token_cap_is_held_only_in_part(
    core: Readkeeper, workspace: Path
) -> None:
    core.configure({"max_tokens": "1000"})
    (workspace / "dense.pdf").write_bytes(numbered_pdf(3, lines=60))
    first = read(core, "dense.pdf")["file"]
    assert first["shown_pages"] == "1"
    # The pages after it (read again, the page cut short was cut the same: round 34).
    assert first["next_pages"] == "2-3"
    assert 'read it as an image (pages="1", render=true)' in first["note"]
    held = stub(core, "dense.pdf")
    assert held["note"].startswith("Page 1 of 3 as text (page 1 cut short), unchanged")
    assert f'the rest: pages="{first["next_pages"]}"' in held["note"]
