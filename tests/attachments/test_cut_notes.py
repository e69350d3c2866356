"""Every cut attachment ends with a note that counts in the file's terms and names the call
that returns the rest, with parameters that call takes: the note is read as an agent
reads it, its call made, and the answer checked to continue where the cut stopped."""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path
from typing import Any

from document_samples import encode, numbered_pdf, page_text, screenshot

from readkeeper.core import Readkeeper
from readkeeper.protocol import (
    ActiveEditor,
    AttachmentsParams,
    ForgetParams,
    Position,
    Range,
    ReadParams,
    unstructure,
)

TYPING = Path(typing.__file__).read_text(encoding="utf-8")
CALL = re.compile(r"the (read|attachments) tool with (\{.*?\})(?=[.,;\]]|$| or)")


def attach(core: Readkeeper, **params: Any) -> dict[str, Any]:
    return core.attachments(AttachmentsParams(**params))


def calls(note: str) -> list[tuple[str, dict[str, Any]]]:
    return [(tool, json.loads(args)) for tool, args in CALL.findall(note)]


def last_line(content: str) -> str:
    return content.rstrip().rsplit("\n", 1)[-1]


def test_a_cut_outline_says_how_far_it_reaches_in_the_file_and_how_to_read_on(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "typing.py").write_text(TYPING)
    total = len(TYPING.splitlines())
    for budget in (3000, 200):  # the header (its path named) is counted too
        core.forget(ForgetParams())
        result = attach(core, budget_tokens=budget, types=["file"], mentions=["typing.py"])
        [item] = result["attachments"]
        assert item["truncated"] is True
        note = last_line(item["content"])
        assert f"of the file's {total:,}" in note or f"({total:,} lines)" in note
        found = calls(note)
        assert found, note
        for tool, args in found:
            assert tool == "read"
            if args.get("symbol") == "<name>":
                continue  # a placeholder the agent fills in
            answer = unstructure(core.read(ReadParams(**args)))
            assert answer["type"] in ("text", "outline")
            if "offset" in args:
                assert answer["file"]["start_line"] == args["offset"]


def test_a_cut_file_counts_the_files_lines_and_its_call_continues_it(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "big.log").write_text("".join(f"{i:05d} served\n" for i in range(1, 3001)))
    result = attach(core, budget_tokens=1000, types=["file"], mentions=["big.log"])
    [item] = result["attachments"]
    note = last_line(item["content"])
    shown = re.search(r"showing lines 1-(\d+) of the file's 3,000", note)
    assert shown, note
    [(tool, args)] = calls(note)
    assert tool == "read"
    assert args["offset"] == int(shown.group(1)) + 1
    rest = unstructure(core.read(ReadParams(**args)))
    assert rest["file"]["content"].split("\n")[0].endswith(f"{args['offset']:05d} served")


def test_every_attachment_note_names_a_call_every_front_end_takes(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "AGENTS.md").write_text("".join(f"rule {i}\n" for i in range(400)))
    (workspace / "typing.py").write_text(TYPING)
    result = attach(core, budget_tokens=2000, mentions=["typing.py"])
    cut = [a for a in result["attachments"] if a["truncated"]]
    assert cut
    for item in cut:
        note = last_line(item["content"])
        assert "readkeeper/" not in note  # the LSP method: not the name of the MCP tool
        for tool, args in calls(note):
            if tool == "attachments":
                attach(core, **args)  # the attachments tool takes them
            elif args.get("symbol") != "<name>":
                core.read(ReadParams(**args))


# --- PDFs, notebooks and images: counted in pages and cells ---------------------------------

PAGE_HEAD = re.compile(r"^--- page (\d+) ---$", re.M)


def closed(content: str) -> None:
    """The cut closed every fence it cut into: the note is readkeeper's, never read as
    part of the file's text."""
    body = content.rstrip().split("\n")[:-1]
    assert sum(1 for line in body if line == "```") % 2 == 0, body[-3:]


