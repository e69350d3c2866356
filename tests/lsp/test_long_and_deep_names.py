"""Long and deep names cost what they should (round 43). A readMany entry names a file the
call gave as a call names it, cut past a thousand characters: 100 missing names of 4,000
controls each came back whole over LSP, 2,457,225 characters, each entry saying it was
over the 500,000 characters one answer sends (MCP's read_many cut them already). And
`forget`, which resolves each path it is given, runs off the event loop.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Session


async def test_long_missing_names_are_cut_and_each_refused_for_itself(
    lsp: Session, workspace: Path
) -> None:
    paths = [f"zz{i:03d}" + "\x01" * 4000 + "/x.txt" for i in range(100)]
    answer = await lsp.client.request("readkeeper/readMany", {"file_paths": paths})
    assert len(json.dumps(answer)) < 500_000
    # Each refused for what it is (a name no folder can hold), not for its echo's size.
    said = [entry["error"]["message"] for entry in answer["results"]]
    assert not any("characters one answer sends" in words for words in said), said[0]
    assert all(" characters cut] " in entry["file_path"] for entry in answer["results"])


def test_forget_of_deep_paths_holds_no_other_call(workspace: Path) -> None:
    """Round 43: `forget` ran on the event loop and resolves each path: 1,000 paths 798
    folders deep took 21-25 s, every other call waiting. It runs on the pool now: a
    `stats` sent after it is answered first."""
    from raw_lsp import RawServer

    (workspace / ("deep/" * 300)).mkdir(parents=True)
    paths = ["deep/" * 300 + f"f{i:04d}" for i in range(1_000)]
    server = RawServer()
    try:
        server.initialize(workspace, initializationOptions={"watch": False})
        server.send({"id": 2, "method": "readkeeper/forget", "params": {"paths": paths}})
        server.send({"id": 3, "method": "readkeeper/stats", "params": {}})
        first = server.receive()
        while "id" not in first or first.get("method"):
            first = server.receive()
        assert first["id"] == 3, first
        assert "result" in server.response(2)
    finally:
        server.close()
