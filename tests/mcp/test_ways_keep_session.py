"""A way on that re-asks the call just answered keeps every argument the caller sent,
`session` and `line_format` among them (attack round 32, A5/A11/A20). A too_large
refusal named `the read tool with {"file_path": ..., "offset": 1, "limit": 500}` of a
read made with session "A" and anchors; a read_many entry, a glob or list page and a PDF
refusal dropped the session the same way: followed as written, the rest was read into
the connection's default session. Each way on here is followed as written."""

from __future__ import annotations

import re
from pathlib import Path

from document_samples import image_only_pdf, numbered_pdf
from notebook_cells import numbered_notebook

from mcp_helpers import (
    core_client,
    error_kind,
    mcp_env,
    named_call,
    named_calls,
    ok,
    private_runtime_dir,
    stdio_client,
    text_of,
)
from readkeeper.mcp import tools as mcp_tools


def _small(workspace: Path, **settings: str):  # type: ignore[no-untyped-def]
    env = mcp_env(private_runtime_dir(), **settings)
    return stdio_client(["--root", str(workspace), "--standalone"], env)


async def test_a_too_large_refusal_names_the_same_read_in_ranges(workspace: Path) -> None:
    (workspace / "big.log").write_text("".join(f"line {i}\n" for i in range(1, 3001)))
    async with _small(workspace, READKEEPER_MAX_SIZE_BYTES="4096") as client:
        asked = {"file_path": "big.log", "line_format": "anchors", "session": "A"}
        refusal = await client.call_tool("read", asked)
        assert error_kind(refusal) == "too_large", text_of(refusal)
        way = named_call(text_of(refusal), "read")
        assert {k: way.get(k) for k in asked} == asked, way
        assert set(way) == {*asked, "offset", "limit"}, way
        shown = await ok(client, "read", **way)
        assert re.search(r"^1[a-z]{2}\tline 1$", shown, re.M), shown[:200]


async def test_a_read_many_entry_names_its_read_in_the_same_session(workspace: Path) -> None:
    (workspace / "big.log").write_text("".join(f"row {i}\n" for i in range(1, 3001)))
    async with _small(workspace, READKEEPER_MAX_SIZE_BYTES="4096") as client:
        asked = {"session": "S1", "line_format": "anchors"}
        shown = await ok(client, "read_many", file_paths=["big.log"], **asked)
        way = named_call(shown, "read")
        assert {k: way.get(k) for k in asked} == asked, way
        more = await ok(client, "read", **way)
        assert re.search(r"^1[a-z]{2}\trow 1$", more, re.M), more[:200]


async def test_every_read_a_read_many_names_keeps_the_call_options(workspace: Path) -> None:
    # The header of an entry cut at the default count, its note, and the answer's note
    # for the files over the budget: each names the read of a file with the call's
    # session and line_format (the header and the budget's note named the path alone).
    for name in ("a.log", "b.log"):
        (workspace / name).write_text("".join(f"row {i}\n" for i in range(1, 3001)))
    async with _small(workspace) as client:
        asked = {"session": "S2", "line_format": "anchors"}
        shown = await ok(
            client, "read_many", file_paths=["a.log", "b.log"], budget_tokens=30_000, **asked
        )
        assert "Over budget_tokens" in shown, shown[-400:]
        ways = named_calls(shown, "read")
        assert len(ways) == 3, ways
        for way in ways:
            assert {k: way.get(k) for k in asked} == asked, way
        more = await ok(client, "read", **ways[0])
        assert re.search(r"^2001[a-z]{2}\trow 2001$", more, re.M), more[:200]


async def test_glob_and_list_pages_name_the_same_call_on(workspace: Path) -> None:
    folder = workspace / "d"
    folder.mkdir()
    for i in range(400):
        (folder / f"file_{i:04}_with_a_longer_name.txt").write_text("x\n")
    async with _small(workspace, READKEEPER_MAX_TOKENS="1500") as client:
        for tool, asked in [
            ("glob", {"pattern": "d/*.txt", "session": "G", "exclude": ["*_0001_*"]}),
            ("list", {"path": "d", "session": "G", "depth": 1}),
        ]:
            shown = await ok(client, tool, **asked)
            assert "offset=" not in shown, shown[-300:]
            rest = named_call(shown, tool)
            assert {k: rest.get(k) for k in asked} == asked, (tool, rest)
            assert set(rest) == {*asked, "offset"}, (tool, rest)
            more = await ok(client, tool, **rest)
            assert "file_" in more, more[:200]


async def test_a_pdf_refusal_and_its_pages_name_the_same_read_on(workspace: Path) -> None:
    (workspace / "doc.pdf").write_bytes(numbered_pdf(45, lines=3))
    async with core_client(workspace) as client:
        asked = {"file_path": "doc.pdf", "session": "P"}
        refusal = await client.call_tool("read", asked)
        assert error_kind(refusal) == "pages_required", text_of(refusal)
        first = named_call(text_of(refusal), "read")
        assert first == {**asked, "pages": "1-20"}, first
        shown = await ok(client, "read", **first)
        assert "Page 20 line 0" in shown, shown[-300:]
        # A read that stops before the last page names the rest (round 32, A20).
        rest = named_call(shown.split("Page 1 line 0")[-1], "read")
        assert rest == {**asked, "pages": "21-40"}, rest
        more = await ok(client, "read", **rest)
        assert "Page 21 line 0" in more, more[:300]
        assert "Page 20 line 0" not in more, more[:300]


