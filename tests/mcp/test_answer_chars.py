"""Every answer keeps to the characters its MCP tool declares (500,000: read/room.py
ANSWER_MAX_CHARS), whatever its tokens: a token may hold 125 spaces. Round 37: six
files of space lines read in one read_many sent 1,446,142 characters, attachments with
them as mentions 1,446,288, a notebook of 60 cells of one 100,000-space line each
3,001,426 (each within its token cap); over HTTP the SDK's client drops a server-sent
event over 1 MiB, so the agent got no answer at all."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import random
from pathlib import Path
from typing import Any

import PIL.Image
import pytest
from document_samples import text_pdf

from helpers import tiktoken_count
from mcp_helpers import (
    exchange,
    mcp_env,
    message,
    named_call,
    ok,
    private_runtime_dir,
    stdio_client,
    text_of,
)

ANSWER_MAX_CHARS = 500_000  # read/room.py ANSWER_MAX_CHARS (test_mcp_schemas checks it)

_OVER = "Over the 500,000 characters one answer sends: not read."


def _client(workspace: Path):  # type: ignore[no-untyped-def]
    return stdio_client(["--root", str(workspace), "--standalone"], mcp_env(private_runtime_dir()))


def _space_files(workspace: Path, count: int = 6) -> list[str]:
    """Files of 120 lines of 1,999 spaces and an x: 240 KB each, about 2,700 tokens."""
    names = [f"m{i}.txt" for i in range(count)]
    for name in names:
        (workspace / name).write_text((" " * 1999 + "x\n") * 120)
    return names


def _notebook(path: Path, cells: list[str]) -> None:
    made = [{"cell_type": "markdown", "metadata": {}, "source": [text]} for text in cells]
    notebook = {"cells": made, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(notebook))


@pytest.mark.parametrize("budget", [None, 60_000])
async def test_read_many_keeps_to_the_characters_one_answer_sends(
    workspace: Path, budget: int | None
) -> None:
    names = _space_files(workspace)
    asked: dict[str, Any] = {"file_paths": names, "force": True}
    if budget is not None:
        asked["budget_tokens"] = budget
    async with _client(workspace) as client:
        said = await ok(client, "read_many", **asked)
        assert len(said) <= ANSWER_MAX_CHARS, len(said)
        assert all(name in said for name in names)
        assert _OVER in said, said[-1500:]
        assert "did not fit the characters left of this answer" in said, said[-1500:]
        # The note's read of the first file left unread gets it.
        rest = named_call(said[said.index("did not fit the characters") :], "read")
        again = await ok(client, "read", **rest)
        assert len(again) <= ANSWER_MAX_CHARS, len(again)
        assert "x" in again, again[:300]


async def test_a_read_in_a_read_many_is_cut_at_the_characters_left(workspace: Path) -> None:
    # A file whose read reaches what is left is read cut there, with its way on, not
    # left out: the third of three files of 240,000 characters of lines.
    for name in ("a.txt", "b.txt", "c.txt"):
        (workspace / name).write_text((" " * 2999 + "x\n") * 80)
    async with _client(workspace) as client:
        said = await ok(client, "read_many", file_paths=["a.txt", "b.txt", "c.txt"])
        assert len(said) <= ANSWER_MAX_CHARS, len(said)
        third = said[said.index("c.txt:") :]
        assert "characters left for it in an answer of several files" in third, third[-800:]
        rest = named_call(third, "read")
        assert rest["file_path"] == "c.txt", rest
        assert rest["offset"] > 1, rest
        assert "x" in await ok(client, "read", **rest)


async def test_attachments_keep_to_the_characters_one_answer_sends(workspace: Path) -> None:
    names = _space_files(workspace)
    async with _client(workspace) as client:
        said = await ok(client, "attachments", mentions=names, budget_tokens=60_000)
    assert len(said) <= ANSWER_MAX_CHARS, len(said)
    assert "characters one answer sends" in said, said[-1500:]


async def test_a_notebook_read_keeps_to_the_characters_one_answer_sends(
    workspace: Path,
) -> None:
    _notebook(workspace / "wide.ipynb", [" " * 100_000 + "x"] * 60)
    _notebook(workspace / "one.ipynb", [" " * 450_000 + "x"])
    async with _client(workspace) as client:
        await _cut_then_on(client, "wide.ipynb", "Showing cells")
        alone = await ok(client, "read", file_path="one.ipynb")
        assert len(alone) <= ANSWER_MAX_CHARS, len(alone)
        assert "over the cap on its own" in alone, alone[-800:]


async def test_a_pdf_read_keeps_to_the_characters_one_answer_sends(workspace: Path) -> None:
    # Ten pages of 40 lines of 2,000 spaces: 800,000 characters of text in 3,000 tokens.
    (workspace / "wide.pdf").write_bytes(text_pdf(["\n".join(["x" + " " * 2000 + "x"] * 40)] * 10))
    async with _client(workspace) as client:
        await _cut_then_on(client, "wide.pdf", "--- page")


async def _cut_then_on(client: Any, name: str, shown: str) -> None:
    """A read of `name` cut by its characters, and the read its note names, each within
    the answer's characters, the second showing `shown`."""
    said = await ok(client, "read", file_path=name)
    assert len(said) <= ANSWER_MAX_CHARS, len(said)
    assert "400,000 characters a read sends at most" in said, said[-800:]
    rest = named_call(said[said.index("Continue with") :], "read")
    more = await ok(client, "read", **rest)
    assert len(more) <= ANSWER_MAX_CHARS, len(more)
    assert shown in more, more[-800:]


