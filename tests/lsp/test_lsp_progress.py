"""Work-done progress of long readkeeper/* requests, through the real server over LSP: a
PDF's pages drawn, a search, attachments gathered report begin, report and end (with the
client's `workDoneToken`, or a token the server creates); fast work sends none.

"Long" is made deterministic: the tests set `progress_after_ms` to 0 (progress begins at
the work's first step) or to a minute (no request here comes near it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from document_samples import numbered_pdf
from lsprotocol import types

from conftest import Session, start_session
from helpers import eventually
from readkeeper.client import ReadkeeperClient


class ProgressClient(ReadkeeperClient):
    """Records the tokens the server creates and every progress message, by token."""

    def __init__(self) -> None:
        super().__init__()
        self.created: list[Any] = []
        self.by_token: dict[Any, list[Any]] = {}

        @self.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def on_create(client: ProgressClient, params: types.WorkDoneProgressCreateParams) -> None:
            client.created.append(params.token)

        @self.feature(types.PROGRESS)
        def on_progress(client: ProgressClient, params: types.ProgressParams) -> None:
            # The value stays JSON here (LSPAny): {kind, title?, message?, percentage?}.
            client.by_token.setdefault(params.token, []).append(params.value)


async def serving(workspace: Path, after_ms: int) -> tuple[Session, ProgressClient]:
    client = ProgressClient()
    settings = {"progress_after_ms": after_ms, "watch": False}
    session = await start_session(workspace, settings=settings, client=client)
    return session, client


def kinds(values: list[Any]) -> list[str]:
    return [value["kind"] for value in values]


def well_formed(values: list[Any]) -> None:
    """One begin first, one end last, reports between, percentages never going back."""
    assert kinds(values)[0] == "begin", kinds(values)
    assert kinds(values)[-1] == "end", kinds(values)
    assert set(kinds(values)[1:-1]) <= {"report"}, kinds(values)
    shown = [v["percentage"] for v in values if v.get("percentage") is not None]
    assert shown == sorted(shown)
    assert all(0 <= p <= 100 for p in shown)


def tree(workspace: Path, files: int = 30) -> None:
    for n in range(files):
        folder = workspace / f"pkg{n % 5}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{n}.py").write_text(f"VALUE_{n} = {n}  # needle\n" * 20)


async def test_a_grep_with_the_clients_token_reports_begin_report_end(workspace: Path) -> None:
    tree(workspace)
    session, client = await serving(workspace, 0)
    try:
        found = await client.request(
            "readkeeper/grep", {"pattern": "needle", "workDoneToken": "grep-1"}
        )
        assert found["matches"]
        values = await eventually(
            lambda: (v := client.by_token.get("grep-1")) and v[-1]["kind"] == "end" and v,
            "the grep's progress to end",
        )
        well_formed(values)
        assert values[0]["title"] == "readkeeper: searching"
        assert "report" in kinds(values)
        assert "grep-1" not in client.created  # the client's own token: never created
    finally:
        await session.client.close()


async def test_without_a_token_the_server_creates_one_and_begins_after_it(
    workspace: Path,
) -> None:
    tree(workspace)
    session, client = await serving(workspace, 0)
    try:
        await client.request("readkeeper/glob", {"pattern": "**/*.py"})
        await eventually(lambda: client.created, "a token created")
        token = client.created[-1]
        values = await eventually(
            lambda: (v := client.by_token.get(token)) and v[-1]["kind"] == "end" and v,
            "the glob's progress to end",
        )
        well_formed(values)
        assert values[0]["title"] == "readkeeper: finding files"
    finally:
        await session.client.close()


async def test_rendering_pdf_pages_reports_each_page(workspace: Path) -> None:
    (workspace / "doc.pdf").write_bytes(numbered_pdf(4, lines=5))
    session, client = await serving(workspace, 0)
    try:
        result = await client.request(
            "readkeeper/read",
            {"file_path": "doc.pdf", "pages": "1-4", "render": True, "workDoneToken": "pdf"},
        )
        assert result["type"] == "parts"
        values = await eventually(
            lambda: (v := client.by_token.get("pdf")) and v[-1]["kind"] == "end" and v,
            "the render's progress to end",
        )
        well_formed(values)
        drawn = [v["message"] for v in values if v["kind"] in ("begin", "report")]
        assert drawn == [f"page {n} drawn" for n in range(1, 5)]
        assert values[-2]["percentage"] == 100
    finally:
        await session.client.close()


async def test_gathering_attachments_reports_its_phases(workspace: Path) -> None:
    (workspace / "AGENTS.md").write_text("Be brief.\n")
    session, client = await serving(workspace, 0)
    try:
        await client.request("readkeeper/attachments", {"workDoneToken": "ctx"})
        values = await eventually(
            lambda: (v := client.by_token.get("ctx")) and v[-1]["kind"] == "end" and v,
            "the attachments' progress to end",
        )
        well_formed(values)
        assert len(values) == 4  # begin, two reports (three phases), end
    finally:
        await session.client.close()


async def test_work_under_the_threshold_and_work_without_steps_send_none(
    workspace: Path,
) -> None:
    tree(workspace)
    (workspace / "doc.pdf").write_bytes(numbered_pdf(2, lines=5))
    session, client = await serving(workspace, 60_000)
    try:
        await client.request("readkeeper/grep", {"pattern": "needle", "workDoneToken": "g"})
        await client.request(
            "readkeeper/read",
            {"file_path": "doc.pdf", "pages": "1-2", "render": True, "workDoneToken": "p"},
        )
        # A small text read has no long steps: none even with no threshold at all.
        quick, quick_client = await serving(workspace, 0)
        try:
            await quick_client.request(
                "readkeeper/read", {"file_path": "pkg0/mod0.py", "workDoneToken": "r"}
            )
            await quick_client.request("readkeeper/stats", {})  # every earlier step is sent
            assert "r" not in quick_client.by_token
        finally:
            await quick.client.close()
        await client.request("readkeeper/stats", {})
        assert "g" not in client.by_token
        assert "p" not in client.by_token
        assert client.created == []
    finally:
        await session.client.close()


async def test_a_large_outline_reports_its_parse(workspace: Path) -> None:
    source = "".join(f"def handler_{n}(request):\n    return {n}\n\n" for n in range(400))
    (workspace / "big.py").write_text(source)
    session, client = await serving(workspace, 0)
    try:
        result = await client.request(
            "readkeeper/read", {"file_path": "big.py", "workDoneToken": "outline"}
        )
        assert result["type"] == "outline"
        values = await eventually(
            lambda: (v := client.by_token.get("outline")) and v[-1]["kind"] == "end" and v,
            "the outline's progress to end",
        )
        well_formed(values)
        assert values[0]["message"] == f"outlining {(workspace / 'big.py').resolve()}"
    finally:
        await session.client.close()
