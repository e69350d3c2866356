"""No request holds the server hostage: a file whose outline or diff is costly (issue 28,
items 5 and 6) is answered within its budget, with a named kind or a view that says
what to read instead, while small reads and other files' change notices go on.

Each test sends the hostile request first and small reads right after it, and checks
behaviour, never time: the first small read is answered before the hostile one, every
small read is answered, the hostile one gets its named answer, and the server is still
up for the next request.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import pytest
from raw_lsp import RawServer

from conftest import Session
from watch_helpers import serving

# Issue 28, item 5: 216 KB on one line, 18,000 functions each inside the last.
NESTED_JS = "function f(){" * 18_000 + "}" * 18_000
# Issue 28, item 6: 40,000 lines of 400 values, rewritten in another order (a minute of
# difflib on the old code).
BEFORE = "".join(f"v{i % 400:03d}\n" for i in range(40_000))
AFTER = "".join(f"v{i * 7 % 400:03d}\n" for i in range(40_000))
SMALL_READS = 8


async def beside_small_reads(lsp: Session, hostile: Awaitable[Any]) -> tuple[Any, list[str]]:
    """Run `hostile` and, once it is sent, a stream of 3-line reads of another file: the
    hostile request's outcome, and the order in which answers came."""
    (lsp.root / "notes.txt").write_text("one\ntwo\nthree\nfour\n")
    await lsp.read("notes.txt", limit=3, session="warm-up")  # the read path is loaded
    order: list[str] = []

    async def run() -> Any:
        try:
            return await hostile
        finally:
            order.append("hostile")

    task = asyncio.create_task(run())
    await asyncio.sleep(0)  # the hostile request goes out first
    for number in range(SMALL_READS):
        small = await lsp.read("notes.txt", limit=3, session=f"small-{number}")
        assert small["file"]["content"] == "     1\tone\n     2\ttwo\n     3\tthree"
        order.append("small")
    return await task, order


async def outcome(request: Awaitable[Any]) -> Any:
    """The result, or the error (a JsonRpcException) the request raised."""
    try:
        return await request
    except Exception as exc:  # the error is the outcome under test
        return exc


async def test_a_deeply_nested_outline_does_not_stall_small_reads(
    lsp: Session, workspace: Path
) -> None:
    (workspace / "deep.js").write_text(NESTED_JS)
    result, order = await beside_small_reads(lsp, lsp.read("deep.js"))
    assert order[0] == "small", order
    assert order.count("small") == SMALL_READS
    # An outline of the first 64 levels, and the read that gets any part.
    assert result["type"] == "outline"
    assert result["file"]["symbols"] <= 64
    assert 'symbol="' in result["file"]["note"]
    # A symbol read of the deepest listed function is its line.
    deepest = ".".join(["f"] * 64)
    symbol = await lsp.read("deep.js", symbol=deepest)
    assert symbol["file"]["start_line"] == 1
    assert (await lsp.read("notes.txt", limit=1, force=True))["file"]["num_lines"] == 1


async def test_a_stale_edit_too_costly_to_diff_says_what_to_read(
    lsp: Session, workspace: Path
) -> None:
    (workspace / "big.txt").write_text(BEFORE)
    await lsp.read("big.txt")
    (workspace / "big.txt").write_text(AFTER)
    edit = lsp.error(
        "readkeeper/edit",
        {"file_path": "big.txt", "old_string": "v000\nv001\n", "new_string": "x\n"},
    )
    error, order = await beside_small_reads(lsp, edit)
    assert order[0] == "small", order
    assert error.data["kind"] == "stale"
    assert "too costly to diff" in error.message
    named = {"file_path": str(workspace / "big.txt"), "offset": 1, "limit": 2000}
    assert f"read them: readkeeper/read {json.dumps(named)}." in error.message
    assert "+v" not in error.message  # no diff, rather than a wrong one
    # The server goes on: the read that was suggested works.
    assert (await lsp.read("big.txt", offset=1, limit=2))["file"]["content"] == (
        "     1\tv000\n     2\tv007"
    )


async def test_a_delta_reread_too_costly_to_diff_is_the_file_itself(
    lsp: Session, workspace: Path
) -> None:
    # A session that wrote the file holds it whole: a re-read after a change is a diff
    # when a diff is worth it (delta.py); this one is too costly to compute.
    await lsp.client.request("readkeeper/write", {"file_path": "big.txt", "content": BEFORE})
    (workspace / "big.txt").write_text(AFTER)
    result, order = await beside_small_reads(lsp, lsp.read("big.txt"))
    assert order[0] == "small", order
    assert result["type"] == "text"
    assert result["file"]["content"].startswith("     1\tv000\n     2\tv007\n")


