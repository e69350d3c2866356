"""The drop-in's next steps name only parameters its tools have (fix25a). The core says
a read's next step in option prose (`pages="2", render=true`, `symbol="X"`,
`include_images=true`, `force=true`), and the drop-in passed it on as written: a PDF's
textless page said `render=true` to read_text_file, which has no render (drawing pages
is read_media_file's pages), the outline of a long module named `symbol`, a notebook
`include_images`, and a stub of rendered pages said "read_text_file with force=true",
which sends the text, not the pages.

Over a corpus of the drop-in's answers, every option readkeeper's own words name (never
a file's text: fences and numbered lines are left out) is a parameter of the tool it is
named with (the last tool named before it in its sentence, or the tool that answered),
per the drop-in's own schemas (tools.SCHEMAS), unless the sentence says this server does
not offer it; and each call a sentence names, made as it says, carries its tool's
required parameters and is not refused. The corpus holds an answer of each tool that
answers with a way on (round 26: a missing file's search_files without its required
path, read_media_file of a notebook naming include_images, read_multiple_files' outline
naming symbol=, edit_file's closest text naming offset= and head=); round 27: an
outline's stub, read_text_file's and read_multiple_files', said "a range (offset,
limit)": `limit` in prose after "offset, " was no word the drop-in's rule rewrote."""

from __future__ import annotations

import json
import re
import shutil
import typing
from pathlib import Path
from typing import Any

import mcp_types as types
from document_samples import encode, numbered_pdf, photo, png_output, text_pdf
from mcp import Client

from mcp_helpers import core_client, dropin_client, text_of
from readkeeper import quoting
from readkeeper.hints import again
from readkeeper.mcp.filesystem.tools import SCHEMAS
from readkeeper.mcp.filesystem.words import for_filesystem

_TOOL = re.compile(r"\b(" + "|".join(sorted(SCHEMAS, key=len, reverse=True)) + r")\b")
# An option a sentence names, and a run of them sent together (`offset=412, head=3`).
_VALUE = r'(?:"(?:[^"\\]|\\.)*"|[\w\-]+)'
_OPTION = re.compile(rf"(?<![\w\-/.])([A-Za-z_]+)=({_VALUE})")
_RUN = re.compile(rf"(?<![\w\-/.])[A-Za-z_]+={_VALUE}(?:, [A-Za-z_]+={_VALUE})*")
_NOT_OFFERED = "this server does not offer it"
# Options said in prose as the way on ("read it by lines with offset and head", "a range
# (offset, head)").
_PROSE = re.compile(r"(?<=\bwith )([a-z_]+) and ([a-z_]+)\b|\(([a-z_]+), ([a-z_]+)\)")
_ANY = {key for schema in SCHEMAS.values() for key in schema["properties"]}
# The core's words for what the drop-in's tools name otherwise (read's limit is head):
# options too, when prose names one (round 27: an outline's stub said "(offset, limit)").
_CORE = {"limit", "file_path", "file_paths", "old_string", "new_string", "dry_run"}