def _deep_names(workspace: Path) -> None:
    """300 files of names of 200 spaces under twelve folders of 250 spaces: paths of
    about 3,200 characters in a few dozen tokens each."""
    folder = workspace.joinpath(*[" " * 250 + str(level) for level in range(12)])
    folder.mkdir(parents=True)
    for index in range(300):
        (folder / (f"{index:03d}" + " " * 200)).write_text("NEEDLE\n")


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("glob", {"pattern": "**/*"}),
        ("grep", {"pattern": "NEEDLE", "output": "files", "max_matches": 2000}),
        ("grep", {"pattern": "NEEDLE", "output": "counts", "max_matches": 2000}),
        ("grep", {"pattern": "NEEDLE", "max_matches": 2000}),
    ],
)
async def test_a_page_of_long_names_keeps_to_the_characters_one_answer_sends(
    workspace: Path, tool: str, arguments: dict[str, Any]
) -> None:
    # 282 such paths made a glob page of 917,552 characters within the token cap.
    _deep_names(workspace)
    async with _client(workspace) as client:
        said = await ok(client, tool, **arguments)
        assert len(said) <= ANSWER_MAX_CHARS, len(said)
        assert "400,000 characters a page sends at most" in said, said[-600:]
        more = await ok(client, tool, **named_call(said[-2000:], tool))
        assert len(more) <= ANSWER_MAX_CHARS, len(more)


async def test_the_drop_in_search_keeps_to_the_characters_one_answer_sends(
    workspace: Path,
) -> None:
    _deep_names(workspace)
    args = ["--root", str(workspace), "--standalone", "--tools", "filesystem"]
    async with stdio_client(args, mcp_env(private_runtime_dir())) as client:
        said = await ok(client, "search_files", path=".", pattern="**/*")
    assert len(said) <= ANSWER_MAX_CHARS, len(said)
    assert "cut by the 400,000 characters a page sends at most" in said, said[-600:]


async def test_change_notices_keep_to_the_characters_one_answer_sends(workspace: Path) -> None:
    # Each diff of 60 lines of 2,040 spaces turned over is about 250,000 characters
    # within its 2,000 tokens: eight of them in one answer sent 602,067 characters.
    names = [f"c{index}.txt" for index in range(8)]
    for name in names:
        (workspace / name).write_text((" " * 2040 + "a\n") * 60)
    async with _client(workspace) as client:
        for name in names:
            await ok(client, "read", file_path=name)
        for name in names:
            (workspace / name).write_text((" " * 2040 + "b\n") * 60)
        told: list[str] = []
        for _ in range(200):  # until every change is told, page by page
            said = await ok(client, "changes")
            assert len(said) <= ANSWER_MAX_CHARS, len(said)
            told += [name for name in names if f"{name}\n" in said or f"{name} " in said]
            if len(set(told)) == len(names):
                break
            await asyncio.sleep(0.05)
    assert sorted(set(told)) == names, told