async def test_a_textless_pdf_names_its_drawing_in_the_same_session(workspace: Path) -> None:
    # "Read them as images" named the read of the file alone: drawn in the default session.
    (workspace / "scan.pdf").write_bytes(image_only_pdf(2))
    async with core_client(workspace) as client:
        asked = {"file_path": "scan.pdf", "session": "P2"}
        refusal = await client.call_tool("read", asked)
        assert error_kind(refusal) == "unsupported", text_of(refusal)
        drawn = named_call(text_of(refusal), "read")
        assert drawn == {**asked, "pages": "1-2", "render": True}, drawn
        shown = await client.call_tool("read", drawn)
        assert not shown.is_error, text_of(shown)
        assert any(b.type == "image" for b in shown.content) or ".png" in text_of(shown)


async def test_a_not_read_edit_names_its_read_in_the_edit_s_session(workspace: Path) -> None:
    # The refusal's "Read it" named the read tool with the file alone: followed, it read
    # into the default session, and the edit in session "E" was refused again, forever.
    (workspace / "a.txt").write_text("one\ntwo\n")
    async with _small(workspace) as client:
        edit = {"file_path": "a.txt", "old_string": "two", "new_string": "2", "session": "E"}
        refused = await client.call_tool("edit", edit)
        assert error_kind(refused) == "not_read", text_of(refused)
        read = named_call(text_of(refused), "read")
        assert read.get("session") == "E", read
        await ok(client, "read", **read)
        await ok(client, "edit", **edit)
    assert (workspace / "a.txt").read_text() == "one\n2\n"


async def test_a_long_session_name_is_repeated_whole(workspace: Path) -> None:
    # A session name may have 256 characters, past the 240 a file name is cut at: a way
    # on that cut it named another session.
    (workspace / "big.log").write_text("".join(f"row {i}\n" for i in range(1, 3001)))
    session = "s" * 120 + "[3 characters cut]" + "é" * 118
    async with _small(workspace) as client:
        shown = await ok(client, "read", file_path="big.log", session=session)
        rest = named_call(shown, "read")
        assert rest.get("session") == session, rest
        more = await ok(client, "read", **rest)
        assert "row 2001" in more, more[:200]
        held = await ok(client, "read", **rest)
        assert held.startswith("file_unchanged"), held[:200]


def test_every_tool_takes_the_session_its_ways_on_name() -> None:
    # hints.for_mcp names every call of a tool in the answered call's session.
    for spec in mcp_tools.TOOLS:
        assert "session" in mcp_tools.input_schema(spec)["properties"], spec.name


async def test_an_option_refused_for_a_kind_keeps_the_others(workspace: Path) -> None:
    # line_format on a notebook named `{"file_path", "offset": 1, "limit": 10}`: its
    # session and include_images dropped (round 33 #4).
    (workspace / "nb.ipynb").write_text(numbered_notebook(30))
    async with _small(workspace) as client:
        asked = {"file_path": "nb.ipynb", "session": "N", "include_images": True}
        refused = await client.call_tool("read", {**asked, "line_format": "anchors"})
        assert error_kind(refused) == "bad_params", text_of(refused)
        cells = named_call(text_of(refused), "read")
        path = cells.pop("file_path")
        assert path.endswith("nb.ipynb"), path
        assert cells == {"session": "N", "include_images": True, "offset": 1, "limit": 10}
        await ok(client, "read", file_path=path, **cells)


async def test_an_attachments_notes_name_their_calls_in_its_session(workspace: Path) -> None:
    # A mention cut by its budget said "Read the rest with the read tool with {...}" and
    # no session: followed, the rest was read into the default session (round 33 #6).
    (workspace / "big.log").write_text("".join(f"row {i}\n" for i in range(1, 3001)))
    async with _small(workspace) as client:
        said = await ok(client, "attachments", session="M", mentions=["big.log"], types=["file"])
        ways = named_calls(said, "read")
        assert ways, said[-600:]
        for way in ways:
            assert way.get("session") == "M", way
        await ok(client, "read", **ways[0])
        held = await ok(client, "read", **ways[0])
        assert held.startswith("file_unchanged"), held[:200]


async def test_a_cut_pdf_read_names_the_drawing_of_its_pages_without_text(workspace: Path) -> None:
    # Cut at 20 pages, each page with no text said `read it as an image with pages="5",
    # render=true` in its block (a bare run: no tool, file or session) and the note named
    # no call for them (round 35, E2). The note names them, drawn, in the session.
    import io

    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for index in range(25):
        data = image_only_pdf(1) if index % 3 == 1 else numbered_pdf(1, lines=3)
        writer.add_page(PdfReader(io.BytesIO(data)).pages[0])
    with (workspace / "mixed.pdf").open("wb") as handle:
        writer.write(handle)
    async with core_client(workspace) as client:
        said = await ok(client, "read", file_path="mixed.pdf", pages="1-25", session="P")
        assert "render=" not in said, said[-600:]
        drawn = [c for c in named_calls(said, "read") if c.get("render") is True]
        assert drawn == [
            {"file_path": "mixed.pdf", "pages": "2,5,8,11,14,17,20", "session": "P", "render": True}
        ], said[-800:]
        pages = await ok(client, "read", **drawn[0])
        assert "rendered to PNG" in pages, pages[:300]
