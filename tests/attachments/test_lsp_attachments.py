"""readkeeper/attachments and readkeeper/didChangeDiagnostics through the real server."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types

from conftest import Session, start_session
from helpers import eventually, stalled_git


def forward(lsp: Session, path: Path, messages: list[str], version: int | None) -> None:
    item: dict[str, Any] = {
        "uri": path.as_uri(),
        "diagnostics": [
            {
                "range": {"start": {"line": i, "character": 0}, "end": {"line": i, "character": 3}},
                "severity": 1,
                "message": m,
                "source": "mypy",
            }
            for i, m in enumerate(messages)
        ],
    }
    if version is not None:
        item["version"] = version
    lsp.client.protocol.notify("readkeeper/didChangeDiagnostics", {"items": [item]})


async def diagnostics_text(lsp: Session, **params: Any) -> str:
    result = await lsp.client.request(
        "readkeeper/attachments", {"types": ["diagnostics"], **params}
    )
    return "\n".join(a["content"] for a in result["attachments"])


async def test_forwarded_diagnostics_come_back_versioned(lsp: Session, workspace: Path) -> None:
    path = workspace / "mod.py"
    path.write_text("x: int = 'a'\n")
    uri = lsp.open_document(path, "x: int = 'a'\n", version=4)
    forward(lsp, path, ["Incompatible types in assignment"], version=4)

    async def shown() -> str:
        text = await diagnostics_text(lsp)
        return text if "Incompatible" in text else ""

    text = await eventually(shown, "the forwarded diagnostic in attachments")
    assert "mod.py (version 4):\n  1:1 error [mypy]: Incompatible types in assignment" in text

    # The document moves on: results for version 4 are stale, so they are pending.
    lsp.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=5),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="x: int = 1\n")],
        )
    )
    other = workspace / "other.py"
    other.write_text("y = 2\n")
    forward(lsp, other, ["Name is not defined"], version=None)  # a file after it
    pending = await eventually(lambda: _pending(lsp), "the diagnostics shown as pending")
    assert "mod.py: pending (diagnostics were computed for version 4; " in pending
    assert "Incompatible" not in pending
    assert "other.py:\n  1:1 error [mypy]: Name is not defined" in pending


async def _pending(lsp: Session) -> str:
    text = await diagnostics_text(lsp)
    return text if "pending" in text else ""


async def test_new_diagnostics_after_a_read_are_marked_new(lsp: Session, workspace: Path) -> None:
    path = workspace / "mod.py"
    path.write_text("a = 1\n")
    forward(lsp, path, ["pre-existing"], version=None)

    async def old_one() -> str:
        text = await diagnostics_text(lsp, session="chat")
        return text if "pre-existing" in text else ""

    await eventually(old_one, "the pre-existing diagnostic in attachments")
    await lsp.read("mod.py", session="chat")
    forward(lsp, path, ["pre-existing", "introduced"], version=None)

    async def new_one() -> str:
        text = await diagnostics_text(lsp, session="chat")
        return text if "introduced" in text else ""

    text = await eventually(new_one, "the new diagnostic in attachments")
    first, second = text.split("Diagnostics:")
    assert "error (new) [mypy]: introduced" in first
    assert "pre-existing" in second


async def test_a_big_diagnostic_log_cannot_crowd_out_a_mention(
    lsp: Session, workspace: Path
) -> None:
    (workspace / "notes.md").write_text("".join(f"- decision {i}\n" for i in range(60)))
    forward(lsp, workspace / "gen.py", [f"E{i:04d} " + "x" * 50 for i in range(260)], None)

    async def everything() -> Any:
        result = await lsp.client.request(
            "readkeeper/attachments", {"mentions": ["notes.md"], "budget_tokens": 1200}
        )
        return (
            result
            if any(a["type"] == "diagnostics" for a in result["attachments"])
            or any(d["type"] == "diagnostics" for d in result["dropped"])
            else None
        )

    result = await eventually(everything, "the diagnostics collected or dropped")
    assert result["used_tokens"] <= 1200
    mention = next(a for a in result["attachments"] if a["type"] == "file")
    assert mention["truncated"] is False
    assert "decision 59" in mention["content"]


async def test_memory_cut_and_stats(lsp: Session, workspace: Path) -> None:
    (workspace / "AGENTS.md").write_text("".join(f"rule {i}\n" for i in range(1, 251)))
    result = await lsp.client.request("readkeeper/attachments", {"types": ["memory"]})
    [memory] = result["attachments"]
    assert memory["truncated"] is True
    note = memory["content"].split("\n")[-1]
    assert note.startswith("[memory file cut: showing 200 of the file's 250 lines")
    stats = await lsp.client.request("readkeeper/stats", {})
    assert stats["total"]["attachments_served"] == 1
    assert stats["total"]["attachments_truncated"] == {"memory": 1}


async def test_bad_attachment_params(lsp: Session) -> None:
    error = await lsp.error("readkeeper/attachments", {"types": ["everything"]})
    assert error.data["kind"] == "bad_params"
    assert error.data["field"] == "types"


async def test_an_edit_result_carries_the_diagnostics_that_follow_it(
    workspace: Path,
) -> None:
    session = await start_session(workspace, settings={"edit_diagnostics_wait_ms": 3000})
    try:
        path = workspace / "calc.py"
        path.write_text("def total(x):\n    return x\n")
        forward(session, path, ["Missing type annotation"], version=None)

        async def seen() -> str:
            text = await diagnostics_text(session)
            return text if "Missing" in text else ""

        await eventually(seen, "the forwarded diagnostic in attachments")
        await session.read("calc.py")

        async def edits_done() -> bool:
            stats = await session.client.request("readkeeper/stats", {"session": ""})
            return bool(stats["session"]["edits"] == 1)

        async def language_server_reacts() -> None:
            # The editor's language server re-checks the file after the edit: once the
            # server counts it done (it takes the diagnostics baseline just before), while
            # the edit's answer waits for the new diagnostics.
            await eventually(edits_done, "the edit to be done")
            forward(session, path, ["Missing type annotation", "Undefined name 'y'"], None)

        reaction = asyncio.create_task(language_server_reacts())
        result = await session.client.request(
            "readkeeper/edit",
            {"file_path": "calc.py", "old_string": "return x", "new_string": "return y"},
        )
        await reaction
        assert result["replacements"] == 1
        diagnostics = result["diagnostics"]
        assert diagnostics["new"] == ["2:1 error (new) [mypy]: Undefined name 'y'"]
        assert diagnostics["existing"] == ["1:1 error [mypy]: Missing type annotation"]
    finally:
        await session.client.close()


async def test_no_report_in_time_is_pending_and_no_reporter_is_silent(workspace: Path) -> None:
    session = await start_session(workspace, settings={"edit_diagnostics_wait_ms": 200})
    try:
        watched, quiet = workspace / "watched.py", workspace / "quiet.txt"
        watched.write_text("a = 1\n")
        quiet.write_text("b = 2\n")
        forward(session, watched, ["something"], version=None)

        async def seen() -> str:
            text = await diagnostics_text(session)
            return text if "something" in text else ""

        await eventually(seen, "the forwarded diagnostic in attachments")
        for name in ("watched.py", "quiet.txt"):
            await session.read(name)
        pending = await session.client.request(
            "readkeeper/edit",
            {"file_path": "watched.py", "old_string": "a = 1", "new_string": "a = 3"},
        )
        assert pending["diagnostics"] == "pending"
        silent = await session.client.request(
            "readkeeper/edit",
            {"file_path": "quiet.txt", "old_string": "b = 2", "new_string": "b = 3"},
        )
        assert "diagnostics" not in silent  # nothing reports on this file: no wait at all
    finally:
        await session.client.close()


async def test_a_hung_git_is_reported_and_the_rest_still_comes(workspace: Path) -> None:
    # An object that never finishes reading (as on a stalled network filesystem): a FIFO
    # with no writer blocks whoever opens it.
    restore = stalled_git(workspace)
    (workspace / "AGENTS.md").write_text("Be brief.\n")
    # git's own bound is what is tested; the bound of every source (3 s by default), which
    # a loaded machine can outlast, would report git as "timed out" instead.
    settings = {"git_timeout_ms": 300, "attachments_timeout_ms": 60_000}
    session = await start_session(workspace, settings=settings)
    try:
        result = await session.client.request("readkeeper/attachments", {})
        # (A watcher still being set up is said among the changes: watch/blind.py.)
        kinds = [a["type"] for a in result["attachments"] if a["source"] != "watcher"]
        assert kinds == ["memory", "environment"]
        [dropped] = result["dropped"]
        assert dropped["type"] == "git_status"
        # Waited for git's own bound, then named: the FIFO object (gitstatus_stalls.py).
        assert dropped["reason"].startswith("corrupt: git status could not read the ")
        assert "is a named pipe (FIFO)" in dropped["reason"]
        # The stuck reader was ended: once the object is readable, the status comes. Each
        # status call's 0.3 s counts a new reader's start, which a loaded machine can
        # outlast call after call: from here git gets a bound such a machine keeps.
        restore()
        session.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(
                settings={"readkeeper": {**settings, "git_timeout_ms": 30_000}}
            )
        )

        async def status() -> str:
            again = await session.client.request(
                "readkeeper/attachments", {"types": ["git_status"]}
            )
            return "".join(a["content"] for a in again["attachments"])

        # (A new reader starts first, which on a loaded machine can outlast one call.)
        text = await eventually(status, "the git status once the object is readable")
        assert text.startswith(f"git status of {workspace}: branch ")
    finally:
        await session.client.close()
