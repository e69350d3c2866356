"""Conformance: every answer type, read as an agent reads it (the text MCP and the CLI
render), says exactly what the agent holds afterwards.

A small model of the agent keeps, per file, the lines it was shown (by number). Each
answer is parsed from its rendered text only; its claims (these lines, of that many; the
lines you hold are unchanged, now at these numbers; this diff turns what you hold into
the file; this outline's symbols start at these lines; these cells) are then checked
against the file on disk. Images, PDFs and notebooks the same way, in their own terms:
the pages it holds (as text or rendered), the cells, the image as it was sent."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from document_samples import encode, numbered_pdf, page_text, screenshot
from PIL import Image

from readkeeper import render
from readkeeper.core import Readkeeper
from readkeeper.protocol import (
    AttachmentsParams,
    EditParams,
    ReadParams,
    WriteParams,
    unstructure,
)

HEAD = re.compile(r"^(?P<path>.+): lines (?P<a>\d+)-(?P<b>\d+) of (?P<n>\d+)")
NUMBERED = re.compile(r"^ *(\d+)\t(.*)$")
HELD = re.compile(
    r"(?:[Aa]ll (?P<all>[\d,]+) lines|[Ll]ines (?P<a>\d+)-(?P<b>\d+)(?: of (?P<n>[\d,]+))?)"
)
MOVED = re.compile(r"lines you read as (?P<p>\d+)-(?P<q>\d+) are unchanged, now lines (?P<a>\d+)-")


def n(text: str) -> int:
    return int(text.replace(",", ""))


PAGES_HELD = re.compile(
    r"^(?:All (?P<all>[\d,]+) pages|Pages? (?P<pages>[\d,-]+) of (?P<n>[\d,]+)) "
    r"(?:as text|rendered as (?:a PNG image|PNG images)), unchanged since your read"
)
CELLS_HELD = re.compile(
    r"^(?:All (?P<all>[\d,]+) cells|Cells (?P<a>\d+)-(?P<b>\d+) of (?P<n>[\d,]+)), with "
    r"outputs (?:and images|\(images as placeholders\)), unchanged since your read"
)
IMAGE_HELD = re.compile(
    r"^The image as sent to you \((?P<w>\d+)x(?P<h>\d+), (?:full size|downscaled from "
    r"(?P<w0>\d+)x(?P<h0>\d+)), (?P<tokens>[\d,]+) tokens\), unchanged since your read"
)


def expand(pages: str) -> list[int]:
    """'1-3,5' as [1, 2, 3, 5]."""
    found: list[int] = []
    for part in pages.split(","):
        first, _, last = part.partition("-")
        found.extend(range(int(first), int(last or first) + 1))
    return found


def notebook_sources(path: Path) -> list[str]:
    return ["".join(cell["source"]) for cell in json.loads(path.read_text())["cells"]]


class Agent:
    """What the agent holds of each file: its lines by number, as it was shown them."""

    def __init__(self, core: Readkeeper, root: Path) -> None:
        self.core, self.root = core, root
        self.held: dict[str, dict[int, str]] = {}
        # Documents: page number -> text (or "rendered" PNG path), cell index -> source,
        # and an image as it was sent (width, height, tokens).
        self.pages: dict[str, dict[int, str]] = {}
        self.rendered: dict[str, dict[int, str]] = {}
        self.cells: dict[str, dict[int, str]] = {}
        self.images: dict[str, tuple[int, int, int]] = {}
        self.page_texts: dict[str, list[str]] = {}  # what each PDF's pages say (made here)

    def file_lines(self, name: str) -> list[str]:
        return (self.root / name).read_text().splitlines()

    def read(self, name: str, **params: Any) -> str:
        result = unstructure(self.core.read(ReadParams(file_path=name, **params)))
        words = render.read(result)
        getattr(self, "_" + result["type"])(name, words)
        return str(result["type"])

    def _text(self, name: str, words: str) -> None:
        head = HEAD.match(words)
        assert head, words
        lines = self.file_lines(name)
        assert n(head["n"]) == len(lines)
        shown = [NUMBERED.match(line) for line in words.split("\n")[1:]]
        numbers = [int(m.group(1)) for m in shown if m]
        assert numbers == list(range(int(head["a"]), int(head["b"]) + 1))
        held = self.held.setdefault(name, {})
        for m in shown:
            if m:
                assert m.group(2) == lines[int(m.group(1)) - 1]
                held[int(m.group(1))] = m.group(2)

    def _file_unchanged(self, name: str, words: str) -> None:
        if not name.endswith((".pdf", ".ipynb", ".png")):
            return self._lines_unchanged(name, words)
        said = words.split(": ", 2)[2]
        assert "lines" not in said, said  # a document is never counted in lines
        if name.endswith(".png"):
            sent = IMAGE_HELD.match(said)
            assert sent, said
            size = (int(sent["w"]), int(sent["h"]), n(sent["tokens"]))
            assert size == self.images[name], (said, self.images[name])
            with Image.open(self.root / name) as image:
                assert (int(sent["w0"] or sent["w"]), int(sent["h0"] or sent["h"])) == image.size
        elif name.endswith(".ipynb"):
            claim = CELLS_HELD.match(said)
            assert claim, said
            cells = notebook_sources(self.root / name)
            first, last = (
                (1, n(claim["all"])) if claim["all"] else (int(claim["a"]), int(claim["b"]))
            )
            assert n(claim["all"] or claim["n"]) == len(cells)
            for index in range(first - 1, last):
                assert self.cells[name][index] == cells[index], (said, index)
        else:
            claim = PAGES_HELD.match(said)
            assert claim, said
            count = len(self.page_texts[name])
            assert n(claim["all"] or claim["n"]) == count
            pages = range(1, count + 1) if claim["all"] else expand(claim["pages"])
            held = self.rendered if "rendered as" in said else self.pages
            for page in pages:
                assert page in held.get(name, {}), (said, page)
        return None

    def _pdf(self, name: str, words: str) -> None:
        head = re.match(r"^.+: PDF, pages (\S+) of (\d+), \d+ tokens", words)
        assert head, words
        assert int(head[2]) == len(self.page_texts[name])
        blocks = re.split(r"^--- page (\d+) ---$", words, flags=re.M)[1:]
        shown = [int(number) for number in blocks[::2]]
        assert shown == expand(head[1])
        for page, block in zip(shown, blocks[1::2], strict=True):
            for line in self.page_texts[name][page - 1].split("\n"):
                assert line in block, (page, line)
            self.pages.setdefault(name, {})[page] = block

    def _parts(self, name: str, words: str) -> None:
        head = re.match(r"^.+: pages ([\d,-]+) of (\d+) rendered to PNG in ", words)
        assert head, words
        assert int(head[2]) == len(self.page_texts[name])
        pngs = [line for line in words.split("\n")[1:] if line.endswith(".png")]
        numbers = expand(head[1])
        assert len(pngs) == len(numbers)
        for page, png in zip(numbers, pngs, strict=True):
            with Image.open(png) as image:
                assert image.format == "PNG"
            self.rendered.setdefault(name, {})[page] = png

    def _image(self, name: str, words: str) -> None:
        facts = re.match(r"^.+: PNG image, (\d+)x(\d+) shown at (\d+)x(\d+), (\d+) tokens", words)
        assert facts, words
        with Image.open(self.root / name) as image:
            assert (int(facts[1]), int(facts[2])) == image.size
        self.images[name] = (int(facts[3]), int(facts[4]), int(facts[5]))

    def _lines_unchanged(self, name: str, words: str) -> None:
        lines, held = self.file_lines(name), self.held.get(name, {})
        moved = MOVED.search(words)
        if moved:
            first, last, now = int(moved["p"]), int(moved["q"]), int(moved["a"])
        else:
            claim = HELD.search(words)
            assert claim, words
            if claim["all"]:
                first, last = 1, n(claim["all"])
                assert last == len(lines)
            else:
                first, last = int(claim["a"]), int(claim["b"])
                if claim["n"]:
                    assert n(claim["n"]) == len(lines)
            now = first
        # What the agent holds, moved to where the stub says it is, is the file there.
        shifted = {}
        for number in range(first, last + 1):
            assert number in held, (words, number)
            assert held[number] == lines[number - first + now - 1], (words, number)
            shifted[number - first + now] = held[number]
        self.held[name] = {**{k: v for k, v in held.items() if k not in shifted}, **shifted}

    def _file_changed(self, name: str, words: str) -> None:
        held = self.held.get(name, {})
        old = [held[i] for i in range(1, len(held) + 1)]
        new = apply(old, words.split("\n")[1:])
        assert new == self.file_lines(name)
        self.held[name] = dict(enumerate(new, 1))

    def _outline(self, name: str, words: str) -> None:
        lines = self.file_lines(name)
        head = re.match(r"^.+: outline of (\d+) lines", words)
        assert head, words
        assert int(head.group(1)) == len(lines)
        for entry in re.finditer(r"^\s*(\d+)-(\d+) \w+ (\w+)", words, re.M):
            assert entry.group(3) in lines[int(entry.group(1)) - 1], entry.group(0)

    def _notebook(self, name: str, words: str) -> None:
        cells = notebook_sources(self.root / name)
        # "notebook, 12 cells" when it shows them all, else which: "cells 3-6 of 12"; then
        # what they cost.
        head = re.match(
            r"^.+: notebook, (?:cells? (\d+)(?:-(\d+))? of (\d+)|(\d+) cells), [\d,]+ tokens?",
            words,
            re.M,
        )
        assert head, words
        assert int(head[3] or head[4]) == len(cells)
        first = int(head[1] or 1)
        last = int(head[2] or head[1]) if head[1] else len(cells)
        ids = [cell.get("id") for cell in json.loads((self.root / name).read_text())["cells"]]
        shown = []
        for found in re.finditer(r"^--- cell (\S+) \(\w+\)(?: \[\d+\])? ---\n`{3,}\n", words, re.M):
            index = ids.index(found[1])
            assert words[found.end() :].startswith(cells[index]), index
            self.cells.setdefault(name, {})[index] = cells[index]
            shown.append(index + 1)
        assert shown == list(range(first, last + 1)), (head[0], shown)


def apply(old: list[str], diff: list[str]) -> list[str]:
    """`diff` (a unified diff's lines, "note:" ending it) applied to `old`."""
    new: list[str] = []
    at = 0
    for line in diff:
        hunk = re.match(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", line)
        if hunk:
            start = int(hunk.group(1)) - (0 if hunk.group(2) == "0" else 1)
            new.extend(old[at:start])
            at = start
        elif line.startswith(("---", "+++", "note:")) or not line:
            continue
        elif line[0] == " ":
            assert old[at] == line[1:]
            new.append(line[1:])
            at += 1
        elif line[0] == "-":
            assert old[at] == line[1:]
            at += 1
        elif line[0] == "+":
            new.append(line[1:])
    return new + old[at:]


def source(count: int) -> str:
    return "".join(f"def handler_{i}(event):\n    return event + {i}\n\n" for i in range(count))


def rewrite(path: Path, text: str) -> None:
    path.write_text(text)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


def test_text_stubs_and_diffs_say_what_the_agent_holds(core: Readkeeper, workspace: Path) -> None:
    agent = Agent(core, workspace)
    path = workspace / "log.txt"
    path.write_text("".join(f"entry {i}\n" for i in range(1, 3001)))
    assert agent.read("log.txt") == "text"  # cut at the line default
    assert agent.read("log.txt") == "file_unchanged"
    rewrite(path, path.read_text() + "entry 3001\n")  # a change after the lines held
    assert agent.read("log.txt") == "file_unchanged"
    assert agent.read("log.txt", offset=2500, limit=10) == "text"
    rewrite(path, "new first\n" + path.read_text())  # moves the lines held
    assert agent.read("log.txt", offset=2500, limit=10) == "file_unchanged"
    small = workspace / "small.txt"
    small.write_text("".join(f"row {i}\n" for i in range(1, 201)))
    assert agent.read("small.txt") == "text"
    rewrite(small, small.read_text().replace("row 50\n", "row fifty\n"))
    assert agent.read("small.txt") == "file_changed"
    assert agent.read("small.txt") == "file_unchanged"


def test_outlines_symbols_and_the_sessions_own_changes(core: Readkeeper, workspace: Path) -> None:
    agent = Agent(core, workspace)
    (workspace / "big.py").write_text(source(900))
    assert agent.read("big.py") == "outline"
    assert agent.read("big.py", symbol="handler_300") == "text"
    core.edit(EditParams(file_path="big.py", old_string="event + 5\n", new_string="event + 50\n"))
    assert agent.read("big.py", symbol="handler_300") == "file_unchanged"
    core.write(WriteParams(file_path="new.txt", content="one\ntwo\n"))
    agent.held["new.txt"] = {1: "one", 2: "two"}  # what the agent wrote
    assert agent.read("new.txt") == "file_unchanged"


def test_a_notebook_says_its_cells(core: Readkeeper, workspace: Path) -> None:
    agent = Agent(core, workspace)
    cells = [
        {
            "cell_type": "code",
            "id": f"c{i}",
            "metadata": {},
            "source": [f"x_{i} = {i}"],
            "outputs": [],
            "execution_count": None,
        }
        for i in range(3)
    ]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (workspace / "nb.ipynb").write_text(json.dumps(notebook))
    assert agent.read("nb.ipynb") == "notebook"


def test_a_cut_attachment_says_which_lines_of_the_file_it_holds(
    core: Readkeeper, workspace: Path
) -> None:
    lines = [f"{i:05d} served" for i in range(1, 3001)]
    (workspace / "big.log").write_text("\n".join(lines) + "\n")
    result = core.attachments(AttachmentsParams(budget_tokens=1500, mentions=["big.log"]))
    [item] = [a for a in result["attachments"] if a["type"] == "file"]
    body, note = item["content"].rsplit("\n", 1)
    claim = re.search(r"showing lines (\d+)-(\d+) of the file's ([\d,]+)", note)
    assert claim, note
    assert n(claim.group(3)) == len(lines)
    shown = [NUMBERED.match(line) for line in body.split("\n")]
    assert [int(m.group(1)) for m in shown if m] == list(
        range(int(claim.group(1)), int(claim.group(2)) + 1)
    )
    assert all(m.group(2) == lines[int(m.group(1)) - 1] for m in shown if m)


def test_pdf_pages_as_text_and_rendered_say_what_the_agent_holds(
    core: Readkeeper, workspace: Path
) -> None:
    agent = Agent(core, workspace)
    for name, count in (("small.pdf", 3), ("book.pdf", 40)):
        agent.page_texts[name] = [page_text(p, 6) for p in range(1, count + 1)]
        (workspace / name).write_bytes(numbered_pdf(count, lines=6))
    assert agent.read("small.pdf") == "pdf"
    assert agent.read("small.pdf") == "file_unchanged"  # all 3 pages, as text
    assert agent.read("book.pdf", pages="2-4") == "pdf"
    assert agent.read("book.pdf", pages="2-4") == "file_unchanged"
    assert agent.read("book.pdf", pages="3-5") == "pdf"  # page 5 is not held: sent
    assert agent.read("book.pdf", pages="1-40") == "pdf"  # cut at 20 pages
    assert agent.read("book.pdf", pages="1-40") == "file_unchanged"
    assert agent.read("book.pdf", pages="7", render=True) == "parts"
    assert agent.read("book.pdf", pages="7", render=True) == "file_unchanged"
    assert agent.read("book.pdf", pages="30-31", render=True) == "parts"
    assert agent.read("book.pdf", pages="30-31", render=True) == "file_unchanged"


def test_an_image_and_a_notebooks_cells_say_what_the_agent_holds(
    core: Readkeeper, workspace: Path
) -> None:
    agent = Agent(core, workspace)
    (workspace / "shot.png").write_bytes(encode(screenshot(2880, 1800), "PNG"))
    (workspace / "icon.png").write_bytes(encode(screenshot(300, 200), "PNG"))
    for name in ("shot.png", "icon.png"):
        assert agent.read(name) == "image"
        assert agent.read(name) == "file_unchanged"
    cells = [
        {
            "cell_type": "code",
            "id": f"c{i}",
            "metadata": {},
            "source": [f"x_{i} = {i}\n", f"print(x_{i})"],
            "outputs": [{"output_type": "stream", "name": "stdout", "text": f"{i}\n"}],
            "execution_count": i + 1,
        }
        for i in range(12)
    ]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (workspace / "nb.ipynb").write_text(json.dumps(notebook))
    assert agent.read("nb.ipynb", offset=3, limit=4) == "notebook"
    assert agent.read("nb.ipynb", offset=3, limit=4) == "file_unchanged"
    assert agent.read("nb.ipynb", offset=4, limit=4) == "notebook"  # cell 7 is not held
    assert agent.read("nb.ipynb") == "notebook"
    assert agent.read("nb.ipynb") == "file_unchanged"
    assert agent.read("nb.ipynb", include_images=True) == "notebook"
    assert agent.read("nb.ipynb", include_images=True) == "file_unchanged"


def test_a_cut_pdf_or_notebook_attachment_says_which_pages_or_cells_it_holds(
    core: Readkeeper, workspace: Path
) -> None:
    texts = [page_text(p, 30) for p in range(1, 9)]
    (workspace / "report.pdf").write_bytes(numbered_pdf(8, lines=30))
    cells = [
        {
            "cell_type": "code",
            "id": f"c{i}",
            "metadata": {},
            "source": "".join(f"value_{i}_{j} = {i * j}\n" for j in range(12)),
            "outputs": [],
            "execution_count": None,
        }
        for i in range(30)
    ]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (workspace / "nb.ipynb").write_text(json.dumps(notebook))
    # The notebook at every budget of a cell's width: the cut falls on each of its lines
    # (its fences too), whatever the length of the temporary path in the header.
    cases = [("report.pdf", 1500)] + [("nb.ipynb", budget) for budget in range(1150, 1250)]
    for name, budget in cases:
        result = core.attachments(AttachmentsParams(budget_tokens=budget, mentions=[name]))
        [item] = [a for a in result["attachments"] if a["type"] == "file"]
        body, note = item["content"].rsplit("\n", 1)
        claim = re.search(
            r"showing (?P<what>pages|cells) 1-(?P<b>\d+)(?: and the start of \w+ (?P<c>\d+))? "
            r"of the (?:PDF's|notebook's) (?P<n>\d+)\. Read the rest with the read tool with "
            r"(?P<call>\{.*\})\.\]$",
            note,
        )
        assert claim, note
        last, call = int(claim["b"]), json.loads(claim["call"])
        if claim["what"] == "pages":
            assert int(claim["n"]) == len(texts)
            blocks = re.split(r"^--- page (\d+) ---$", body, flags=re.M)[1:]
            assert [int(p) for p in blocks[::2]][:last] == list(range(1, last + 1))
            for page in range(1, last + 1):  # every page it says it holds, whole
                assert all(line in blocks[2 * page - 1] for line in texts[page - 1].split("\n"))
            assert len(blocks) // 2 == last + (1 if claim["c"] else 0)
            assert call["pages"].startswith(f"{last + 1}-")
            answer = unstructure(core.read(ReadParams(**call)))
            assert answer["file"]["shown_pages"].startswith(f"{last + 1}-")
        else:
            assert int(claim["n"]) == len(cells)
            for i in range(last):
                assert cells[i]["source"].rstrip("\n") in body
            assert f"value_{last}_11" not in body
            assert call["offset"] == last + 1
            answer = unstructure(core.read(ReadParams(**call)))
            assert answer["file"]["cells"][0]["index"] == last