def _notebook(cells: int) -> str:
    """A notebook of `cells` long code cells (too many to show at once), one showing a
    PNG (a size placeholder unless include_images)."""
    png = encode(photo(64, 48), "PNG")
    shown = [
        {
            "cell_type": "code",
            "execution_count": n,
            "id": f"c{n}",
            "metadata": {},
            "source": f"value_{n} = {n}  # " + "words of the cell " * 30,
            "outputs": [png_output(png)] if n == 1 else [],
        }
        for n in range(cells)
    ]
    return json.dumps({"cells": shown, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def _files(workspace: Path) -> None:
    (workspace / "mixed.pdf").write_bytes(text_pdf(["Page one words", "", "Page three", ""]))
    (workspace / "long.pdf").write_bytes(numbered_pdf(39))
    shutil.copy(typing.__file__, workspace / "typing.py")  # a big module: its outline
    (workspace / "nb.ipynb").write_text(_notebook(300))
    lines = "".join(f"line {n} of the text\n" for n in range(1, 8001))
    (workspace / "big.txt").write_text(lines)
    (workspace / "pic.png").write_bytes(encode(photo(200, 100), "PNG"))
    (workspace / "small.ipynb").write_text(_notebook(3))
    shutil.copy(typing.__file__, workspace / "outline.py")  # read by read_multiple_files
    (workspace / "e.txt").write_text("alpha\nbeta\ngamma\n")


# Each call twice where its second answer is a stub.
CORPUS: list[tuple[str, dict[str, Any]]] = [
    ("read_text_file", {"path": "mixed.pdf"}),
    ("read_text_file", {"path": "long.pdf", "pages": "1-30"}),
    ("read_text_file", {"path": "long.pdf", "pages": "1-30"}),
    ("read_media_file", {"path": "long.pdf", "pages": "1-30"}),
    ("read_media_file", {"path": "long.pdf", "pages": "1-30"}),
    ("read_text_file", {"path": "typing.py"}),
    ("read_text_file", {"path": "typing.py"}),  # round 27: an outline's stub
    ("read_text_file", {"path": "nb.ipynb"}),
    ("read_text_file", {"path": "nb.ipynb"}),
    ("read_text_file", {"path": "big.txt"}),
    ("read_text_file", {"path": "big.txt"}),
    ("read_media_file", {"path": "pic.png"}),
    ("read_media_file", {"path": "pic.png"}),
    # Round 26: the next step one call away from a read.
    ("read_text_file", {"path": "gone.txt"}),
    ("get_file_info", {"path": "gone.txt"}),
    ("read_multiple_files", {"paths": ["gone.txt"]}),
    ("move_file", {"source": "gone.txt", "destination": "moved.txt"}),
    ("read_media_file", {"path": "small.ipynb"}),
    ("read_media_file", {"path": "small.ipynb", "pages": "1"}),
    ("read_media_file", {"path": "e.txt", "pages": "1"}),
    ("read_multiple_files", {"paths": ["outline.py"]}),
    ("read_multiple_files", {"paths": ["outline.py"]}),  # its stub
    ("read_text_file", {"path": "e.txt"}),
    ("edit_file", {"path": "e.txt", "edits": [{"oldText": "", "newText": "b"}]}),
    (
        "edit_file",
        {
            "path": "e.txt",
            "edits": [
                {"oldText": "alpha\nbeta", "newText": "X"},
                {"oldText": "beta\ngamma", "newText": "Y"},
            ],
        },
    ),
]


def own_words(said: str) -> list[str]:
    """The sentences of an answer that are readkeeper's: no fenced text, no numbered
    line of a file (an outline's), no listed page file."""
    kept: list[str] = []
    fence: str | None = None
    for line in said.split("\n"):
        if fence is not None:
            fence = None if line == fence else fence
        elif line.startswith("```"):
            fence = line
        elif not re.match(r"^ *\d+\t", line) and not line.endswith(".png"):
            kept.append(line)
    return [s for line in kept for s in re.split(r"(?<=\.)\s+", line) if s]


def _value(text: str) -> Any:
    if text.startswith('"'):
        return json.loads(text)
    if text in ("true", "false"):
        return text == "true"
    return int(text) if text.isdigit() else text


def _named_tool(sentence: str, at: int, answered: str) -> str:
    before = _TOOL.findall(sentence[:at])
    return before[-1] if before else answered


def next_steps(
    said: str, tool: str, args: dict[str, Any]
) -> tuple[list[tuple[str, str, str]], list[tuple[str, dict[str, Any]]]]:
    """Each option the answer's own words name, with the tool it is named with and its
    sentence; and each call they name: a tool's JSON arguments, or a run of options
    (on the answer's path; `force` alone: the answer's own call again)."""
    options: list[tuple[str, str, str]] = []
    calls: list[tuple[str, dict[str, Any]]] = []
    path = args.get("path") or (args.get("paths") or [args.get("source")])[0]
    for sentence in own_words(said.split("\nkind: ")[0]):  # not an error's data
        if _NOT_OFFERED in sentence:
            continue
        for found in _TOOL.finditer(sentence):
            if sentence.startswith(" with {", found.end()):
                sent, _ = json.JSONDecoder().raw_decode(sentence, found.end() + 6)
                options += [(key, found.group(1), sentence) for key in sent]
                calls.append((found.group(1), sent))
        masked = re.sub(r'\{"[^\n]*?\}(?=[\])]|\.|,|$)', "{}", sentence)  # a call's JSON
        for run in _RUN.finditer(masked):
            named = _named_tool(masked, run.start(), tool)
            given = {m.group(1): _value(m.group(2)) for m in _OPTION.finditer(run.group())}
            options += [(key, named, sentence) for key in given]
            again = set(given) == {"force"} and named == tool
            calls.append((named, {**(dict(args) if again else {"path": path}), **given}))
        for pair in _PROSE.finditer(masked):
            named = _named_tool(masked, pair.start(), tool)
            named_keys = [key for key in pair.groups() if key in _ANY | _CORE]
            options += [(key, named, sentence) for key in named_keys]
    return options, calls


async def _corpus(client: Client, workspace: Path) -> list[tuple[str, dict[str, Any], str]]:
    answers = []
    for tool, args in CORPUS:
        sent = {
            key: [str(workspace / v) for v in value]
            if key == "paths"
            else str(workspace / value)
            if key in ("path", "source", "destination")
            else value
            for key, value in args.items()
        }
        answers.append((tool, sent, text_of(await client.call_tool(tool, sent))))
    return answers


async def test_every_option_a_next_step_names_is_a_parameter_of_its_tool(
    workspace: Path,
) -> None:
    _files(workspace)
    async with dropin_client(workspace) as client:
        answers = await _corpus(client, workspace)
    wrong, named = [], set()
    for tool, args, said in answers:
        for option, named_tool, sentence in next_steps(said, tool, args)[0]:
            named.add(option)
            if option not in SCHEMAS[named_tool]["properties"]:
                wrong.append(f"{named_tool} has no {option}: {sentence}")
    assert not wrong, "\n".join(wrong)
    # The corpus holds the notes this is about: drawn pages, a symbol, a notebook's
    # images, a cut read's way on, a stub's resend.
    assert {"pages", "symbol", "include_images", "offset", "head", "force"} <= named, named
    # ... and the round's: a missing file's search, a read's range after an edit's refusal.
    assert {"pattern", "path"} <= named, named


async def test_each_next_step_works_when_made(workspace: Path) -> None:
    _files(workspace)
    async with dropin_client(workspace) as client:
        answers = await _corpus(client, workspace)
        made = {
            (tool, json.dumps(sent, sort_keys=True))
            for answered, args, said in answers
            for tool, sent in next_steps(said, answered, args)[1]
        }
        assert any(tool == "read_media_file" for tool, _ in made), made
        assert any(tool == "search_files" for tool, _ in made), made
        refused = []
        for tool, sent in sorted(made):
            missing = set(SCHEMAS[tool].get("required", [])) - set(json.loads(sent))
            if missing:
                refused.append(f"{tool} {sent}: without its required {sorted(missing)}")
            result = await client.call_tool(tool, json.loads(sent))
            if result.is_error:
                refused.append(f"{tool} {sent}: {text_of(result)[:300]}")
        assert not refused, "\n".join(refused)


async def test_a_stub_of_drawn_pages_names_the_call_that_draws_them(workspace: Path) -> None:
    _files(workspace)
    path = str(workspace / "long.pdf")
    async with dropin_client(workspace) as client:
        first = text_of(await client.call_tool("read_media_file", {"path": path, "pages": "1-30"}))
        result = await client.call_tool("read_media_file", {"path": path, "pages": "1-30"})
        said = text_of(result)
    # The pages drawn said as a read names pages (a Python list was shown: [1, 2, ...]).
    assert first.startswith(f"{path}: pages 1-20 of 39 rendered to PNG in "), first
    assert said.startswith("file_unchanged:"), said
    assert "render=" not in said, said
    assert "read_text_file" not in said, said  # it would send the text, not the pages
    # The way on is the whole call that draws them (it said `pages="21-30"` alone).
    drawn = quoting.json_text({"path": path, "pages": "21-30"})
    assert f"the rest: read_media_file with {drawn}." in said, said
    # The resend said once, as the whole call (a second line said `force=true` alone).
    resend = quoting.json_text({"path": path, "pages": "1-30", "force": True})
    assert f"Your copy is current; read_media_file with {resend} resends." in said, said
    assert said.count("force") == 1, said


async def test_drawn_pages_past_twenty_go_on_drawn(workspace: Path) -> None:
    # The note of read_media_file's pages 1-25 named read_text_file for 21-25: their
    # text, refused for pages drawn only (round 35, E1). Both ways on draw them.
    _files(workspace)
    path = str(workspace / "long.pdf")
    async with dropin_client(workspace) as client:
        said = text_of(await client.call_tool("read_media_file", {"path": path, "pages": "1-25"}))
        drawn = quoting.json_text({"path": path, "pages": "21-25"})
        # The header's way on and the note's.
        assert said.count(f"continue with read_media_file with {drawn}") == 2, said
        assert "read_text_file with" not in said, said
        rest = await client.call_tool("read_media_file", {"path": path, "pages": "21-25"})
        assert not rest.is_error, text_of(rest)
        assert text_of(rest).startswith(f"{path}: pages 21-25 of 39 rendered to PNG in ")


async def test_read_text_file_sends_a_notebooks_images_when_asked(workspace: Path) -> None:
    _files(workspace)
    path = str(workspace / "nb.ipynb")
    async with dropin_client(workspace) as client:
        plain = await client.call_tool("read_text_file", {"path": path})
        asked = await client.call_tool(
            "read_text_file", {"path": path, "include_images": True, "force": True}
        )
    assert not any(isinstance(b, types.ImageContent) for b in plain.content)
    assert not asked.is_error, text_of(asked)
    assert [b.mime_type for b in asked.content if isinstance(b, types.ImageContent)] == [
        "image/png"
    ]
    assert "sent as an image after the text" in text_of(asked)


async def test_the_core_tools_say_the_pages_to_continue_with_as_json(workspace: Path) -> None:
    # render.py said them as Python writes a string (pages='21-30'), in every front end;
    # the core's tools say the read just made, its pages changed (round 31).
    _files(workspace)
    path = str(workspace / "long.pdf")
    async with core_client(workspace) as client:
        result = await client.call_tool("read", {"file_path": path, "pages": "1-30"})
    head = text_of(result).split("\n", 1)[0]
    rest = json.dumps({"file_path": path, "pages": "21-30"}, ensure_ascii=False)
    assert head.endswith(f"; continue with the read tool with {rest}"), head


async def test_a_symbol_read_names_read_text_files_own_parameters(workspace: Path) -> None:
    _files(workspace)
    path = str(workspace / "typing.py")
    async with dropin_client(workspace) as client:
        both = await client.call_tool("read_text_file", {"path": path, "symbol": "cast", "head": 3})
        unknown = await client.call_tool("read_text_file", {"path": path, "symbol": "nope"})
        found = await client.call_tool("read_text_file", {"path": path, "symbol": "cast"})
    assert both.is_error
    assert unknown.is_error
    for said in (text_of(both).split("\nkind:")[0], text_of(unknown).split("\nkind:")[0]):
        assert not re.search(r"\blimit\b", said), said
    assert re.search(
        r'the lines alone \(read_text_file with \{"path": "[^"]*typing.py", "head": 3\}\)',
        text_of(both),
    )
    assert not found.is_error, text_of(found)
    assert "def cast(typ, val):" in text_of(found)


async def test_a_symbol_read_sent_with_tail_names_tail(workspace: Path) -> None:
    # Round 27: the drop-in reads tail as offset and limit, and the core's refusal of a
    # symbol with them came back "takes no offset or head", to a call that sent tail.
    _files(workspace)
    path = str(workspace / "typing.py")
    async with dropin_client(workspace) as client:
        tail = await client.call_tool("read_text_file", {"path": path, "symbol": "cast", "tail": 1})
        alone = await client.call_tool("read_text_file", {"path": path, "tail": 1})
    said = text_of(tail).split("\nkind:")[0]
    assert tail.is_error, said
    assert "kind: bad_params" in text_of(tail), said
    assert said == (
        'symbol "cast" reads that symbol\'s own lines, so it takes no tail: send symbol '
        "alone, or tail alone."
    )
    assert tail.structured_content["error"]["data"]["field"] == "tail"  # type: ignore[index]
    assert not alone.is_error, text_of(alone)  # tail alone, as it says


def test_an_option_no_drop_in_tool_takes_is_said_as_not_offered() -> None:
    # The core's own notes, as the drop-in would pass them on: the anchors read's cut
    # (read/anchors.py) names line_format, which no drop-in tool takes.
    way_on = again(offset=10, line_format="anchors")  # as read/anchors.py writes it
    said = for_filesystem(f"Showing lines 1-9. Continue with {way_on}.")
    assert 'offset=10, line_format="anchors" (an option of readkeeper\'s read' in said, said
    assert _NOT_OFFERED in said
    drawn = for_filesystem(f"Rendered pages 1-2; continue with {again(pages='3-4', render=True)}.")
    assert drawn == 'Rendered pages 1-2; continue with read_media_file with pages="3-4".', drawn