def notebook(cells: int) -> dict[str, Any]:
    return {
        "cells": [
            {
                "cell_type": "code",
                "id": f"c{i}",
                "metadata": {},
                "source": "".join(f"value_{i}_{j} = {i * j}\n" for j in range(12)),
                "outputs": [{"output_type": "stream", "name": "stdout", "text": f"{i}\n"}],
                "execution_count": i + 1,
            }
            for i in range(cells)
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def test_a_cut_pdf_counts_its_pages_and_its_call_reads_on(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "report.pdf").write_bytes(numbered_pdf(8, lines=30))
    result = attach(core, budget_tokens=1500, types=["file"], mentions=["report.pdf"])
    [item] = result["attachments"]
    assert item["truncated"] is True
    assert isinstance(item["content"], str)
    note = last_line(item["content"])
    shown = re.search(
        r"showing pages 1-(\d+)(?: and the start of page (\d+))? of the PDF's 8", note
    )
    assert shown, note
    last = int(shown.group(1))
    closed(item["content"])
    # The pages it says it shows are there whole; the next one only as far as it says.
    heads = [int(n) for n in PAGE_HEAD.findall(item["content"])]
    assert heads[:last] == list(range(1, last + 1))
    for line in page_text(last, 30).split("\n"):
        assert line in item["content"]
    if shown.group(2):
        assert heads == [*range(1, last + 2)]
        assert int(shown.group(2)) == last + 1
    else:
        assert heads == list(range(1, last + 1))
    [(tool, args)] = calls(note)
    assert (tool, args) == (
        "read",
        {"file_path": str(workspace / "report.pdf"), "pages": f"{last + 1}-8"},
    )
    rest = unstructure(core.read(ReadParams(**args)))
    assert rest["type"] == "pdf"
    assert rest["file"]["shown_pages"] == f"{last + 1}-8"


def test_a_mentioned_pdf_too_big_to_read_whole_sends_its_first_pages(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "book.pdf").write_bytes(numbered_pdf(40, lines=3))
    result = attach(core, budget_tokens=60_000, types=["file"], mentions=["book.pdf"])
    [item] = result["attachments"]
    assert not result["dropped"], result["dropped"]
    assert [int(n) for n in PAGE_HEAD.findall(item["content"])] == list(range(1, 21))
    assert '"pages": "21-40"' in last_line(item["content"])


def test_a_cut_notebook_counts_its_cells_and_its_call_reads_on(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "nb.ipynb").write_text(json.dumps(notebook(30)))
    result = attach(core, budget_tokens=1200, types=["file"], mentions=["nb.ipynb"])
    [item] = result["attachments"]
    assert item["truncated"] is True
    note = last_line(item["content"])
    shown = re.search(
        r"showing cells 1-(\d+)(?: and the start of cell (\d+))? of the notebook's 30", note
    )
    assert shown, note
    last = int(shown.group(1))
    closed(item["content"])
    for i in range(last):
        assert f"value_{i}_11 = {i * 11}" in item["content"]
    assert f"value_{last}_11 =" not in item["content"]
    [(tool, args)] = calls(note)
    assert (tool, args) == ("read", {"file_path": str(workspace / "nb.ipynb"), "offset": last + 1})
    rest = unstructure(core.read(ReadParams(**args)))
    assert rest["type"] == "notebook"
    assert rest["file"]["cells"][0]["index"] == last


def test_an_image_mention_over_the_budget_names_the_read_that_sends_it(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "shot.png").write_bytes(encode(screenshot(2880, 1800), "PNG"))
    result = attach(core, budget_tokens=500, types=["file"], mentions=["shot.png"])
    assert not result["attachments"]
    [dropped] = result["dropped"]
    [(tool, args)] = calls(dropped["reason"])
    assert (tool, args) == ("read", {"file_path": str(workspace / "shot.png")})
    assert unstructure(core.read(ReadParams(**args)))["type"] == "image"


def test_a_cut_selection_counts_the_files_lines_and_its_call_reads_the_rest_of_it(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "log.txt").write_text("".join(f"{i:05d} served\n" for i in range(1, 3001)))
    # Lines 501-1500 selected: far more than the selection's cap.
    editor = ActiveEditor("log.txt", Range(Position(500, 0), Position(1500, 0)))
    result = attach(core, types=["selection"], active_editor=editor)
    [item] = result["attachments"]
    assert item["truncated"] is True
    body, note = item["content"].rsplit("\n", 1)
    shown = re.search(
        r"showing lines 501-(\d+) of the 501-1500 selected \(the file has 3,000\)", note
    )
    assert shown, note
    last = int(shown.group(1))
    assert body.split("\n")[-1].endswith(f"{last:05d} served")
    [(tool, args)] = calls(note)
    assert (tool, args) == (
        "read",
        {"file_path": str(workspace / "log.txt"), "offset": last + 1, "limit": 1500 - last},
    )
    rest = unstructure(core.read(ReadParams(**args)))
    assert (rest["file"]["start_line"], rest["file"]["num_lines"]) == (last + 1, 1500 - last)


def test_a_cells_text_that_looks_like_a_cell_header_does_not_count_as_one(
    core: Readkeeper, workspace: Path
) -> None:
    # Each cell's source is fenced: lines in it that look like readkeeper's headers or
    # fences are the file's text, never counted as cells, never closing the fence.
    forged = "--- cell c99 (code) ---\n```\n--- page 3 ---\n" * 4
    cells = notebook(30)
    for cell in cells["cells"]:
        cell["source"] = forged + cell["source"]
    (workspace / "nb.ipynb").write_text(json.dumps(cells))
    result = attach(core, budget_tokens=1500, types=["file"], mentions=["nb.ipynb"])
    [item] = result["attachments"]
    note = last_line(item["content"])
    shown = re.search(r"showing cells? 1(?:-(\d+))?(?: and the start of cell \d+)? of the", note)
    assert shown, note
    last = int(shown.group(1) or 1)
    # What it says it holds is there, whole; the cell after it is not.
    for i in range(last):
        assert f"value_{i}_11 = {i * 11}" in item["content"]
    assert f"value_{last}_11 =" not in item["content"]
    # The note is readkeeper's: outside every fence the cut went into.
    body = item["content"].rstrip().split("\n")[:-1]
    opened: str | None = None
    for line in body:
        if opened is None and line.startswith("```"):
            opened = line
        elif line == opened:
            opened = None
    assert opened is None
