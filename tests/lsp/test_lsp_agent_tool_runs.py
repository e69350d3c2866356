"""An LSP client's agent tools (the VS Code extension's readkeeper_read, ...) get a way on
that changes the call just answered (a run of options, hints.again) as that whole tool
call, the request's params kept, its session left out (the extension adds it; no tool
takes it): attack round 31's B4 found "Read fewer lines: offset=1, limit=511." over
LSP, no tool and no file named. Each way on is followed as written. A client without
agent tools (an editor's own code, which reads `next_offset` and `data`, and shows notes
to a person) keeps the run as the core writes it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from conftest import start_session

AGENT_TOOLS = {"read": "readkeeper_read", "grep": "readkeeper_grep"}
_DECODER = json.JSONDecoder()


def _read_call(text: str) -> dict[str, Any]:
    """The params of the first `the readkeeper_read tool with {...}` in `text`."""
    found = re.search(r"the readkeeper_read tool with (?=\{)", text)
    assert found is not None, text
    params, _ = _DECODER.raw_decode(text, found.end())
    assert isinstance(params, dict)
    return params


def _wide(workspace: Path) -> Path:
    words = " ".join(f"w{n}" for n in range(24))
    path = workspace / "-s.py"
    path.write_text("".join(f"x_{i} = '{words}'\n" for i in range(2400)))
    return path


async def test_agent_tools_get_a_run_as_the_whole_tool_call(workspace: Path) -> None:
    path = _wide(workspace)
    session = await start_session(workspace, settings={"agent_tools": AGENT_TOOLS})
    try:
        asked = {"file_path": str(path), "offset": 1, "line_format": "anchors"}
        # A range the caller chose (an offset alone is cut at the cap, not refused).
        ranged = {**asked, "limit": 2000, "session": "chat-1"}
        error = await session.error("readkeeper/read", ranged)
        assert "offset=1" not in error.message, error.message
        fewer = _read_call(error.message)
        assert set(fewer) == {*asked, "limit"}, fewer  # the session left out
        assert {k: fewer[k] for k in asked} == asked, fewer
        shown = await session.read(**{**fewer, "session": "chat-1"})
        assert shown["file"]["num_lines"] == fewer["limit"]
        assert re.match(r"1[a-z]{2}\t", shown["file"]["content"]), shown["file"]["content"][:40]
        # A read cut at its default limit: its note's way on is the same read, on.
        (workspace / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 3001)))
        cut = await session.read(workspace / "long.txt", line_format="anchors")
        note = cut["file"]["note"]
        assert "offset=" not in note, note
        rest = _read_call(note)
        assert rest == {"file_path": str(workspace / "long.txt"), "line_format": "anchors"} | {
            "offset": 2001
        }, rest
        more = await session.read(**rest)
        assert more["file"]["start_line"] == 2001
    finally:
        await session.client.close()


async def test_a_plain_client_keeps_the_run(workspace: Path) -> None:
    path = _wide(workspace)
    session = await start_session(workspace)
    try:
        error = await session.read_error(path, offset=1, limit=2000, line_format="anchors")
        assert re.search(r"offset=1, limit=\d+", error.message), error.message
        assert "readkeeper_read" not in error.message
    finally:
        await session.client.close()