async def test_read_many_without_a_budget_keeps_to_max_tokens(workspace: Path) -> None:
    # Six files of 3,000 lines sent 149,291 tokens in one answer (round 36, B3): an MCP
    # client holding results to 25,000 tokens refused it. Without budget_tokens,
    # max_tokens bounds the whole; a missing file still gets its did-you-mean guess.
    names = [f"big{index}.py" for index in range(6)]
    for name in names:
        (workspace / name).write_text("".join(f"value_{i} = {i}  # a line\n" for i in range(3000)))
    (workspace / "alpha_module.py").write_text("x = 1\n")
    async with _client(workspace) as client:
        said = await ok(client, "read_many", file_paths=[*names, "alpha_modul.py"], force=True)
        assert tiktoken_count(said) <= 25_000, tiktoken_count(said)
        assert "Over max_tokens: not read." in said, said[-1500:]
        assert "budget_tokens left" not in said
        assert "Did you mean" in said, said[-1500:]
        assert "alpha_module.py?" in said, said[-1500:]
        rest = named_call(said[said.index("did not fit the max_tokens cap") :], "read")
        assert rest["file_path"] in names, rest
        assert "value_1 = 1" in await ok(client, "read", **rest)


async def test_a_refusal_never_echoes_a_value_of_the_call_whole(workspace: Path) -> None:
    # An unknown parameter, tool or attachment type named by 600,000 spaces made
    # refusals of 1.2-1.8 MB (the name in the text and twice in the structured content:
    # round 38, A3), which the SDK's HTTP client drops.
    (workspace / "a.txt").write_text("alpha\n")
    huge = " " * 600_000
    calls = [
        ("read", {"file_path": "a.txt", huge: "1"}),
        ("grep", {"pattern": "alpha", huge: "1"}),
        ("attachments", {"types": [huge]}),
        (huge, {}),
    ]
    async with _client(workspace) as client:
        for tool, arguments in calls:
            result = await client.call_tool(tool, arguments)
            assert result.is_error
            sent = len(json.dumps(result.model_dump(mode="json")))
            assert sent < 60_000, (tool[:20], sent)
            assert " characters cut] " in text_of(result), text_of(result)[:300]
    args = ["--root", str(workspace), "--standalone", "--tools", "filesystem"]
    async with stdio_client(args, mcp_env(private_runtime_dir())) as client:
        result = await client.call_tool("read_text_file", {"path": "a.txt", huge: "1"})
        assert result.is_error
        assert len(json.dumps(result.model_dump(mode="json"))) < 60_000


async def test_an_edit_of_many_places_names_the_first_of_them(workspace: Path) -> None:
    # 130,000 replacements were each listed, in the text and the structured `lines`:
    # 929,043 characters and a 1.7 MB answer for an edit that landed (round 38, A2); the
    # ambiguous refusal of the same edit carried every place in its structured content.
    (workspace / "f.txt").write_text("a\n" * 130_000)
    async with _client(workspace) as client:
        await ok(client, "read", file_path="f.txt", offset=1, limit=10)
        refused = await client.call_tool(
            "edit", {"file_path": "f.txt", "old_string": "a", "new_string": "b"}
        )
        assert refused.is_error
        assert len(json.dumps(refused.model_dump(mode="json"))) < 60_000
        assert "130000 places" in text_of(refused), text_of(refused)[:300]
        result = await client.call_tool(
            "edit",
            {"file_path": "f.txt", "old_string": "a", "new_string": "b", "replace_all": True},
        )
        said = text_of(result)
        assert not result.is_error, said[:300]
        assert len(json.dumps(result.model_dump(mode="json"))) < 60_000
        assert "130,000 replacements at lines 1, 2, 3" in said, said[:300]
        assert "and 129,980 more" in said, said[:300]
        structured = result.structured_content
        assert isinstance(structured, dict)
        assert structured["replacements"] == 130_000
        assert len(structured["lines"]) == 1000
    assert (workspace / "f.txt").read_text() == "b\n" * 130_000


def _noise_png(seed: int) -> str:
    """A 40x40 PNG of random pixels (about 4.9 KB of base64: it does not compress)."""
    pixels = random.Random(seed).randbytes(40 * 40 * 3)
    picture = PIL.Image.frombytes("RGB", (40, 40), pixels)
    out = io.BytesIO()
    picture.save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode("ascii")


