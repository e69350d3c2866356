"""Conformance: every answer type, read as an agent reads it (the text MCP and the CLI
render), says exactly what the agent holds afterwards.

A small model of the agent keeps, per file, the lines it was shown (by number). Each
answer is parsed from its rendered text only; its claims (these lines, of that many; the
lines you hold are unchanged, now at these numbers; this diff turns what you hold into
the file; this outline's symbols start at these lines; these cells) are then checked
against the file on disk."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

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


class Agent:
    """What the agent holds of each file: its lines by number, as it was shown them."""

    def __init__(self, core: Readkeeper, root: Path) -> None:
        self.core, self.root = core, root
        self.held: dict[str, dict[int, str]] = {}

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
        cells = json.loads((self.root / name).read_text())["cells"]
        assert re.match(rf"^.+: notebook, {len(cells)} cells", words), words
        for cell in cells:
            assert "".join(cell["source"]) in words


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