async def test_a_change_too_costly_to_diff_does_not_hold_back_other_notices(
    workspace: Path,
) -> None:
    (workspace / "big.txt").write_text(BEFORE)
    (workspace / "small.txt").write_text("before\n")
    async with serving(workspace) as w:
        await w.ready()
        await w.read("big.txt")
        await w.read("small.txt")
        (workspace / "big.txt").write_text(AFTER)
        (workspace / "small.txt").write_text("after\n")
        [small] = await w.notice("small.txt")
        assert "+after" in small["diff"]
        [big] = await w.notice("big.txt")
        assert big["truncated"] is True
        assert "too costly to diff" in big["diff"]
        assert "+v" not in big["diff"]
        result = await w.request("readkeeper/read", {"file_path": "small.txt", "force": True})
        assert result["file"]["content"] == "     1\tafter"


async def test_a_pathological_gitignore_does_not_stall_the_watcher_or_reads(
    workspace: Path,
) -> None:
    # Regular expressions that backtrack for minutes on these names, in C, holding the
    # GIL: on the old code the watcher's first walk froze the whole server.
    (workspace / ".gitignore").write_text("*a" * 10 + "b\n" + "/".join(["*a*"] * 4) + "/b\n")
    deep = workspace.joinpath(*["a" * 200] * 4)
    deep.mkdir(parents=True)
    (deep / "c.txt").write_text("deep\n")
    (workspace / "small.txt").write_text("before\n")
    async with serving(workspace) as w:
        result, order = await beside_small_reads(w.session, w.ready())
        assert order.count("small") == SMALL_READS
        assert result["state"] not in ("off", "starting")
        assert "+after" in (await w.change("small.txt", "after\n"))["diff"]


# Under MAX_LINE_PAIRS, so difflib does run: about a second and a half of it each on the
# old code, on the watcher's thread, one after the other.
SLOW_BEFORE = "".join(f"v{i % 400:03d}\n" for i in range(20_000))
SLOW_AFTER = "".join(f"v{i * 7 % 400:03d}\n" for i in range(20_000))
HOSTILE_FILES = 10


async def test_ten_changes_costly_to_diff_do_not_hold_back_an_ordinary_notice(
    workspace: Path,
) -> None:
    hostile = [f"slow{n}.txt" for n in range(HOSTILE_FILES)]
    for name in hostile:
        (workspace / name).write_text(SLOW_BEFORE)
    (workspace / "small.txt").write_text("before\n")
    async with serving(workspace) as w:
        await w.ready()
        for name in ["small.txt", *hostile]:
            await w.read(name)
        (workspace / "small.txt").write_text("after\n")
        for name in hostile:
            (workspace / name).write_text(SLOW_AFTER)
        [small] = await w.notice("small.txt")
        assert "+after" in small["diff"]
        for name in hostile:
            await w.notice(name, timeout=60)

        # The ordinary notice was pushed before any of the costly ones: it never waited.
        def sent_in(name: str) -> int:
            full = str(workspace / name)
            return next(
                index
                for index, notice in enumerate(w.client.notices)
                if any(change["file_path"] == full for change in notice["changes"])
            )

        assert sent_in("small.txt") < min(sent_in(name) for name in hostile)
        # Each costly one says it changed, and the read that shows it; never a wrong diff.
        for name in hostile:
            [pushed] = w.pushed(name)
            assert pushed["truncated"] is True
            assert "+v" not in pushed["diff"]
            assert (
                f'readkeeper/read {{"file_path": "{workspace / name}", "offset": 1'
                in pushed["diff"]
            )
        # readkeeper/changes, under its own budget, tells the agent the same way.
        changes = {c["file_path"]: c for c in await w.changes()}
        assert "+after" in changes[str(workspace / "small.txt")]["diff"]
        for name in hostile:
            change = changes[str(workspace / name)]
            assert change["truncated"] is True
            assert "+v" not in change["diff"]
            assert (
                f'readkeeper/read {{"file_path": "{workspace / name}", "offset": 1'
                in change["diff"]
            )
        result = await w.request("readkeeper/read", {"file_path": "small.txt", "force": True})
        assert result["file"]["content"] == "     1\tafter"


def notebook(cells: list[dict[str, Any]]) -> dict[str, Any]:
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}


def code_cell(number: int, outputs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "cell_type": "code",
        "id": f"c{number}",
        "metadata": {},
        "source": f"x = {number}\n",
        "execution_count": 1,
        "outputs": outputs,
    }


def stream(text: str | list[str]) -> dict[str, Any]:
    return {"output_type": "stream", "name": "stdout", "text": text}