async def test_a_notebook_s_images_keep_to_the_characters_one_answer_sends(
    workspace: Path,
) -> None:
    # 800 cells of one small image each: 299 images came in one answer of 2,023,464
    # bytes, each within the image budget (round 38, A4). The first image is sent
    # whatever its size; the others while their payloads fit beside the cells.
    cells = [
        {
            "cell_type": "code",
            "execution_count": 1,
            "metadata": {},
            "outputs": [
                {
                    "output_type": "display_data",
                    "data": {"image/png": _noise_png(index), "text/plain": ["<Figure>"]},
                    "metadata": {},
                }
            ],
            "source": [f"plot({index})"],
        }
        for index in range(800)
    ]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (workspace / "n.ipynb").write_text(json.dumps(notebook))
    async with _client(workspace) as client:
        result = await client.call_tool("read", {"file_path": "n.ipynb", "include_images": True})
        said = text_of(result)
        assert not result.is_error, said[:300]
        sent = json.dumps(result.model_dump(mode="json"))
        assert len(sent) < 1_000_000, len(sent)
        images = [block for block in result.content if block.type == "image"]
        assert 0 < len(images) < 200, len(images)
        assert "not sent (each says why)" in said, said[-600:]
        rest = named_call(said[said.index("Continue with") :], "read")
        more = await client.call_tool("read", rest)
        assert [block for block in more.content if block.type == "image"]


async def test_structured_content_keeps_to_its_characters_at_any_budget(workspace: Path) -> None:
    # 100 missing paths of 3,000 controls each, at a budget of 1,000,000 tokens: the text
    # held (70,731 characters) but the structured content repeated each path whole,
    # 1,834,623 characters in a message of 1.9 MB (round 38, A6).
    names = [f"{index}" + "\x01" * 3000 + ".txt" for index in range(100)]
    async with _client(workspace) as client:
        result = await client.call_tool(
            "read_many", {"file_paths": names, "budget_tokens": 1_000_000}
        )
    structured = result.structured_content
    assert isinstance(structured, dict)
    assert len(json.dumps(structured, ensure_ascii=False)) <= 250_000
    assert len(json.dumps(result.model_dump(mode="json"))) < 1_000_000
    assert structured.get("structured_cut", {}).get("of", 100) == 100


def test_an_unknown_method_is_not_echoed_whole(workspace: Path) -> None:
    # "There is no method <600,000 characters>" came back whole, over 1 MiB over HTTP
    # for controls (round 39).
    lines = [message(7, "x" * 600_000, {}) + b"\n", message(8, "\x01" * 200_000, {}) + b"\n"]
    answers = exchange(workspace, lines)
    for number in (7, 8):
        assert answers[number]["error"]["code"] == -32601, str(answers[number])[:300]
        assert len(json.dumps(answers[number])) < 8_000, len(json.dumps(answers[number]))


async def test_a_multi_file_edit_shares_the_lines_one_answer_lists(workspace: Path) -> None:
    # 50 files of 1,000 replacements each listed 1,000 lines each: 381,269 characters of
    # structured content, past the 250,000 it keeps to (round 39).
    files = []
    for index in range(50):
        (workspace / f"f{index}.txt").write_text("a\n" * 1000)
        files.append({"file_path": f"f{index}.txt", "old_string": "a", "new_string": "b"})
    async with _client(workspace) as client:
        for index in range(50):
            await ok(client, "read", file_path=f"f{index}.txt", offset=1, limit=5)
        for one in files:
            one["replace_all"] = True
        result = await client.call_tool("edit", {"files": files})
    assert not result.is_error, text_of(result)[:300]
    structured = result.structured_content
    assert isinstance(structured, dict)
    assert sum(len(one["lines"]) for one in structured["files"]) <= 1000
    assert len(json.dumps(structured)) <= 250_000


async def test_read_many_s_structured_names_are_cut_as_a_call_s_are(workspace: Path) -> None:
    # Each entry's file_path came back whole in the structured content, as sent (round
    # 40): a name past what a call shows whole is cut there too.
    name = "q" * 20_000 + ".txt"
    async with _client(workspace) as client:
        result = await client.call_tool("read_many", {"file_paths": [name, "b.txt"]})
    structured = result.structured_content
    assert isinstance(structured, dict)
    [first, _] = structured["results"]
    assert len(first["file_path"]) < 1_300, len(first["file_path"])
    assert " characters cut] " in first["file_path"]