def hostile_notebook(name: str) -> str:
    """The JSON of one of the hostile notebooks below."""
    if name == "lines":  # 150,000 output lines, with terminal colours
        return json.dumps(
            notebook(
                [code_cell(0, [stream([f"{i} \x1b[31mred\x1b[0m\n" for i in range(150_000)])])]
            )
        )
    if name == "outputs":  # one cell, 150,000 outputs of a line each
        outputs = [stream(f"line {i}\n") for i in range(150_000)]
        return json.dumps(notebook([code_cell(0, outputs)]))
    if name == "cells":
        return json.dumps(notebook([code_cell(i, [stream(f"{i}\n")]) for i in range(40_000)]))
    if name == "fifty_mb":  # one output of 50 MB of text
        return json.dumps(notebook([code_cell(0, [stream("y" * 50_000_000)])]))
    if name == "deep_metadata":  # metadata nested deeper than any notebook is
        deep = '{"a":' * 100_000 + "1" + "}" * 100_000
        return json.dumps(notebook([])).replace('"metadata": {}', f'"metadata": {deep}')
    assert name == "png_blob"  # 30 MB of base64 that says it is a PNG, and is not
    blob = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 117_188).decode()
    data = {"image/png": blob, "text/plain": "<Figure>"}
    output = {"output_type": "display_data", "metadata": {}, "data": data}
    return json.dumps(notebook([code_cell(0, [output])]))


@pytest.mark.parametrize(
    "name", ["lines", "outputs", "cells", "fifty_mb", "deep_metadata", "png_blob"]
)
async def test_a_hostile_notebook_answers_its_kind_while_small_reads_go_on(
    lsp: Session, workspace: Path, name: str
) -> None:
    (workspace / "nb.ipynb").write_text(hostile_notebook(name))
    read = lsp.read("nb.ipynb", include_images=name == "png_blob")
    result, order = await beside_small_reads(lsp, outcome(read))
    if name != "deep_metadata":  # refused before any work: it may well come first
        assert order[0] == "small", order
    assert order.count("small") == SMALL_READS
    if name == "deep_metadata":  # no notebook: shown as its text, within the cap, to repair
        assert result["type"] == "text", result
        assert "nested too deeply" in result["file"]["note"]
        assert result["file"]["tokens"] <= 25_000
        return
    assert result["type"] == "notebook", result
    notebook_file = result["file"]
    assert notebook_file["tokens"] <= 25_000
    if name == "cells":
        assert notebook_file["total_cells"] == 40_000
        assert notebook_file["partial"] is True
        offset = notebook_file["next_offset"]
        assert f"Continue with offset={offset}." in notebook_file["note"]
        assert (await lsp.read("nb.ipynb", offset=offset, limit=1))["file"]["cells"][0][
            "cell_id"
        ] == f"c{offset - 1}"
        return
    [cell] = notebook_file["cells"]
    if name == "outputs":  # as many outputs as fit, and how many more there are
        shown = len(cell["outputs"])
        assert 100 < shown < 150_000
        assert cell["outputs"][-1]["text"] == f"line {shown - 1}\n"
        assert f"Outputs 1-{shown} of 150,000 shown" in cell["note"]
        assert notebook_file["partial"] is True  # was false (attack round 22)
        return
    [output] = cell["outputs"]
    if name == "png_blob":
        [image] = output["images"]
        assert image["bytes"] > 30_000_000
        assert image.get("base64") is None  # not an image at all: never decoded as one
        assert output["text"] == "<Figure>"
        return
    assert "1 output was cut to 2,000 characters." in notebook_file["note"]
    assert "characters from the middle" in output["note"]
    assert "\x1b" not in output["text"]


@pytest.mark.parametrize("case", ["outline", "delta"])
def test_a_read_that_turns_costly_leaves_the_event_loop(workspace: Path, case: str) -> None:
    # Both look like quick reads (a text file within the caps, by its lines), answered on
    # the event loop; one turns into an outline, the other into a diff. Sent back to back
    # with a 3-line read, the small read's answer must come first: the costly step runs on
    # a worker thread while the loop answers.
    (workspace / "notes.txt").write_text("one\ntwo\nthree\nfour\n")
    server = RawServer()
    try:
        server.initialize(workspace)
        small = {"file_path": "notes.txt", "limit": 3, "force": True}
        server.request("warm-up", "readkeeper/read", {**small, "estimate": True})
        if case == "outline":
            (workspace / "deep.js").write_text(NESTED_JS)
            hostile = {"file_path": "deep.js"}
        else:
            write = {"file_path": "big.txt", "content": SLOW_BEFORE}
            server.request("write", "readkeeper/write", write)
            (workspace / "big.txt").write_text(SLOW_AFTER)
            hostile = {"file_path": "big.txt"}
        server.send({"id": "hostile", "method": "readkeeper/read", "params": hostile})
        server.send({"id": "small", "method": "readkeeper/read", "params": small})
        first = server.response()
        second = server.response()
        assert [first["id"], second["id"]] == ["small", "hostile"]
        assert first["result"]["file"]["num_lines"] == 3
        assert second["result"]["type"] == ("outline" if case == "outline" else "text")
    finally:
        server.close()
